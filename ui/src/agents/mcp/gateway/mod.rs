//! The gateway's state: its upstream servers, its session on the console,
//! and every `tools/call` run as a one-call batch through the console's
//! pipeline (or the embedded one, or refused: `calls.rs`). The tool list is in
//! `tools.rs`, the MCP server side in `handler.rs`.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::ServerConfig;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::console::ConsoleLink;
use super::embedded::Embedded;
mod answer;
mod calls;
mod fast;
mod requests;
mod roots;
mod tools;

use super::upstream::{Owners, ProgressRoute, Upstream};
use crate::files::mcp_servers::McpServer;
use crate::files::policy::Policy;
pub use calls::{failure, to_result};
pub(super) use requests::Request;
pub(super) use tools::Listed;

/// How the client sees the upstreams' tools (and prompts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// As the server names them (`tether mcp proxy`: one server).
    Original,
    /// `<server>__<tool>` (`tether mcp serve`: several servers).
    Prefixed,
}

/// One upstream server and where its pins are kept.
#[derive(Clone, Debug)]
pub struct ServerSpec {
    pub server: McpServer,
    pub pins: PathBuf,
}

/// How the gateway runs.
#[derive(Clone)]
pub struct GatewayOptions {
    pub servers: Vec<ServerSpec>,
    pub naming: Naming,
    /// The console's socket.
    pub socket: PathBuf,
    /// Run this policy in the gateway when the console is not running.
    pub policy: Option<Policy>,
    /// Set when the console runs this gateway for a proxy (`host.rs`).
    pub hosted: Option<Arc<HostedBy>>,
    /// A stdio gateway serves its client itself even when the console
    /// could host it (`--no-host`).
    pub no_host: bool,
}

/// What a gateway the console hosts keeps of the proxy that handed it
/// over (`host.rs`).
pub struct HostedBy {
    pub link: Arc<crate::agents::link::Link>,
    /// Fires when the proxy's connection ends.
    pub stop: CancellationToken,
    pub cwd: Option<String>,
    pub pid: u32,
    pipes: Mutex<Vec<Option<(OwnedFd, OwnedFd)>>>,
}

impl HostedBy {
    pub fn new(
        link: Arc<crate::agents::link::Link>,
        stop: CancellationToken,
        cwd: Option<String>,
        pid: u32,
        pipes: Vec<Option<(OwnedFd, OwnedFd)>>,
    ) -> Self {
        Self {
            link,
            stop,
            cwd,
            pid,
            pipes: Mutex::new(pipes),
        }
    }

    /// A server's stdin and stdout, once.
    pub fn take_pipes(&self, server: usize) -> Option<(OwnedFd, OwnedFd)> {
        self.pipes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(server)
            .and_then(Option::take)
    }
}

pub(super) struct Inner {
    pub options: GatewayOptions,
    pub upstreams: OnceLock<Vec<Arc<Upstream>>>,
    pub info: OnceLock<ServerConfig>,
    pub tools: Mutex<Vec<Listed>>,
    /// The tools (server, name) this gateway pinned on first sight: they
    /// stay unpinned for its whole session, though a re-list now finds
    /// their pin (nobody has seen what they are yet).
    pub first_seen: Mutex<std::collections::HashSet<(usize, String)>>,
    pub console: tokio::sync::Mutex<Option<Arc<ConsoleLink>>>,
    pub embedded: OnceLock<Vec<Embedded>>,
    /// Each running call's server, what it forwards, and the client's progress route.
    routes: Mutex<HashMap<String, Route>>,
    /// The arguments a human edited, by call, for the model to be told.
    edits: Mutex<HashMap<String, Value>>,
    /// The client's `tools/call`s taken off its stdio (`fast.rs`), by id.
    taken: Mutex<HashMap<String, CancellationToken>>,
    next_call: AtomicU64,
    pub ready: watch::Sender<bool>,
    pub client: Mutex<Option<rmcp::service::Peer<RoleServer>>>,
    pub label: OnceLock<String>,
    /// The client's first root, the working directory of its calls.
    root: roots::KnownRoot,
    /// Which server owns a resource URI, once looked up.
    pub owners: Arc<Owners>,
    /// This process's gateways in the order they started (one per HTTP session).
    instance: u64,
    /// Whether the last try found no console: its log line is written when
    /// that changes, not at every call made while it is down.
    console_down: std::sync::atomic::AtomicBool,
    /// The client's stdio, for a stdio gateway.
    pub client_sink: OnceLock<super::lines::LineSink>,
    /// Where the gateway runs (it never moves): path rules judge an
    /// upstream's calls from here when the client names no root.
    cwd: Option<String>,
}

/// Where a running call goes: its server, what it forwards there, and the
/// client's progress route.
type Route = (usize, Request, Option<ProgressRoute>);

static INSTANCES: AtomicU64 = AtomicU64::new(1);

/// A gateway that goes away (its HTTP client session ended) leaves the
/// console: its agent session closes with it.
impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(link) = self.console.get_mut().take() {
            link.closed.cancel();
        }
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The MCP server the client talks to.
#[derive(Clone)]
pub struct Gateway(pub(super) Arc<Inner>);

impl Gateway {
    pub fn new(options: GatewayOptions) -> Self {
        Self(Arc::new(Inner {
            upstreams: OnceLock::new(),
            info: OnceLock::new(),
            tools: Mutex::default(),
            first_seen: Mutex::default(),
            console: tokio::sync::Mutex::new(None),
            embedded: OnceLock::new(),
            routes: Mutex::default(),
            edits: Mutex::default(),
            taken: Mutex::default(),
            root: roots::KnownRoot::default(),
            next_call: AtomicU64::new(1),
            ready: watch::channel(false).0,
            client: Mutex::new(None),
            label: OnceLock::new(),
            owners: Arc::default(),
            instance: INSTANCES.fetch_add(1, Ordering::Relaxed),
            console_down: std::sync::atomic::AtomicBool::new(false),
            client_sink: OnceLock::new(),
            cwd: match &options.hosted {
                Some(hosted) => hosted.cwd.clone(),
                None => std::env::current_dir().ok().map(|dir| dir.display().to_string()),
            },
            options,
        }))
    }

    /// What tells this gateway's console session apart: the process, and
    /// which of its gateways (`tether mcp serve --http` runs one per client
    /// session, each its own agent session in the console).
    pub(super) fn session_suffix(&self) -> String {
        if let Some(hosted) = &self.0.options.hosted {
            return hosted.pid.to_string(); // the proxy's: one gateway each
        }
        match self.0.instance {
            1 => std::process::id().to_string(),
            n => format!("{}-{n}", std::process::id()),
        }
    }

    pub(super) fn upstreams(&self) -> Result<&[Arc<Upstream>], McpError> {
        self.0
            .upstreams
            .get()
            .map(Vec::as_slice)
            .ok_or_else(|| McpError::internal_error("the upstream MCP servers are not connected", None))
    }

    pub(super) fn server_name(&self, server: usize) -> &str {
        &self.0.options.servers[server].server.name
    }

    /// The name the client sees for a server's tool or prompt.
    pub(super) fn shown_name(&self, server: usize, name: &str) -> String {
        match self.0.options.naming {
            Naming::Original => name.to_owned(),
            Naming::Prefixed => format!("{}__{name}", self.server_name(server)),
        }
    }

    /// The server and its own name for a name the client used.
    pub(super) fn resolve(&self, shown: &str) -> Option<(usize, String)> {
        match self.0.options.naming {
            Naming::Original => Some((0, shown.to_owned())),
            Naming::Prefixed => {
                let (server, name) = shown.split_once("__")?;
                let index = self.0.options.servers.iter().position(|s| s.server.name == server)?;
                Some((index, name.to_owned()))
            }
        }
    }
}
