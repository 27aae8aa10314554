//! The agent link: agents connect over a local socket, each gets its own
//! scope under the console's root, registers tools whose bodies it runs
//! itself, and executes batches through the console's pipeline. Only the
//! human at the console answers approvals: no method here can.

mod batch;
pub mod client;
mod connection;
mod hook_session;
pub mod protocol;
pub mod socket;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tether_tools::journal::JournalSink;
use tether_tools::{AgentPipelineScope, ToolRegistry};
use tokio::fs::File;
use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;

use crate::session::provenance::DecisionLog;
use crate::tui::app::{AppEvent, AppEventSender};

/// What every connection shares.
pub struct Link {
    pub registry: ToolRegistry,
    /// Every agent's scope is a child of this one.
    pub root: AgentPipelineScope,
    pub log: DecisionLog,
    pub journal: Option<Arc<JournalSink<File>>>,
    /// The console's screen, when there is one.
    pub events: Option<AppEventSender>,
    /// Where headless serve prints a line per outcome.
    pub outcomes: Option<tokio::sync::mpsc::UnboundedSender<serde_json::Value>>,
    agents: AtomicUsize,
    next_batch: AtomicUsize,
    /// Numbers batches an agent did not name.
    next_batch_id: AtomicUsize,
    scopes: std::sync::Mutex<Vec<AgentPipelineScope>>,
    /// Coding-agent sessions seen through `hook/tool_use`, by agent and
    /// session id. A hook runs one process per tool call, so these outlive
    /// connections: they last as long as the console.
    hook_sessions: std::sync::Mutex<std::collections::HashMap<String, HookSession>>,
    our_uid: u32,
}

/// A coding agent's session: its scope and the tools seen so far.
pub(crate) struct HookSession {
    pub(crate) scope: AgentPipelineScope,
    pub(crate) tools: std::collections::HashMap<String, tether_tools::Registration>,
}

impl Link {
    pub fn new(registry: ToolRegistry, log: DecisionLog) -> Self {
        let root = AgentPipelineScope::builder().label("agents").build_root();
        Self {
            registry,
            root,
            log,
            journal: None,
            events: None,
            outcomes: None,
            agents: AtomicUsize::new(0),
            next_batch: AtomicUsize::new(0),
            next_batch_id: AtomicUsize::new(0),
            scopes: std::sync::Mutex::new(Vec::new()),
            hook_sessions: std::sync::Mutex::default(),
            our_uid: socket::our_uid(),
        }
    }

    /// Agents connected now.
    pub fn agents(&self) -> usize {
        self.agents.load(Ordering::SeqCst)
    }

    fn send(&self, event: AppEvent) {
        if let Some(events) = &self.events {
            events.send(event);
        }
    }

    fn scopes_changed(&self, add: Option<&AgentPipelineScope>, remove: Option<&AgentPipelineScope>) {
        let mut scopes = self.scopes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(scope) = add {
            scopes.push(scope.clone());
        }
        if let Some(scope) = remove {
            scopes.retain(|s| s != scope);
        }
        let mut all = vec![self.root.clone()];
        all.extend(scopes.iter().cloned());
        self.send(AppEvent::ScopesChanged(all));
    }
}

/// Accepts agents until `stop` fires. Peers of another user are refused.
pub async fn serve(link: Arc<Link>, listener: UnixListener, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "accepting an agent failed");
                continue;
            }
        };
        match stream.peer_cred() {
            Ok(cred) if socket::peer_allowed(cred.uid(), link.our_uid) => {}
            Ok(cred) => {
                tracing::warn!(peer_uid = cred.uid(), "refused an agent of another user");
                link.send(AppEvent::Note(format!("refused a connection from uid {}", cred.uid())));
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, "could not read the peer's credentials; refused");
                continue;
            }
        }
        let link = Arc::clone(&link);
        let stop = stop.child_token();
        tokio::spawn(async move { connection::handle(link, stream, stop).await });
    }
}

/// Runs [`serve`] on a thread of its own with a single-threaded runtime, and
/// returns at once. Every connection, batch and call-back of the link then
/// lives on one thread: a remote call's hops between reader, batch and
/// writer are plain task switches, not cross-thread wake-ups, which is most
/// of a round trip's cost on a small machine.
///
/// # Errors
/// When the listener cannot be moved to the new runtime or the thread
/// cannot start.
pub fn serve_on_own_thread(
    link: Arc<Link>,
    listener: UnixListener,
    stop: CancellationToken,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let listener = listener.into_std()?;
    let handle = std::thread::Builder::new().name("tether-link".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(error) => {
                tracing::error!(%error, "the agent link's runtime did not start");
                return;
            }
        };
        runtime.block_on(async move {
            match UnixListener::from_std(listener) {
                Ok(listener) => serve(link, listener, stop).await,
                Err(error) => tracing::error!(%error, "the agent link's socket could not be used"),
            }
        });
    })?;
    Ok(handle)
}
