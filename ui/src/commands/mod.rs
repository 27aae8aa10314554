//! One module per subcommand of `tether`. A command parses its arguments,
//! builds a session and runs it; it may use every layer below it, but never
//! another command (what two commands share lives here or below).

pub mod attach;
pub mod check;
pub mod console;
pub mod explain;
pub mod hook;
pub mod mcp;
pub mod policy;
pub mod replay;
pub mod send;
pub mod serve;
pub mod web;

/// Exit code for expectations that failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for bad input.
pub const EXIT_BAD_INPUT: u8 = 2;

/// What a command says while and after it changes files: a reader that
/// went away (`… | head -1`) is no failure, the rest is dropped unsaid, and
/// the change goes on to its end.
pub struct UnlessClosed<'a> {
    inner: &'a mut dyn std::io::Write,
    closed: bool,
}

impl<'a> UnlessClosed<'a> {
    /// Writes to `inner` until its reader is gone.
    pub fn new(inner: &'a mut dyn std::io::Write) -> Self {
        Self { inner, closed: false }
    }

    fn unless_closed(&mut self, result: std::io::Result<usize>, len: usize) -> std::io::Result<usize> {
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(len)
            }
            other => other,
        }
    }
}

impl std::io::Write for UnlessClosed<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.unless_closed(result, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush().map(|()| 0);
        self.unless_closed(result, 0).map(|_| ())
    }
}

/// Logs to `--log-dir` (or the default); keep the guard alive while running.
pub fn start_logging(log_dir: Option<&std::path::Path>) -> anyhow::Result<tracing_appender::non_blocking::WorkerGuard> {
    let dir = log_dir.map_or_else(crate::tui::terminal::default_log_dir, std::path::Path::to_path_buf);
    crate::tui::terminal::init_logging(&dir)
}
