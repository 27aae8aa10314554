//! What every connection shares: the registry, the agents' root scope, the
//! decision trail, the journal, the screen's channel, and the coding-agent
//! sessions seen through hooks.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use serde_json::Value;
use tether_tools::{AgentPipelineScope, Registration, ToolRegistry};

use super::conn::Conn;
use super::socket;
use crate::session::events::{AppEvent, AppEventSender};
use crate::session::journal::JournalWriter;
use crate::session::provenance::DecisionLog;

/// What every connection shares.
pub struct Link {
    pub registry: ToolRegistry,
    /// Every agent's scope is a child of this one.
    pub root: AgentPipelineScope,
    pub log: DecisionLog,
    pub journal: Option<Arc<JournalWriter>>,
    /// The console's screen, when there is one.
    pub events: Option<AppEventSender>,
    /// Where headless serve prints a line per outcome.
    pub outcomes: Option<tokio::sync::mpsc::UnboundedSender<serde_json::Value>>,
    pub(super) agents: AtomicUsize,
    pub(super) next_batch: AtomicUsize,
    /// Numbers batches an agent did not name.
    pub(super) next_batch_id: AtomicUsize,
    pub(super) scopes: std::sync::Mutex<Vec<AgentPipelineScope>>,
    /// Each open session's scope and its connection, for requests of the
    /// console's own ([`Link::ask_agent`]).
    pub(super) sessions: std::sync::Mutex<Vec<(AgentPipelineScope, std::sync::Weak<Conn>)>>,
    /// Coding-agent sessions seen through `hook/tool_use`, by agent and
    /// session id. A hook runs one process per tool call, so these outlive
    /// connections: they last as long as the console.
    pub(super) hook_sessions: std::sync::Mutex<std::collections::HashMap<String, HookSession>>,
    pub(super) our_uid: u32,
    /// Counts the registry's `tools/change` events, so a connection can
    /// reuse the view it sealed while nothing was registered or disposed.
    pub(super) tools_changed: Arc<AtomicU64>,
    /// Call ids of the batches and hook calls running now, per scope.
    pub(super) in_flight: super::in_flight::InFlight,
    /// Takes a gateway a proxy hands over (`mcp/host`), when this console
    /// hosts them; without it, `mcp/host` is an unknown method and the
    /// proxy serves its client itself.
    pub mcp_host: Option<HostHandler>,
    _watch_tools: Registration,
}

/// Starts serving a gateway handed over with `mcp/host`: `(link, params,
/// the descriptors sent with it, the proxy's connection's end)`; its answer.
pub type HostHandler = Arc<
    dyn Fn(
            &Arc<Link>,
            serde_json::Value,
            Vec<std::os::fd::OwnedFd>,
            tokio_util::sync::CancellationToken,
        ) -> Result<serde_json::Value, String>
        + Send
        + Sync,
>;

/// A coding agent's session: its scope and the tools seen so far.
pub(crate) struct HookSession {
    pub(crate) scope: AgentPipelineScope,
    pub(crate) tools: std::collections::HashMap<String, tether_tools::Registration>,
    /// Calls a human (or the script standing in for one) approved at
    /// PreToolUse, with who it was (`human`, `script`), so the agent's
    /// PermissionRequest for the same call is not asked again (one call, one
    /// question); the most recent few, each used once.
    pub(crate) approved: std::collections::VecDeque<(String, &'static str)>,
    /// The session's own working directory as the agent recorded it when
    /// the session began (Codex: its transcript's `session_meta`): Codex
    /// reports a call's `workdir` as the hook's `cwd`, so that is where a
    /// call runs, and this stays the project it is judged against.
    pub(crate) project: Option<String>,
}

impl Link {
    pub fn new(registry: ToolRegistry, log: DecisionLog) -> Self {
        let root = AgentPipelineScope::builder().label("agents").build_root();
        let tools_changed = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&tools_changed);
        let watch_tools = registry.on_tools_change(move |_| {
            counter.fetch_add(1, Ordering::AcqRel);
        });
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
            sessions: std::sync::Mutex::default(),
            hook_sessions: std::sync::Mutex::default(),
            our_uid: socket::our_uid(),
            tools_changed,
            in_flight: Default::default(),
            mcp_host: None,
            _watch_tools: watch_tools,
        }
    }

    /// Agents connected now.
    pub fn agents(&self) -> usize {
        self.agents.load(Ordering::SeqCst)
    }

    /// Sends a request to the agent whose session holds `scope` (its own
    /// scope or one below it) and waits for the answer: how the console
    /// tells an MCP gateway that the human approved a held tool.
    ///
    /// # Errors
    /// The agent's error message, or that it is gone.
    pub async fn ask_agent(&self, scope: &AgentPipelineScope, method: &str, params: Value) -> Result<Value, String> {
        let conn = (self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
            .iter()
            .find(|(session, _)| scope.is_within(session))
            .and_then(|(_, conn)| conn.upgrade())
            .ok_or("the agent of that scope is gone")?;
        conn.request(method, params).await
    }

    pub(super) fn send(&self, event: AppEvent) {
        if let Some(events) = &self.events {
            events.send(event);
        }
    }

    pub(super) fn scopes_changed(&self, add: Option<&AgentPipelineScope>, remove: Option<&AgentPipelineScope>) {
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
