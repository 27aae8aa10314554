//! The gateway's state: its upstream servers, its session on the console,
//! and every `tools/call` run as a one-call batch through the console's
//! pipeline (or the embedded one, or refused). The tool list is in
//! `tools.rs`, the MCP server side in `handler.rs`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use futures::FutureExt as _;
use rmcp::model::{CallToolResult, ContentBlock, ServerConfig};
use rmcp::{ErrorData as McpError, RoleServer};
use serde::Deserialize as _;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::console::{ConsoleLink, Invoke, not_running};
use super::embedded::Embedded;
use super::pins;
mod fast;
mod requests;
mod roots;
mod tools;

use super::upstream::{Owners, ProgressRoute, Upstream};
use crate::files::mcp_servers::McpServer;
use crate::files::policy::Policy;
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
}

pub(super) struct Inner {
    pub options: GatewayOptions,
    pub upstreams: OnceLock<Vec<Arc<Upstream>>>,
    pub info: OnceLock<ServerConfig>,
    pub tools: Mutex<Vec<Listed>>,
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

/// A tool result that is a failure the model reads.
pub fn failure(code: &str, message: &str, decided_by: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{message} (Tether: {code}, decided by {decided_by})"
    ))])
}

/// Longest arguments an edit notice repeats, in characters.
const EDIT_NOTICE_CHARS: usize = 2_000;

/// What the model reads after the result of a call a human edited before
/// approving: it did not run as the model wrote it.
pub fn edited_notice(arguments: &Value) -> String {
    format!(
        "(Tether: a human edited this call's arguments before approving it; it ran with {})",
        crate::sanitize::shortened(&arguments.to_string(), EDIT_NOTICE_CHARS)
    )
}

/// One outcome of `batch/execute` as the client's tool result: the
/// upstream's result unchanged, a post-execute replacement as text, or a
/// failure with its reason.
pub fn to_result(mut outcome: Value) -> CallToolResult {
    let value = outcome["value"].take();
    let decided_by = outcome["decided_by"].as_str().unwrap_or("pipeline");
    match outcome["code"].as_str() {
        // Read from a reference: a result that is not a tool result is
        // then shown as text without a copy kept for the purpose.
        None => CallToolResult::deserialize(&value).unwrap_or_else(|_| {
            let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            CallToolResult::success(vec![ContentBlock::text(text)])
        }),
        Some(code) => {
            let message = value["message"]
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            failure(code, &message, decided_by)
        }
    }
}

impl Gateway {
    pub fn new(options: GatewayOptions) -> Self {
        Self(Arc::new(Inner {
            options,
            upstreams: OnceLock::new(),
            info: OnceLock::new(),
            tools: Mutex::default(),
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
        }))
    }

    /// What tells this gateway's console session apart: the process, and
    /// which of its gateways (`tether mcp serve --http` runs one per client
    /// session, each its own agent session in the console).
    pub(super) fn session_suffix(&self) -> String {
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

    /// Runs a tool body for the pipeline: forwards the call to its server.
    pub(super) fn invoker(&self) -> Invoke {
        let weak: Weak<Inner> = Arc::downgrade(&self.0);
        Arc::new(
            move |call_id: String, name: String, arguments: Value, edited: bool, cancel: CancellationToken| {
                let weak = weak.clone();
                async move {
                    let inner = weak.upgrade().ok_or("the gateway is shutting down")?;
                    if edited {
                        lock(&inner.edits).insert(call_id.clone(), arguments.clone());
                    }
                    let (server, request, progress) = lock(&inner.routes)
                        .get(&call_id)
                        .cloned()
                        .ok_or("the call is no longer running")?;
                    // The pipeline denies a held tool's calls; should a
                    // console let one through anyway, it still stops here.
                    let held = Gateway(Arc::clone(&inner)).with_listed(server, &name, |l| l.held);
                    if held == Some(true) && request == Request::Tool {
                        return Err(pins::HELD.to_owned());
                    }
                    let upstream = inner
                        .upstreams
                        .get()
                        .and_then(|u| u.get(server).cloned())
                        .ok_or("the upstream MCP server is not connected")?;
                    match request {
                        Request::Tool => upstream.call(&name, arguments, progress, &cancel).await,
                        other => other.forward(&upstream, arguments).await,
                    }
                }
                .boxed()
            },
        )
    }

    /// The console's session, connecting (and registering every tool) when
    /// there is none; `None` when the console is not running.
    pub(super) async fn console(&self) -> Option<Arc<ConsoleLink>> {
        let mut slot = self.0.console.lock().await;
        if let Some(link) = slot.as_ref().filter(|l| !l.closed.is_cancelled()) {
            return Some(Arc::clone(link));
        }
        let label = self.0.label.get().cloned().unwrap_or_else(|| "mcp".into());
        // It reads only answers: no `tool/call` or `tool/result` for it.
        let mut session =
            json!({"session_id": format!("mcp-{}", self.session_suffix()), "label": label, "notifications": false});
        // Path rules judge the upstream's calls from where the gateway runs.
        if let Ok(cwd) = std::env::current_dir() {
            session["cwd"] = json!(cwd.display().to_string());
        }
        let connected = ConsoleLink::connect(&self.0.options.socket, session, self.invoker(), self.approver()).await;
        let down = connected.is_err();
        if self.0.console_down.swap(down, Ordering::Relaxed) != down {
            match &connected {
                Err(why) => {
                    tracing::warn!("no console: {why}; calls are refused, or decided by --policy, until it runs")
                }
                Ok(_) => tracing::info!("the console runs again: calls go to it"),
            }
        }
        let link = connected.ok()?;
        let tools = lock(&self.0.tools).clone();
        let requests = (0..self.0.options.servers.len()).flat_map(|server| self.request_registrations(server));
        let registrations: Vec<Value> = tools.iter().map(|l| self.registration(l)).chain(requests).collect();
        for registration in registrations {
            if let Err(error) = link.request("tools/register", registration.clone()).await {
                tracing::warn!(%error, tool = %registration["name"], "the console refused a tool");
            }
        }
        *slot = Some(Arc::clone(&link));
        Some(link)
    }

    /// Runs one client `tools/call` through the pipeline.
    pub(super) async fn call(
        &self,
        server: usize,
        name: &str,
        arguments: &Value,
        progress: Option<ProgressRoute>,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        let (outcome, edited) = self
            .run_edited(server, Request::Tool, name, arguments, progress, cancel)
            .await;
        let mut result = to_result(outcome);
        if let Some(edited) = edited {
            result.content.push(ContentBlock::text(edited_notice(&edited)));
        }
        result
    }

    /// Runs one call through the pipeline as a one-call batch: its outcome
    /// as the link reports it (`code`, `value`, `decided_by`).
    pub(super) async fn run(
        &self,
        server: usize,
        request: Request,
        name: &str,
        arguments: &Value,
        progress: Option<ProgressRoute>,
        cancel: &CancellationToken,
    ) -> Value {
        self.run_edited(server, request, name, arguments, progress, cancel)
            .await
            .0
    }

    /// [`Self::run`], and the arguments the call ran with when a human
    /// edited them before approving.
    async fn run_edited(
        &self,
        server: usize,
        request: Request,
        name: &str,
        arguments: &Value,
        progress: Option<ProgressRoute>,
        cancel: &CancellationToken,
    ) -> (Value, Option<Value>) {
        // A held tool's calls go through the pipeline like any other (so
        // they are journaled and seen), where the implicit rule denies them.
        let held = request == Request::Tool && self.held(server, name).await;
        let call_id = format!("mcp-{}", self.0.next_call.fetch_add(1, Ordering::Relaxed));
        lock(&self.0.routes).insert(call_id.clone(), (server, request, progress));
        let outcome = self.run_call(server, &call_id, name, arguments, held, cancel).await;
        lock(&self.0.routes).remove(&call_id);
        (outcome, lock(&self.0.edits).remove(&call_id))
    }

    async fn run_call(
        &self,
        server: usize,
        call_id: &str,
        name: &str,
        arguments: &Value,
        held: bool,
        cancel: &CancellationToken,
    ) -> Value {
        let refused = |code: &str, message: &str, decided_by: &str| json!({"code": code, "value": {"message": message}, "decided_by": decided_by});
        let cwd = self.client_cwd().await;
        if let Some(link) = self.console().await {
            let mut batch = json!({
                "batch_id": call_id, "max_parallelism": 1, "scope": self.server_name(server),
                "calls": [{"id": call_id, "name": name, "arguments": arguments.to_string()}],
            });
            if let Some(cwd) = &cwd {
                batch["cwd"] = json!(cwd);
            }
            let execute = link.request("batch/execute", batch);
            tokio::pin!(execute);
            let answer = tokio::select! {
                answer = &mut execute => answer,
                () = cancel.cancelled() => {
                    let _ = link.request("batch/cancel", json!({"batch_id": call_id})).await;
                    execute.await
                }
            };
            return match answer {
                Ok(mut result) => result["outcomes"][0].take(),
                Err(message) => refused("UNAVAILABLE", &message, "gateway"),
            };
        }
        match self.0.embedded.get().and_then(|e| e.get(server)) {
            Some(embedded) => {
                let cwd = cwd.or_else(|| std::env::current_dir().ok().map(|d| d.display().to_string()));
                // Boxed: the engine's whole pipeline, only without a console.
                Box::pin(embedded.run(call_id, name, arguments, cwd.as_deref(), cancel)).await
            }
            None if held => refused("DENIED", pins::HELD, "gateway (pin)"),
            None => refused(
                "DENIED",
                &not_running(&self.0.options.socket),
                "gateway (--fallback deny)",
            ),
        }
    }
}
