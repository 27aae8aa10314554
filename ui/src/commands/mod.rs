//! One module per subcommand of `tether`. A command parses its arguments,
//! builds a session and runs it; it may use every layer below it, but never
//! another command (what two commands share lives here or below).

pub mod attach;
pub mod check;
pub mod console;
pub mod hook;
pub mod mcp;
pub mod policy;
pub mod replay;
pub mod send;
pub mod serve;

/// Exit code for expectations that failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for bad input.
pub const EXIT_BAD_INPUT: u8 = 2;

/// Logs to `--log-dir` (or the default); keep the guard alive while running.
pub fn start_logging(log_dir: Option<&std::path::Path>) -> anyhow::Result<tracing_appender::non_blocking::WorkerGuard> {
    let dir = log_dir.map_or_else(crate::tui::terminal::default_log_dir, std::path::Path::to_path_buf);
    crate::tui::terminal::init_logging(&dir)
}
