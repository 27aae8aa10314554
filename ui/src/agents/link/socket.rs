//! Where the agent socket lives, and taking it over safely: a per-user
//! directory (0700), the socket (0600), a stale socket from a crashed console
//! replaced, a live one never stolen.

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use tokio::net::{UnixListener, UnixStream};

/// What an agent is told when no console listens: the same words from
/// `tether send`, the hook bridges and the MCP gateway.
pub const NOT_RUNNING: &str = "the Tether console is not running (start `tether serve`)";

/// The longest socket path the kernel takes: `sun_path` holds 108 bytes,
/// the last one its terminating NUL.
pub const MAX_PATH_BYTES: usize = 107;

/// Why `path` cannot be a socket, in words a user can act on, when it is
/// too long (the kernel's own words are "path must be shorter than SUN_LEN").
pub fn too_long(path: &Path) -> Option<String> {
    let len = path.as_os_str().len();
    (len > MAX_PATH_BYTES).then(|| {
        format!(
            "the socket path {} is {len} bytes long, and a Unix socket path can be at most {MAX_PATH_BYTES}: \
             pass a shorter --socket (or point TMPDIR at a shorter directory)",
            path.display()
        )
    })
}

/// Why the console could not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreachable {
    /// Nothing listens at this path: [`NOT_RUNNING`].
    NotRunning(PathBuf),
    /// Anything else, in words for the user.
    Other(String),
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreachable::NotRunning(path) => write!(f, "{NOT_RUNNING}: nothing listens on {}", path.display()),
            Unreachable::Other(why) => f.write_str(why),
        }
    }
}

/// Connects to the console, or says why not.
///
/// # Errors
/// [`Unreachable`].
pub async fn connect(path: &Path) -> Result<UnixStream, Unreachable> {
    if let Some(why) = too_long(path) {
        return Err(Unreachable::Other(why));
    }
    UnixStream::connect(path).await.map_err(|error| match error.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => Unreachable::NotRunning(path.to_path_buf()),
        _ => Unreachable::Other(format!(
            "cannot reach the Tether console at {}: {error}",
            path.display()
        )),
    })
}

/// The socket a console listens on and a client looks for when none is
/// given: derived from the user id alone, so every process of one user
/// finds the same console whatever its environment holds. Agents start
/// their hooks and MCP servers with less of it (Codex drops
/// `XDG_RUNTIME_DIR`), so `XDG_RUNTIME_DIR` is not read.
///
/// `/run/user/UID/tether/console.sock` when `/run/user/UID` is a directory
/// of this user's (the runtime directory systemd makes, which is what
/// `XDG_RUNTIME_DIR` names where it is set); otherwise
/// `<temp dir>/tether-UID/console.sock`.
pub fn default_path() -> PathBuf {
    let uid = our_uid();
    let runtime = PathBuf::from(format!("/run/user/{uid}"));
    let own_runtime = std::fs::symlink_metadata(&runtime).is_ok_and(|m| m.is_dir() && m.uid() == uid);
    default_path_for(uid, own_runtime.then_some(runtime.as_path()), &std::env::temp_dir())
}

/// [`default_path`] for user `uid`, whose own runtime directory is
/// `runtime` (when there is one), with `temp` the temp dir.
fn default_path_for(uid: u32, runtime: Option<&Path>, temp: &Path) -> PathBuf {
    match runtime {
        Some(dir) => dir.join("tether").join("console.sock"),
        None => temp.join(format!("tether-{uid}")).join("console.sock"),
    }
}

/// Our user id, as the owner of a file we create.
pub fn our_uid() -> u32 {
    // The owner of our own process directory is our effective uid; this
    // avoids a libc dependency for one call.
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// Whether a peer may talk to the console: only our own user.
pub fn peer_allowed(peer_uid: u32, our_uid: u32) -> bool {
    peer_uid == our_uid
}

/// Makes (or checks) the socket's directory: ours, and 0700.
fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    if meta.uid() != our_uid() {
        bail!(
            "{} belongs to another user (uid {}); refusing to use it",
            dir.display(),
            meta.uid()
        );
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

/// Binds the socket. A leftover file nobody answers on is removed first; a
/// socket a live console answers on is left alone and reported.
pub async fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    if let Some(why) = too_long(path) {
        bail!(why);
    }
    if let Some(dir) = path.parent() {
        prepare_dir(dir)?;
    }
    if path.exists() {
        match UnixStream::connect(path).await {
            Ok(_) => bail!("another console is already listening on {}", path.display()),
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused || e.kind() == io::ErrorKind::NotFound => {
                tracing::warn!(path = %path.display(), "removing a stale socket left by a console that is gone");
                std::fs::remove_file(path).with_context(|| format!("removing the stale {}", path.display()))?;
            }
            Err(e) => return Err(e).with_context(|| format!("checking {}", path.display())),
        }
    }
    let listener = UnixListener::bind(path).with_context(|| format!("binding {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_path_is_the_users_runtime_dir_or_a_per_uid_temp_dir() {
        let runtime = Path::new("/run/user/1000");
        assert_eq!(
            default_path_for(1000, Some(runtime), Path::new("/tmp")),
            Path::new("/run/user/1000/tether/console.sock")
        );
        assert_eq!(
            default_path_for(1000, None, Path::new("/tmp")),
            Path::new("/tmp/tether-1000/console.sock")
        );
    }
}
