//! The gateway as an MCP server to its client: tools listed as the upstream
//! defines them (a held tool as it was approved), every `tools/call` run as
//! a one-call batch through the console's pipeline (or the embedded one, or
//! refused), and everything else passed through to the upstream.
#![allow(deprecated)] // logging and resource subscriptions are deprecated upstream, still used by clients

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use futures::FutureExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig, CompleteRequestParams,
    CompleteResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::console::{ConsoleLink, Invoke, NOT_RUNNING};
use super::embedded::Embedded;
use super::pins::{self, PinFile, Verdict};
use super::upstream::{ProgressRoute, Upstream, UpstreamEvent};
use crate::files::policy::Policy;

/// How `tether mcp proxy` runs.
pub struct ProxyOptions {
    /// The upstream server's name: its scope in the console, its pin file.
    pub name: String,
    /// The upstream server's command line.
    pub command: Vec<String>,
    /// The console's socket.
    pub socket: PathBuf,
    /// Run this policy in the gateway when the console is not running.
    pub policy: Option<Policy>,
    /// The pin file for this server.
    pub pins: PathBuf,
}

/// A tool as the upstream defines it now, and as the client is shown it.
#[derive(Clone)]
struct Listed {
    tool: Tool,
    shown: Tool,
    held: bool,
}

struct Inner {
    options: ProxyOptions,
    upstream: tokio::sync::OnceCell<Arc<Upstream>>,
    info: OnceLock<ServerConfig>,
    tools: Mutex<Vec<Listed>>,
    console: tokio::sync::Mutex<Option<Arc<ConsoleLink>>>,
    embedded: OnceLock<Option<Embedded>>,
    routes: Mutex<HashMap<String, Option<ProgressRoute>>>,
    next_call: AtomicU64,
    ready: watch::Sender<bool>,
    client: Mutex<Option<rmcp::service::Peer<RoleServer>>>,
    label: OnceLock<String>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The MCP server the client talks to.
#[derive(Clone)]
pub struct Gateway(Arc<Inner>);

/// A tool result that is a failure the model reads.
pub fn failure(code: &str, message: &str, decided_by: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{message} (Tether: {code}, decided by {decided_by})"
    ))])
}

/// One outcome of `batch/execute` as the client's tool result: the
/// upstream's result unchanged, a post-execute replacement as text, or a
/// failure with its reason.
pub fn to_result(outcome: &Value) -> CallToolResult {
    let value = &outcome["value"];
    let decided_by = outcome["decided_by"].as_str().unwrap_or("pipeline");
    match outcome["code"].as_str() {
        None => serde_json::from_value::<CallToolResult>(value.clone()).unwrap_or_else(|_| {
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
    pub fn new(options: ProxyOptions) -> Self {
        Self(Arc::new(Inner {
            options,
            upstream: tokio::sync::OnceCell::new(),
            info: OnceLock::new(),
            tools: Mutex::default(),
            console: tokio::sync::Mutex::new(None),
            embedded: OnceLock::new(),
            routes: Mutex::default(),
            next_call: AtomicU64::new(1),
            ready: watch::channel(false).0,
            client: Mutex::new(None),
            label: OnceLock::new(),
        }))
    }

    fn upstream(&self) -> Result<&Arc<Upstream>, McpError> {
        self.0
            .upstream
            .get()
            .ok_or_else(|| McpError::internal_error("the upstream MCP server is not connected", None))
    }

    /// Runs a tool body for the pipeline: forwards the call upstream.
    fn invoker(&self) -> Invoke {
        let weak: Weak<Inner> = Arc::downgrade(&self.0);
        Arc::new(
            move |call_id: String, name: String, arguments: Value, cancel: CancellationToken| {
                let weak = weak.clone();
                async move {
                    let inner = weak.upgrade().ok_or("the gateway is shutting down")?;
                    let upstream = inner
                        .upstream
                        .get()
                        .cloned()
                        .ok_or("the upstream MCP server is not connected")?;
                    let progress = lock(&inner.routes).get(&call_id).cloned().flatten();
                    upstream.call(&name, arguments, progress, &cancel).await
                }
                .boxed()
            },
        )
    }

    fn registration(&self, listed: &Listed) -> Value {
        let tool = &listed.shown;
        json!({
            "name": tool.name,
            "description": tool.description.as_deref().unwrap_or_default(),
            "parameters": tool.input_schema,
            "concurrency": "never",
            "metadata": {"mcp_server": self.0.options.name, "annotations": tool.annotations, "held": listed.held},
            "scope": self.0.options.name,
        })
    }

    /// The console's session, connecting (and registering every tool) when
    /// there is none; `None` when the console is not running.
    async fn console(&self) -> Option<Arc<ConsoleLink>> {
        let mut slot = self.0.console.lock().await;
        if let Some(link) = slot.as_ref().filter(|l| !l.closed.is_cancelled()) {
            return Some(Arc::clone(link));
        }
        let label = self.0.label.get().cloned().unwrap_or_else(|| "mcp".into());
        let session = json!({"session_id": format!("mcp-{}", std::process::id()), "label": label});
        let link = ConsoleLink::connect(&self.0.options.socket, session, self.invoker())
            .await
            .ok()?;
        let tools = lock(&self.0.tools).clone();
        for listed in &tools {
            if let Err(error) = link.request("tools/register", self.registration(listed)).await {
                tracing::warn!(%error, tool = %listed.tool.name, "the console refused a tool");
            }
        }
        *slot = Some(Arc::clone(&link));
        Some(link)
    }

    /// Lists the upstream's tools (every page), checks each against its pin
    /// and brings the console and the embedded engine up to date.
    async fn sync_tools(&self) -> anyhow::Result<()> {
        let upstream = Arc::clone(self.upstream().map_err(|e| anyhow::anyhow!(e.message))?);
        let tools = upstream.peer().list_all_tools().await?;
        let path = &self.0.options.pins;
        let mut pins = PinFile::load(path)?;
        let listed: Vec<Listed> = tools
            .into_iter()
            .map(|tool| match pins.check(&tool.name, &pins::definition(&tool)) {
                Verdict::Changed { approved } => {
                    tracing::warn!(tool = %tool.name, "definition changed since approved; held");
                    let mut shown = tool.clone();
                    shown.description = approved["description"].as_str().map(|d| d.to_owned().into());
                    if let Some(schema) = approved["inputSchema"].as_object() {
                        shown.input_schema = Arc::new(schema.clone());
                    }
                    shown.annotations = serde_json::from_value(approved["annotations"].clone()).unwrap_or(None);
                    Listed {
                        tool,
                        shown,
                        held: true,
                    }
                }
                Verdict::New | Verdict::Same => Listed {
                    shown: tool.clone(),
                    tool,
                    held: false,
                },
            })
            .collect();
        pins.save(path)?;
        let removed: Vec<String> = {
            let mut current = lock(&self.0.tools);
            let removed = current
                .iter()
                .filter(|old| !listed.iter().any(|l| l.tool.name == old.tool.name))
                .map(|old| old.tool.name.to_string())
                .collect();
            *current = listed.clone();
            removed
        };
        let console = self.0.console.lock().await.clone().filter(|l| !l.closed.is_cancelled());
        if let Some(link) = console {
            for name in &removed {
                let _ = link
                    .request("tools/unregister", json!({"name": name, "scope": self.0.options.name}))
                    .await;
            }
            for l in &listed {
                if let Err(error) = link.request("tools/register", self.registration(l)).await {
                    tracing::warn!(%error, tool = %l.tool.name, "the console refused a tool");
                }
            }
        }
        if let Some(Some(embedded)) = self.0.embedded.get() {
            for name in &removed {
                embedded.unregister(name);
            }
            for l in &listed {
                let description = l.shown.description.as_deref().unwrap_or_default();
                embedded.register(
                    &l.shown.name,
                    description,
                    Value::Object((*l.shown.input_schema).clone()),
                    json!({}),
                );
            }
        }
        Ok(())
    }

    /// A held tool stays held until its changed definition is approved in
    /// the pin file (`tether mcp pins --approve`), read again at each call.
    fn held(&self, name: &str) -> bool {
        let listed = lock(&self.0.tools).iter().find(|l| l.tool.name == name).cloned();
        let Some(listed) = listed.filter(|l| l.held) else {
            return false;
        };
        let approved = PinFile::load(&self.0.options.pins)
            .ok()
            .and_then(|pins| pins.tools.get(name).map(|p| p.definition.clone()));
        if approved.as_ref() == Some(&pins::definition(&listed.tool)) {
            if let Some(l) = lock(&self.0.tools).iter_mut().find(|l| l.tool.name == name) {
                l.held = false;
                l.shown = l.tool.clone();
            }
            return false;
        }
        true
    }

    async fn run_call(
        &self,
        call_id: &str,
        name: &str,
        arguments: &Value,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        if let Some(link) = self.console().await {
            let batch = json!({
                "batch_id": call_id, "max_parallelism": 1, "scope": self.0.options.name,
                "calls": [{"id": call_id, "name": name, "arguments": arguments.to_string()}],
            });
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
                Ok(result) => to_result(&result["outcomes"][0]),
                Err(message) => failure("UNAVAILABLE", &message, "gateway"),
            };
        }
        match self.0.embedded.get() {
            Some(Some(embedded)) => to_result(&embedded.run(call_id, name, arguments, cancel).await),
            _ => failure("DENIED", NOT_RUNNING, "gateway (--fallback deny)"),
        }
    }

    async fn watch_upstream(self, mut events: mpsc::UnboundedReceiver<UpstreamEvent>) {
        while let Some(UpstreamEvent::ToolsChanged) = events.recv().await {
            if let Err(error) = self.sync_tools().await {
                tracing::warn!(%error, "re-listing the upstream's tools failed");
                continue;
            }
            let mut ready = self.0.ready.subscribe();
            let _ = ready.wait_for(|ready| *ready).await;
            let client = lock(&self.0.client).clone();
            if let Some(client) = client {
                let _ = client.notify_tool_list_changed().await;
            }
        }
    }
}

fn internal(error: impl std::fmt::Display) -> McpError {
    McpError::internal_error(error.to_string(), None)
}

fn passthrough(error: rmcp::ServiceError) -> McpError {
    match error {
        rmcp::ServiceError::McpError(error) => error,
        other => internal(format!("the upstream MCP server failed: {other}")),
    }
}

#[allow(deprecated)]
impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        self.0
            .info
            .get()
            .cloned()
            .unwrap_or_else(|| ServerConfig::new(ServerCapabilities::default()))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        *lock(&self.0.client) = Some(context.peer.clone());
        let _ = self
            .0
            .label
            .set(format!("{}-{}", request.client_info.name, std::process::id()));
        // The upstream is offered what the client can do, and no more.
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = request.capabilities.roots.clone();
        capabilities.sampling = request.capabilities.sampling.clone();
        capabilities.elicitation = request.capabilities.elicitation.clone();
        let mut info = ClientConfig::new(capabilities, request.client_info.clone());
        info.protocol_version = request.protocol_version.clone();
        let (events, changes) = mpsc::unbounded_channel();
        let upstream = Upstream::start(
            self.0.options.name.clone(),
            &self.0.options.command,
            info,
            context.peer.clone(),
            self.0.ready.subscribe(),
            events,
        )
        .await
        .map_err(internal)?;
        let mut server = ServerConfig::new(ServerCapabilities::default());
        if let Some(info) = upstream.service.peer_info() {
            server.capabilities = info.capabilities.clone();
            server.instructions = info.instructions.clone();
            server.protocol_version = info.protocol_version.clone();
            if let Some(implementation) = &info.server_info {
                server.server_info = implementation.clone();
            }
        }
        // Tools can change (pins, the console); extensions such as tasks are
        // not relayed.
        let mut tools = server.capabilities.tools.clone().unwrap_or_default();
        tools.list_changed = Some(true);
        server.capabilities.tools = Some(tools);
        server.capabilities.extensions = None;
        let _ = self.0.info.set(server);
        let _ = self.0.upstream.set(Arc::new(upstream));
        let embedded = match &self.0.options.policy {
            Some(policy) => Some(Embedded::new(&self.0.options.name, policy, self.invoker()).map_err(internal)?),
            None => None,
        };
        let _ = self.0.embedded.set(embedded);
        self.sync_tools().await.map_err(internal)?;
        if self.console().await.is_none() {
            tracing::warn!("{NOT_RUNNING}");
        }
        tokio::spawn(self.clone().watch_upstream(changes));
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {
        let _ = self.0.ready.send(true);
    }

    async fn ping(&self, _context: RequestContext<RoleServer>) -> Result<(), McpError> {
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = lock(&self.0.tools).iter().map(|l| l.shown.clone()).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if self.held(&name) {
            return Ok(failure("DENIED", pins::HELD, "pin").into());
        }
        let arguments = request.arguments.map_or_else(|| json!({}), Value::Object);
        let call_id = format!("mcp-{}", self.0.next_call.fetch_add(1, Ordering::Relaxed));
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| (token, context.peer.clone()));
        lock(&self.0.routes).insert(call_id.clone(), progress);
        let result = self.run_call(&call_id, &name, &arguments, &context.ct).await;
        lock(&self.0.routes).remove(&call_id);
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.upstream()?
            .peer()
            .list_resources(request)
            .await
            .map_err(passthrough)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.upstream()?
            .peer()
            .list_resource_templates(request)
            .await
            .map_err(passthrough)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.upstream()?
            .peer()
            .read_resource_once(request)
            .await
            .map_err(passthrough)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.upstream()?.peer().subscribe(request).await.map_err(passthrough)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.upstream()?.peer().unsubscribe(request).await.map_err(passthrough)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.upstream()?.peer().list_prompts(request).await.map_err(passthrough)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.upstream()?
            .peer()
            .get_prompt_once(request)
            .await
            .map_err(passthrough)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.upstream()?.peer().complete(request).await.map_err(passthrough)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.upstream()?.peer().set_level(request).await.map_err(passthrough)
    }
}
