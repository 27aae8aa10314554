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
/// why); 2: bad input; 3: no console, or it refused or broke off the batch.
pub async fn run(batch: &Path, socket: Option<&PathBuf>, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let socket = socket.cloned().unwrap_or_else(socket::default_path);
    let (code, why) = match client::send(&socket, batch, out).await {
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
