//! The console's journal file: append-only JSON lines, mode 0600.

use std::path::Path;

use tether_tools::journal::JournalSink;
use tokio::fs::{File, OpenOptions};

/// Opens (or creates) a journal for appending. On Unix the file is created
/// with mode 0600 and an existing one is narrowed to 0600.
pub async fn open(path: &Path) -> std::io::Result<JournalSink<File>> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    options.mode(0o600);
    let file = options.open(path).await?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600)).await?;
    }
    Ok(JournalSink::new(file))
}
