//! A stdio gateway the console hosts (issue 36).
//!
//! `tether mcp proxy` sits between a client and its server; asking the
//! console about each call cost it two round trips between processes on
//! top of its own two hops (client → gateway → console → gateway → server
//! and back the same way). When the console runs, the proxy starts its
//! servers as before (in the agent's environment and directory), then
//! hands the console its own stdin and stdout and each server's pipes
//! (`mcp/host`, the descriptors sent along with the request, `SCM_RIGHTS`)
//! and waits. The console runs the very same gateway on them, in its own
//! process, its session on the console through memory instead of a socket:
//! client → console → server and back, the hops of any process in between.
//!
//! Fail closed: the proxy holds on to nothing it could serve with. When the
//! hosted session ends (the client went away) or the console does, the
//! console's end of the proxy's connection closes; the proxy then ends its
//! servers the MCP way and exits, and the client sees its server gone. A
//! console that does not host (one from before `mcp/host`), stdio that is
//! neither a pipe nor a socket, a server over HTTP, or `--no-host`: the
//! proxy runs the gateway itself, as before. A console that takes the
//! request but does not answer it (10 s) is neither trusted nor raced: the
//! proxy drops the connection (which ends whatever the console started),
//! ends its servers and exits.

use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileTypeExt as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;
use tokio_util::sync::CancellationToken;

use super::gateway::{Gateway, GatewayOptions, HostedBy, Naming, ServerSpec};
use super::upstream::{GRACE, server_command};
use crate::agents::link::{Link, protocol, quiet};
use crate::files::mcp_servers::{McpServer, Transport};

/// The method that hands a gateway to the console.
pub const METHOD: &str = "mcp/host";

/// How long the proxy waits for the console to take its gateway.
const ANSWER: Duration = Duration::from_secs(10);

/// What `mcp/host` carries besides the descriptors: the client's stdin and
/// stdout, then each server's stdin and stdout, in this order.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    pub servers: Vec<HostedServer>,
    /// `<server>__<tool>` names (`tether mcp serve`), or the server's own.
    pub prefixed: bool,
    /// Where the proxy runs: path rules judge the servers' calls from here.
    pub cwd: Option<String>,
    /// The proxy's process: the session is told apart by it.
    pub pid: u32,
    /// The servers whose annotations the proxy's `--policy` trusts (the
    /// console's own policy decides the calls).
    #[serde(default)]
    pub trust_annotations: Vec<String>,
}

/// One server the proxy started.
#[derive(Debug, Serialize, Deserialize)]
pub struct HostedServer {
    pub name: String,
    pub command: Vec<String>,
    pub pins: PathBuf,
}

/// What a console sets as its link's `mcp_host` to host gateways.
pub fn handler() -> crate::agents::link::HostHandler {
    Arc::new(start)
}

/// The console's side: checks a hand-over and starts serving it on the
/// current runtime (the link's); the proxy's connection is closed (`stop`)
/// when the gateway's client goes away.
///
/// # Errors
/// A request that does not say what it hands over, or descriptors that do
/// not match it; they are closed, and the proxy serves its client itself.
pub fn start(link: &Arc<Link>, params: Value, fds: Vec<OwnedFd>, stop: CancellationToken) -> Result<Value, String> {
    let request: Request = serde_json::from_value(params).map_err(|e| format!("invalid params: {e}"))?;
    let expected = 2 + 2 * request.servers.len();
    if request.servers.is_empty() || fds.len() != expected {
        return Err(format!(
            "expected {expected} descriptors (the client's stdin and stdout, then each server's), got {}",
            fds.len()
        ));
    }
    let mut fds = fds.into_iter();
    let (Some(input), Some(output)) = (fds.next(), fds.next()) else {
        return Err("the client's stdio is missing".into());
    };
    let mut pipes = Vec::new();
    while let (Some(stdin), Some(stdout)) = (fds.next(), fds.next()) {
        pipes.push(Some((stdin, stdout)));
    }
    let hosted = Arc::new(HostedBy::new(
        Arc::clone(link),
        stop.clone(),
        request.cwd,
        request.pid,
        pipes,
    ));
    let servers = request
        .servers
        .into_iter()
        .map(|s| ServerSpec {
            server: McpServer::stdio(s.name, s.command),
            pins: s.pins,
        })
        .collect();
    let options = GatewayOptions {
        servers,
        naming: if request.prefixed {
            Naming::Prefixed
        } else {
            Naming::Original
        },
        socket: PathBuf::new(),
        policy: Some(crate::files::policy::Policy {
            trust_annotations: request.trust_annotations,
            ..Default::default()
        }),
        hosted: Some(hosted),
        no_host: true,
    };
    tracing::info!(proxy = request.pid, "hosting an MCP gateway");
    tokio::spawn(async move {
        match super::stdio::of(input, output) {
            Ok(stdio) => {
                if let Err(error) =
                    super::serve_client(Gateway::new(options), stdio, stop.clone(), "its proxy went away").await
                {
                    tracing::warn!(%error, proxy = request.pid, "a hosted MCP gateway ended");
                }
            }
            Err(error) => tracing::warn!(%error, "the client's stdio handed over could not be used"),
        }
        tracing::info!(proxy = request.pid, "a hosted MCP gateway's session ended");
        stop.cancel();
    });
    Ok(json!({"hosted": true}))
}

/// The proxy's side, once the console took its gateway.
pub enum Handed {
    Hosted {
        connection: tokio::net::UnixStream,
        servers: Vec<std::process::Child>,
        /// This process's copies of the servers' pipes: kept while the
        /// console serves (dropping them changes nothing for the servers
        /// then), closed before the servers are ended.
        pipes: Vec<OwnedFd>,
    },
    /// Sent, never answered: neither the console nor this process serves.
    Abandoned,
}

/// A descriptor of this process's that the console can read and write as
/// its own: a pipe or a socket (not a terminal or a file).
fn handable(fd: BorrowedFd<'_>) -> bool {
    let Ok(owned) = fd.try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(owned)
        .metadata()
        .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
}

/// Hands the client's stdio and the servers' to the console, when it runs
/// and hosts gateways; `None` when the proxy serves its client itself.
pub async fn offer(options: &GatewayOptions) -> Option<Handed> {
    let (stdin, stdout) = (std::io::stdin(), std::io::stdout());
    let stdio = [stdin.as_fd(), stdout.as_fd()];
    let stdio_servers = options
        .servers
        .iter()
        .all(|s| matches!(s.server.transport, Transport::Stdio { .. }));
    if options.no_host || !stdio_servers || !stdio.iter().all(|fd| handable(*fd)) || !options.socket.exists() {
        return None;
    }
    let connection = std::os::unix::net::UnixStream::connect(&options.socket).ok()?;
    let mut servers = Vec::new();
    let mut pipes = Vec::new();
    for spec in &options.servers {
        match start_server(&spec.server) {
            Ok((child, stdin, stdout)) => {
                servers.push(child);
                pipes.extend([stdin, stdout]);
            }
            Err(error) => {
                tracing::warn!(%error, server = %spec.server.name, "could not start the server to hand over; serving here");
                end_servers(servers, Vec::new()).await;
                return None;
            }
        }
    }
    let request = Request {
        servers: (options.servers.iter())
            .map(|s| HostedServer {
                name: s.server.name.clone(),
                command: match &s.server.transport {
                    Transport::Stdio { command, .. } => command.clone(),
                    Transport::Http { url, .. } => vec![url.clone()],
                },
                pins: s.pins.clone(),
            })
            .collect(),
        prefixed: options.naming == Naming::Prefixed,
        cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
        pid: std::process::id(),
        trust_annotations: (options.policy.as_ref()).map_or_else(Vec::new, |p| p.trust_annotations.clone()),
    };
    let Ok(params) = serde_json::to_value(&request) else {
        end_servers(servers, pipes).await;
        return None;
    };
    let Ok(mut line) = serde_json::to_vec(&protocol::request(1, METHOD, params)) else {
        end_servers(servers, pipes).await;
        return None;
    };
    line.push(b'\n');
    let fds: Vec<BorrowedFd<'_>> = stdio.into_iter().chain(pipes.iter().map(|p| p.as_fd())).collect();
    let handed = quiet::send_with_fds(&connection, &line, &fds)
        .and_then(|()| connection.set_nonblocking(true))
        .and_then(|()| tokio::net::UnixStream::from_std(connection));
    let mut connection = match handed {
        Ok(connection) => connection,
        Err(error) => {
            tracing::warn!(%error, "could not hand the gateway to the console; serving here");
            end_servers(servers, pipes).await;
            return None;
        }
    };
    match tokio::time::timeout(ANSWER, answer(&mut connection)).await {
        Ok(Ok(())) => {
            tracing::info!("the console hosts this gateway");
            Some(Handed::Hosted {
                connection,
                servers,
                pipes,
            })
        }
        Ok(Err(why)) => {
            tracing::info!("the console does not host this gateway ({why}); serving here");
            end_servers(servers, pipes).await;
            None
        }
        Err(_) => {
            // It may yet take the client's stdio: serving it here too would
            // make two readers of it. The connection dropped ends anything
            // the console started; this process ends too, and the client
            // sees its server gone (fail closed).
            tracing::error!("the console did not answer {METHOD} in {ANSWER:?}; exiting");
            drop(connection);
            end_servers(servers, pipes).await;
            Some(Handed::Abandoned)
        }
    }
}

/// The console's answer to `mcp/host`.
async fn answer(connection: &mut tokio::net::UnixStream) -> Result<(), String> {
    let mut line = String::new();
    tokio::io::BufReader::new(connection)
        .read_line(&mut line)
        .await
        .map_err(|e| e.to_string())?;
    let answer: Value = serde_json::from_str(&line).map_err(|_| "the console closed the connection".to_owned())?;
    match (&answer["result"]["hosted"], answer["error"]["message"].as_str()) {
        (Value::Bool(true), _) => Ok(()),
        (_, Some(message)) => Err(message.to_owned()),
        _ => Err(format!("an answer that says neither: {answer}")),
    }
}

impl Handed {
    /// Waits for the hosted session to end (the console closes the
    /// connection: the client went away, or the console did) or for
    /// `stop`, then ends the servers.
    pub async fn wait(self, stop: CancellationToken) {
        let Self::Hosted {
            mut connection,
            servers,
            pipes,
        } = self
        else {
            return;
        };
        let mut rest = Vec::new();
        tokio::select! {
            _ = tokio::io::AsyncReadExt::read_to_end(&mut connection, &mut rest) => {
                tracing::info!("the hosted session ended");
            }
            () = stop.cancelled() => tracing::info!("told to stop (SIGTERM); the hosted session ends"),
        }
        drop(connection);
        end_servers(servers, pipes).await;
    }
}

/// Starts a stdio server as the gateway would: its stdin and stdout piped,
/// stderr the proxy's, in the proxy's environment and directory.
fn start_server(server: &McpServer) -> std::io::Result<(std::process::Child, OwnedFd, OwnedFd)> {
    let Transport::Stdio { command, env, cwd } = &server.transport else {
        return Err(std::io::Error::other("not a stdio server"));
    };
    let mut cmd = server_command(command, env, cwd.as_deref())?;
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let mut child = cmd.spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other("the server's stdio was not piped"));
    };
    Ok((child, stdin.into(), stdout.into()))
}

/// Ends servers the MCP way: stdin closed (this process's copies of the
/// pipes dropped), then SIGTERM, then SIGKILL, [`GRACE`] apart.
async fn end_servers(mut servers: Vec<std::process::Child>, pipes: Vec<OwnedFd>) {
    drop(pipes);
    for signal in [None, Some(rustix::process::Signal::TERM)] {
        if let Some(signal) = signal {
            for child in &servers {
                if let Some(pid) = i32::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw) {
                    let _ = rustix::process::kill_process(pid, signal);
                }
            }
        }
        let deadline = tokio::time::Instant::now() + GRACE;
        while servers.iter_mut().any(|c| matches!(c.try_wait(), Ok(None))) {
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        servers.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
        if servers.is_empty() {
            return;
        }
    }
    for child in &mut servers {
        let _ = child.kill();
        let _ = child.wait();
    }
}
