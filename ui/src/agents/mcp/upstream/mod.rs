//! The gateway as an MCP client of one upstream server (a child process on
//! stdio, or a Streamable HTTP endpoint): its requests to the client (roots, sampling, elicitation) are
//! relayed to the gateway's own client once that client is initialized,
//! its notifications forwarded in order (`ordered.rs`; progress with the
//! token mapped back), and
//! tool calls sent with their own cancellation.
#![allow(deprecated)] // roots, sampling and logging are deprecated upstream, still used by servers

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientConfig, ClientRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ListRootsResult, ProgressToken,
    ServerCapabilities, ServerNotification, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient, RoleServer, ServiceExt as _};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

mod child;
mod ordered;
mod raw;

use crate::files::mcp_servers::{McpServer, Transport};
use child::ChildTransport;
pub use child::{GRACE, server_command};
use ordered::Ordered;
use raw::Raw;

/// Where an upstream's progress goes: the client's own token, and the
/// client's rmcp session or (for a call taken off its stdio) its stdio.
#[derive(Clone)]
pub enum ProgressRoute {
    Peer(ProgressToken, Peer<RoleServer>),
    Line(raw::LineRoute),
}

type Routes = Arc<Mutex<HashMap<ProgressToken, ProgressRoute>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Past this many URIs (templates make them unbounded) the gateway's memory
/// of resource owners starts over.
pub const MOST_OWNERS: usize = 10_000;

/// Remembered owners: URI → server index, and a generation that a change
/// moves on, so a lookup that raced with a change is not remembered.
#[derive(Default)]
pub struct Owners(pub Mutex<(u64, HashMap<String, usize>)>);

impl Owners {
    /// Forgets every owner: a server's resource list changed.
    pub fn clear(&self) {
        let mut owners = lock(&self.0);
        owners.0 += 1;
        owners.1.clear();
    }
}

/// Something the gateway must react to.
#[derive(Debug, Clone, Copy)]
pub enum UpstreamEvent {
    ToolsChanged,
}

/// How an upstream tells the gateway its tools changed: the re-list to run.
#[derive(Clone)]
pub struct Relist {
    pub events: mpsc::UnboundedSender<UpstreamEvent>,
}

#[derive(Clone)]
pub struct Handler {
    info: ClientConfig,
    client: Peer<RoleServer>,
    client_ready: watch::Receiver<bool>,
    progress: Routes,
    relist: Relist,
    owners: Arc<Owners>,
}

impl Handler {
    /// Server-to-client requests wait for the client's `initialized`.
    async fn client(&self) -> Peer<RoleServer> {
        let mut ready = self.client_ready.clone();
        let _ = ready.wait_for(|ready| *ready).await;
        self.client.clone()
    }

    pub fn client_is_ready(&self) -> bool {
        *self.client_ready.borrow()
    }

    /// Forwards one of the upstream's notifications to the client (progress
    /// under the client's own token), and returns once it is written.
    pub async fn forward(&self, notification: ServerNotification) {
        match notification {
            ServerNotification::ProgressNotification(n) => {
                let route = lock(&self.progress).get(&n.params.progress_token).cloned();
                let mut params = n.params;
                match route {
                    Some(ProgressRoute::Peer(token, client)) => {
                        params.progress_token = token;
                        let _ = client.notify_progress(params).await;
                    }
                    Some(ProgressRoute::Line(route)) => {
                        if let Ok(params) = serde_json::to_value(params) {
                            raw::tell_progress(&route, params);
                        }
                    }
                    None => {}
                }
            }
            ServerNotification::LoggingMessageNotification(n) => {
                let _ = self.client().await.notify_logging_message(n.params).await;
            }
            ServerNotification::ResourceUpdatedNotification(n) => {
                let _ = self.client().await.notify_resource_updated(n.params).await;
            }
            ServerNotification::ResourceListChangedNotification(_) => {
                // Forgotten before the client hears: its next read looks again.
                self.owners.clear();
                let _ = self.client().await.notify_resource_list_changed().await;
            }
            ServerNotification::PromptListChangedNotification(_) => {
                let _ = self.client().await.notify_prompt_list_changed().await;
            }
            ServerNotification::ToolListChangedNotification(_) => {
                // The client hears once the gateway has re-listed (and
                // re-checked the pins): see `Gateway::watch_upstream`.
                let _ = self.relist.events.send(UpstreamEvent::ToolsChanged);
            }
            _ => {}
        }
    }
}

fn relay_error(error: rmcp::ServiceError) -> McpError {
    match error {
        rmcp::ServiceError::McpError(error) => error,
        other => McpError::internal_error(format!("the client did not answer: {other}"), None),
    }
}

#[allow(deprecated)]
impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, McpError> {
        self.client().await.list_roots().await.map_err(relay_error)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        self.client().await.create_message(params).await.map_err(relay_error)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        self.client()
            .await
            .create_elicitation(request)
            .await
            .map_err(relay_error)
    }
}

/// One upstream server, connected.
pub struct Upstream {
    /// The server's name: its scope in the console, its pin file.
    pub name: String,
    pub service: RunningService<RoleClient, Handler>,
    progress: Routes,
    /// A stdio server's calls sent past rmcp (`raw.rs`).
    raw: Option<Arc<Raw>>,
}

impl Upstream {
    /// Starts the server's command (or connects to its URL) and initializes
    /// it as `info` (the client's own capabilities and protocol version, so
    /// the server offers what the client can use).
    ///
    /// # Errors
    /// When the command cannot start, the URL cannot be reached or the handshake fails.
    pub async fn start(
        spec: &McpServer,
        info: ClientConfig,
        client: Peer<RoleServer>,
        client_ready: watch::Receiver<bool>,
        relist: Relist,
        owners: Arc<Owners>,
        handed: Option<(OwnedFd, OwnedFd)>,
    ) -> anyhow::Result<Self> {
        let name = spec.name.clone();
        let progress = Routes::default();
        let handler = Handler {
            info,
            client,
            client_ready,
            progress: Arc::clone(&progress),
            relist,
            owners,
        };
        let mut raw = None;
        let service = match (&spec.transport, handed) {
            // Started by the proxy that handed the gateway to the console.
            (Transport::Stdio { .. }, Some((stdin, stdout))) => {
                let (transport, calls) = ChildTransport::of_pipes(stdin, stdout)
                    .map_err(|e| anyhow::anyhow!("the MCP server {name:?} handed over: {e}"))?;
                raw = Some(calls);
                handler.clone().serve(Ordered::new(transport, handler)).await
            }
            (Transport::Stdio { command, env, cwd }, None) => {
                let cmd = server_command(command, env, cwd.as_deref()).map_err(|e| anyhow::anyhow!("{e}"))?;
                let program = command.first().map_or("", String::as_str);
                let (transport, calls) = ChildTransport::spawn(cmd.into())
                    .map_err(|e| anyhow::anyhow!("starting the MCP server {name:?} ({program:?}): {e}"))?;
                raw = Some(calls);
                handler.clone().serve(Ordered::new(transport, handler)).await
            }
            (Transport::Http { url, headers }, _) => {
                let transport = super::http_client::transport(url, headers)
                    .map_err(|e| anyhow::anyhow!("the MCP server {name:?} ({url}): {e:#}"))?;
                handler.clone().serve(Ordered::new(transport, handler)).await
            }
        }
        .map_err(|e| anyhow::anyhow!("the MCP server {name:?} did not initialize: {e}"))?;
        if let Some(peer) = service.peer_info() {
            tracing::info!(
                server = %name,
                name = peer.server_info.as_ref().map_or("?", |i| i.name.as_str()),
                version = peer.server_info.as_ref().map_or("?", |i| i.version.as_str()),
                protocol = %peer.protocol_version,
                capabilities = ?peer.capabilities,
                "the MCP server initialized"
            );
        }
        Ok(Self {
            name,
            service,
            progress,
            raw,
        })
    }

    /// Whether the server declared a capability.
    pub fn has(&self, capability: impl Fn(&ServerCapabilities) -> bool) -> bool {
        self.service
            .peer_info()
            .is_some_and(|info| capability(&info.capabilities))
    }

    /// A stdio server's log messages go straight to the client's stdio
    /// from now on (the client is initialized), in the order read.
    pub fn tell_logs_to(&self, client: &super::lines::LineSink) {
        if let Some(raw) = &self.raw {
            let _ = raw.client.set(client.clone());
        }
    }

    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Calls a tool; the upstream's result as JSON (errors reported by the
    /// tool itself included), or why there is none. Cancelling `cancel`
    /// sends the server its own `notifications/cancelled`.
    ///
    /// # Errors
    /// The upstream refused the request, went away, or the call was cancelled.
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        progress: Option<ProgressRoute>,
        cancel: &CancellationToken,
    ) -> Result<Value, String> {
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => return Err(format!("arguments must be an object, not {other}")),
        };
        // Past rmcp, when the progress (if any) goes straight to the client's stdio.
        let progress = match (&self.raw, progress) {
            (Some(raw), None) => {
                return raw
                    .call(&self.name, name, arguments.unwrap_or_default(), None, cancel)
                    .await;
            }
            (Some(raw), Some(ProgressRoute::Line(route))) => {
                return raw
                    .call(&self.name, name, arguments.unwrap_or_default(), Some(route), cancel)
                    .await;
            }
            (_, progress) => progress,
        };
        // Boxed: rmcp's request futures would otherwise make every call's
        // future (boxed afresh for each call by the gateway's invoker) as
        // large as themselves, the calls sent past rmcp too.
        Box::pin(self.call_through_rmcp(name, arguments, progress, cancel)).await
    }

    /// A call sent through rmcp's service (an upstream over HTTP, or a
    /// call whose progress goes to an rmcp session).
    async fn call_through_rmcp(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        progress: Option<ProgressRoute>,
        cancel: &CancellationToken,
    ) -> Result<Value, String> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = self.peer();
        let handle = peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| format!("the MCP server {:?} is gone: {e}", self.name))?;
        let (id, token) = (handle.id.clone(), handle.progress_token.clone());
        if let Some(route) = progress {
            lock(&self.progress).insert(token.clone(), route);
        }
        let result = tokio::select! {
            result = handle.await_response() => Some(result),
            () = cancel.cancelled() => None,
        };
        lock(&self.progress).remove(&token);
        match result {
            None => {
                let reason = Some("cancelled by the client".to_owned());
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                    .await;
                Err("cancelled".into())
            }
            Some(Ok(ServerResult::CallToolResult(result))) => serde_json::to_value(result).map_err(|e| e.to_string()),
            Some(Ok(_)) => Err(format!(
                "the MCP server {:?} answered tools/call with something else",
                self.name
            )),
            Some(Err(rmcp::ServiceError::McpError(error))) => Err(error.message.into_owned()),
            Some(Err(error)) => Err(format!("the MCP server {:?} failed: {error}", self.name)),
        }
    }
}
