//! `tether send BATCH.json`: send a batch to a running console as an agent would.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::agents::link::{client, socket};

pub async fn run(batch: &Path, socket: Option<&PathBuf>, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let socket = socket.cloned().unwrap_or_else(socket::default_path);
    client::send(&socket, batch, out).await
}
