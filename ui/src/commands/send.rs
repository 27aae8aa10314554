//! `tether send BATCH.json`: send a batch to a running console as an agent
//! would, print the outcomes, and exit with what became of the calls.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{EXIT_BAD_INPUT, EXIT_FAILED};
use crate::agents::link::client::{self, SendError};
use crate::agents::link::socket;

/// Exit code when no console could be reached, or it refused or broke off the batch.
pub const EXIT_NO_CONSOLE: u8 = 3;

/// 0: every call succeeded; 1: at least one did not (its outcome says
/// why); 2: bad input (a batch the console refused as malformed too); 3: no
/// console, or it failed or broke off the batch.
pub async fn run(batch: &Path, socket: Option<&PathBuf>, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let socket = socket.cloned().unwrap_or_else(socket::default_path);
    let mut escaped = EscapedLines { out, line: Vec::new() };
    let sent = client::send(&socket, batch, &mut escaped).await;
    escaped.flush()?;
    let (code, why) = match sent {
        Ok(sent) if sent.failed == 0 => return Ok(ExitCode::SUCCESS),
        Ok(_) => return Ok(ExitCode::from(EXIT_FAILED)),
        Err(SendError::BadBatch(error)) => (EXIT_BAD_INPUT, format!("{error:#}")),
        Err(SendError::NoConsole(why)) => (EXIT_NO_CONSOLE, why),
        Err(SendError::Console(error)) => (EXIT_NO_CONSOLE, format!("{error:#}")),
    };
    out.flush()?;
    writeln!(std::io::stderr(), "tether: {why}")?;
    Ok(ExitCode::from(code))
}

/// The outcome lines as the screen would show what a model wrote: every
/// hostile character (a bidi override, a zero-width space) escaped as JSON
/// (`\u202e`), so each line still reads back as the same value.
struct EscapedLines<'a> {
    out: &'a mut dyn Write,
    line: Vec<u8>,
}

impl EscapedLines<'_> {
    fn write_line(&mut self) -> std::io::Result<()> {
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        let (text, newline) = match line.strip_suffix('\n') {
            Some(text) => (text.to_owned(), "\n"),
            None => (line, ""),
        };
        write!(self.out, "{}{newline}", crate::sanitize::json_text(text))
    }
}

impl Write for EscapedLines<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &byte in buf {
            self.line.push(byte);
            if byte == b'\n' {
                self.write_line()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.line.is_empty() {
            self.write_line()?;
        }
        self.out.flush()
    }
}
