//! The gateway as an MCP server to its client: `initialize` starts every
//! upstream with the client's own capabilities and merges theirs,
//! `tools/call`, `resources/read` and `prompts/get` go through the pipeline
//! (`gateway/`), and everything else passes through — to the one server, or (several servers) to the
//! server a prefixed name or a listed URI belongs to.
#![allow(deprecated)] // logging and resource subscriptions are deprecated upstream, still used by clients

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    PromptsCapability, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, Reference,
    ResourcesCapability, ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::embedded::Embedded;
use super::gateway::{Gateway, Naming, Request, failure, lock};
use super::upstream::{ProgressRoute, Relist, Upstream};

fn internal(error: impl std::fmt::Display) -> McpError {
    McpError::internal_error(error.to_string(), None)
}

fn passthrough(error: rmcp::ServiceError) -> McpError {
    match error {
        rmcp::ServiceError::McpError(error) => error,
        other => internal(format!("the upstream MCP server failed: {other}")),
    }
}

/// What the client is told the gateway can do: with one server, that
/// server's own answer; with several, the union of theirs. Tools can always
/// change (pins, the console); extensions such as tasks are not relayed.
fn merged(upstreams: &[Arc<Upstream>], naming: Naming) -> ServerConfig {
    let mut server = ServerConfig::new(ServerCapabilities::default());
    let infos: Vec<_> = upstreams.iter().filter_map(|u| u.service.peer_info()).collect();
    if let (Naming::Original, [info]) = (naming, infos.as_slice()) {
        server.capabilities = info.capabilities.clone();
        server.instructions = info.instructions.clone();
        server.protocol_version = info.protocol_version.clone();
        if let Some(implementation) = &info.server_info {
            server.server_info = implementation.clone();
        }
    } else {
        let caps = &mut server.capabilities;
        for (upstream, info) in upstreams.iter().zip(&infos) {
            let theirs = &info.capabilities;
            if theirs.logging.is_some() {
                caps.logging = Some(Default::default());
            }
            if theirs.completions.is_some() {
                caps.completions = Some(Default::default());
            }
            if let Some(prompts) = &theirs.prompts {
                let ours = caps.prompts.get_or_insert_with(PromptsCapability::default);
                ours.list_changed = Some(ours.list_changed.unwrap_or(false) || prompts.list_changed == Some(true));
            }
            if let Some(resources) = &theirs.resources {
                let ours = caps.resources.get_or_insert_with(ResourcesCapability::default);
                ours.list_changed = Some(ours.list_changed.unwrap_or(false) || resources.list_changed == Some(true));
                ours.subscribe = Some(ours.subscribe.unwrap_or(false) || resources.subscribe == Some(true));
            }
            if let Some(text) = &info.instructions {
                let joined = match server.instructions.take() {
                    Some(before) => format!("{before}\n\n{}: {text}", upstream.name),
                    None => format!("{}: {text}", upstream.name),
                };
                server.instructions = Some(joined);
            }
            server.protocol_version = info.protocol_version.clone();
        }
        server.server_info = Implementation::new("tether-mcp-gateway", env!("CARGO_PKG_VERSION"));
    }
    let mut tools = server.capabilities.tools.clone().unwrap_or_default();
    tools.list_changed = Some(true);
    server.capabilities.tools = Some(tools);
    server.capabilities.extensions = None;
    server
}

impl Gateway {
    fn single(&self) -> Option<&Arc<Upstream>> {
        match (self.0.options.naming, self.upstreams().ok()?) {
            (Naming::Original, [one]) => Some(one),
            _ => None,
        }
    }

    fn prompt_server(&self, shown: &str) -> Result<(&Arc<Upstream>, String), McpError> {
        let (server, name) = self
            .resolve(shown)
            .ok_or_else(|| McpError::invalid_params(format!("unknown prompt {shown:?}"), None))?;
        Ok((&self.upstreams()?[server], name))
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
        let (client, capabilities) = (&request.client_info, &request.capabilities);
        tracing::info!(client = %client.name, version = %client.version, protocol = %request.protocol_version,
            ?capabilities, "the MCP client initialized");
        *lock(&self.0.client) = Some(context.peer.clone());
        let _ = self
            .0
            .label
            .set(format!("{}-{}", request.client_info.name, self.session_suffix()));
        // Each upstream is offered what the client can do, and no more.
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = request.capabilities.roots.clone();
        capabilities.sampling = request.capabilities.sampling.clone();
        capabilities.elicitation = request.capabilities.elicitation.clone();
        let mut info = ClientConfig::new(capabilities, request.client_info.clone());
        info.protocol_version = request.protocol_version.clone();
        let mut changes = Vec::new();
        let starts = self.0.options.servers.iter().enumerate().map(|(server, spec)| {
            let (events, changed) = mpsc::unbounded_channel();
            changes.push(changed);
            let relist = Relist { events };
            Upstream::start(
                &spec.server,
                info.clone(),
                context.peer.clone(),
                self.0.ready.subscribe(),
                relist,
                Arc::clone(&self.0.owners),
                self.0.options.hosted.as_ref().and_then(|h| h.take_pipes(server)),
            )
        });
        // Boxed (as below): rmcp's request future is as large as its largest handler's.
        let upstreams: Vec<Arc<Upstream>> = Box::pin(futures::future::try_join_all(starts))
            .await
            .map_err(internal)?
            .into_iter()
            .map(Arc::new)
            .collect();
        let _ = self.0.info.set(merged(&upstreams, self.0.options.naming));
        let _ = self.0.upstreams.set(upstreams);
        // A hosted gateway's console is always there: no engine of its own.
        let embedded = match &self.0.options.policy {
            Some(policy) if self.0.options.hosted.is_none() => self
                .0
                .options
                .servers
                .iter()
                .map(|spec| Embedded::new(&spec.server.name, policy, self.invoker()))
                .collect::<anyhow::Result<Vec<_>>>()
                .map_err(internal)?,
            _ => Vec::new(),
        };
        let _ = self.0.embedded.set(embedded);
        for server in 0..self.0.options.servers.len() {
            Box::pin(self.sync_tools(server)).await.map_err(internal)?;
            if let Some(embedded) = self.0.embedded.get().and_then(|e| e.get(server)) {
                for r in self.request_registrations(server) {
                    let (name, description) = (r["name"].as_str(), r["description"].as_str());
                    let (name, description) = (name.unwrap_or_default(), description.unwrap_or_default());
                    embedded.register(name, description, r["parameters"].clone(), r["metadata"].clone(), false);
                }
            }
        }
        // With no console, `console()` says so in the log.
        let _ = Box::pin(self.console()).await;
        for (server, changed) in changes.into_iter().enumerate() {
            tokio::spawn(Gateway::watch_upstream(Arc::downgrade(&self.0), server, changed));
        }
        self.negotiate_initialize(&request)
    }

    /// Up to 2025-11-25: the gateway starts its upstreams at `initialize`,
    /// which the stateless 2026-07-28 lifecycle has none of; a client that
    /// probes `server/discover` is told so and opens a session.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {
        let _ = self.0.ready.send(true);
        if let (Some(sink), Ok(upstreams)) = (self.0.client_sink.get(), self.upstreams()) {
            for upstream in upstreams {
                upstream.tell_logs_to(sink);
            }
        }
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.roots_changed().await;
    }

    async fn ping(&self, _context: RequestContext<RoleServer>) -> Result<(), McpError> {
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.shown_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some((server, name)) = self.resolve(&request.name) else {
            let message = format!("unknown tool {:?}: no server of that name", request.name);
            return Ok(failure("UNKNOWN_TOOL", &message, "gateway").into());
        };
        // The name of a read the policy decides is not a tool the client may call.
        if Request::reserved(&name).is_some() {
            let message = format!(
                "unknown tool {:?}: the gateway's name for a request, not a tool",
                request.name
            );
            return Ok(failure("UNKNOWN_TOOL", &message, "gateway").into());
        }
        let arguments = request.arguments.map_or_else(|| json!({}), Value::Object);
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| ProgressRoute::Peer(token, context.peer.clone()));
        Ok(self
            .call(server, &name, &arguments.to_string(), progress, &context.ct, None)
            .await
            .into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        if let Some(one) = self.single() {
            return one.peer().list_resources(request).await.map_err(passthrough);
        }
        let mut all = Vec::new();
        for upstream in self.upstreams()? {
            if upstream.has(|c| c.resources.is_some()) {
                all.extend(upstream.peer().list_all_resources().await.map_err(passthrough)?);
            }
        }
        Ok(ListResourcesResult::with_all_items(all))
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        if let Some(one) = self.single() {
            return one.peer().list_resource_templates(request).await.map_err(passthrough);
        }
        let mut all = Vec::new();
        for upstream in self.upstreams()? {
            if upstream.has(|c| c.resources.is_some()) {
                all.extend(
                    upstream
                        .peer()
                        .list_all_resource_templates()
                        .await
                        .map_err(passthrough)?,
                );
            }
        }
        Ok(ListResourceTemplatesResult::with_all_items(all))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let (server, remembered) = match self.single() {
            Some(_) => (0, false),
            None => {
                let owner = self.owner(uri).await?;
                (owner.index, owner.remembered)
            }
        };
        let mut outcome = self.read(server, uri, &context.ct).await;
        // A remembered owner that fails (a server that never says its list
        // changed) is looked up again, and the read decided again there.
        if remembered && outcome["code"] == "TOOL_ERROR" {
            self.forget_owner(uri);
            let owner = self.owner(uri).await?.index;
            outcome = self.read(owner, uri, &context.ct).await;
        }
        Self::read_answer(&outcome, uri).map(Into::into)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let upstream = match self.single() {
            Some(one) => one,
            None => self.owner(&request.uri).await?.upstream,
        };
        upstream.peer().subscribe(request).await.map_err(passthrough)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let upstream = match self.single() {
            Some(one) => one,
            None => self.owner(&request.uri).await?.upstream,
        };
        upstream.peer().unsubscribe(request).await.map_err(passthrough)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        if let Some(one) = self.single() {
            return one.peer().list_prompts(request).await.map_err(passthrough);
        }
        let mut all = Vec::new();
        for (server, upstream) in self.upstreams()?.iter().enumerate() {
            if upstream.has(|c| c.prompts.is_some()) {
                for mut prompt in upstream.peer().list_all_prompts().await.map_err(passthrough)? {
                    prompt.name = self.shown_name(server, &prompt.name);
                    all.push(prompt);
                }
            }
        }
        Ok(ListPromptsResult::with_all_items(all))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let (server, name) = self
            .resolve(&request.name)
            .ok_or_else(|| McpError::invalid_params(format!("unknown prompt {:?}", request.name), None))?;
        let result = self
            .prompt(server, &name, request.arguments.as_ref(), &context.ct)
            .await?;
        Ok(result.into())
    }

    async fn complete(
        &self,
        mut request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let upstream = match &mut request.r#ref {
            Reference::Prompt(prompt) => {
                let (upstream, name) = self.prompt_server(&prompt.name)?;
                prompt.name = name;
                upstream
            }
            Reference::Resource(resource) => match self.single() {
                Some(one) => one,
                None => self.owner(&resource.uri).await?.upstream,
            },
            _ => self
                .upstreams()?
                .first()
                .ok_or_else(|| internal("no upstream MCP server"))?,
        };
        upstream.peer().complete(request).await.map_err(passthrough)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        for upstream in self.upstreams()? {
            if upstream.has(|c| c.logging.is_some()) || self.single().is_some() {
                upstream.peer().set_level(request.clone()).await.map_err(passthrough)?;
            }
        }
        Ok(())
    }
}
