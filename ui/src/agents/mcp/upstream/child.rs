//! A stdio server's process and pipes as rmcp's transport, with the lines
//! about the calls sent past rmcp (`raw.rs`) taken out as they are read,
//! and the MCP way of ending the server.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::process::Child;

use super::super::lines::{LineSink, SinkWriter, Tap};
use super::raw::Raw;

/// How long a server has to exit once its stdin is closed, and again once
/// told to (SIGTERM), before it is killed (as rmcp's own child transport).
pub const GRACE: Duration = Duration::from_secs(3);

/// The command that starts a stdio server: `command`'s program and
/// arguments, `env` on top of this process's environment, in `cwd` when
/// one is given (the gateway's, or the proxy's that hands it over).
///
/// # Errors
/// When `command` names no program.
pub fn server_command(
    command: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
) -> std::io::Result<std::process::Command> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| std::io::Error::other("no upstream command"))?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).envs(env);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    Ok(cmd)
}

/// What a server writes.
type ServerOut = Box<dyn tokio::io::AsyncRead + Send + Unpin>;

/// The server's stdio as rmcp's transport, the raw calls' lines taken out.
pub struct ChildTransport {
    inner: AsyncRwTransport<RoleClient, tokio::io::ReadHalf<tokio::io::SimplexStream>, SinkWriter>,
    child: Option<Child>,
    to_server: LineSink,
}

impl ChildTransport {
    /// Starts `command` with piped stdin and stdout (stderr as the
    /// gateway's). Needs the runtime.
    ///
    /// # Errors
    /// When the command cannot start.
    pub fn spawn(mut command: tokio::process::Command) -> std::io::Result<(Self, Arc<Raw>)> {
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit());
        // Not killed when dropped: a gateway that exits closes the server's
        // stdin by exiting, which is how MCP ends a stdio server (as
        // before); `close` does the rest when the session ends first.
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("the server's stdio was not piped"));
        };
        let (mut transport, raw) = Self::over(LineSink::start(stdin), Box::new(stdout));
        transport.child = Some(child);
        Ok((transport, raw))
    }

    /// A server another process started (the gateway's proxy, which handed
    /// its pipes to the console hosting the gateway): closing closes its
    /// stdin, and the process that started it ends it.
    ///
    /// # Errors
    /// When a descriptor is not the pipe end it should be.
    pub fn of_pipes(stdin: OwnedFd, stdout: OwnedFd) -> std::io::Result<(Self, Arc<Raw>)> {
        let stdin = tokio::net::unix::pipe::Sender::from_owned_fd(stdin)?;
        let stdout = tokio::net::unix::pipe::Receiver::from_owned_fd(stdout)?;
        Ok(Self::over(LineSink::start(stdin), Box::new(stdout)))
    }

    fn over(to_server: LineSink, stdout: ServerOut) -> (Self, Arc<Raw>) {
        let raw = Raw::new(to_server.clone());
        let taker = Arc::clone(&raw);
        let ended = raw.ended.clone();
        // The server's output is read only while the client, once the
        // gateway writes to it, takes what it is sent: a client that stops
        // reading stops the server's output, not the gateway's memory.
        let gate = Arc::clone(&raw);
        let read = Tap::new(stdout, Box::new(move |line| taker.take(line)))
            .on_end(Box::new(move || ended.cancel()))
            .gated(Box::new(move |cx| {
                gate.client.get().map_or(Poll::Ready(()), |client| client.poll_room(cx))
            }))
            .detached();
        let inner = AsyncRwTransport::new(read, to_server.writer());
        (
            Self {
                inner,
                child: None,
                to_server,
            },
            raw,
        )
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    /// The MCP way to end a stdio server: its stdin closed, then SIGTERM,
    /// then SIGKILL, each after [`GRACE`].
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await?;
        self.to_server.close();
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
            return Ok(());
        }
        if let Some(pid) = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
                return Ok(());
            }
        }
        child.kill().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closing the transport ends the server the MCP way: its stdin closed,
    /// and a server that exits on that is not signalled.
    #[tokio::test]
    async fn closing_closes_the_servers_stdin_and_waits_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let done = dir.path().join("saw-the-end");
        let mut command = tokio::process::Command::new("sh");
        command
            .arg("-c")
            .arg(r#"trap 'echo signalled > "$1"; exit 1' TERM; cat > /dev/null; echo eof > "$1""#)
            .arg("sh")
            .arg(&done);
        let (mut transport, _raw) = ChildTransport::spawn(command).unwrap();
        let started = std::time::Instant::now();
        transport.close().await.unwrap();
        assert!(started.elapsed() < GRACE, "closed in {:?}", started.elapsed());
        assert_eq!(std::fs::read_to_string(&done).unwrap(), "eof\n");
    }
}
