//! One call through the gateway: run as a one-call batch through the
//! console's pipeline (connecting to the console when there is no session),
//! or the embedded one, or refused; the console's call-back that forwards
//! an allowed call to its server; and the outcome as the client's result.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use futures::FutureExt as _;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Deserialize as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::super::console::{ConsoleLink, Invoke, OneCall, not_running};
use super::super::pins;
use super::super::upstream::ProgressRoute;
use super::{Gateway, Inner, Request, lock};
use crate::agents::link::EarlyOutcome;

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
        None => success(&value),
        Some(code) => {
            let message = value["message"]
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            failure(code, &message, decided_by)
        }
    }
}

/// The client's tool result for what [`Gateway::run`] returns: the
/// outcome's ([`to_result`]), told the arguments it ran with when a human
/// edited them.
pub fn result_of(outcome: Value, edited: Option<Value>) -> CallToolResult {
    let mut result = to_result(outcome);
    if let Some(edited) = edited {
        result.content.push(ContentBlock::text(edited_notice(&edited)));
    }
    result
}

/// A successful outcome's value as the client's tool result: the
/// upstream's result unchanged, or a post-execute replacement as text.
pub fn success(value: &Value) -> CallToolResult {
    // Read from a reference: a result that is not a tool result is then
    // shown as text without a copy kept for the purpose.
    CallToolResult::deserialize(value).unwrap_or_else(|_| {
        let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
        CallToolResult::success(vec![ContentBlock::text(text)])
    })
}

impl Gateway {
    /// Runs a tool body for the pipeline: forwards the call to its server.
    pub(in crate::agents::mcp) fn invoker(&self) -> Invoke {
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
                        // Boxed: a prompt's or resource's request through
                        // rmcp would otherwise make this future, boxed for
                        // every call, as large as itself.
                        other => Box::pin(other.forward(&upstream, arguments)).await,
                    }
                }
                .boxed()
            },
        )
    }

    /// The console's session, connecting (and registering every tool) when
    /// there is none; `None` when the console is not running.
    pub(in crate::agents::mcp) async fn console(&self) -> Option<Arc<ConsoleLink>> {
        let mut slot = self.0.console.lock().await;
        if let Some(link) = slot.as_ref().filter(|l| !l.closed.is_cancelled()) {
            return Some(Arc::clone(link));
        }
        let socket = &self.0.options.socket;
        let label = || self.0.label.get().cloned().unwrap_or_else(|| "mcp".into());
        // While the console is down, each call looks for it again: with
        // nothing at the socket's path, no socket is opened and no session
        // built to find that out.
        let connected = if let Some(hosted) = &self.0.options.hosted {
            let session = json!({"session_id": format!("mcp-{}", self.session_suffix()), "label": label(), "notifications": false, "cwd": self.0.cwd});
            ConsoleLink::in_process(
                &hosted.link,
                hosted.stop.child_token(),
                session,
                self.invoker(),
                self.approver(),
            )
            .await
        } else if socket.exists() {
            // It reads only answers: no `tool/call` or `tool/result` for it.
            let mut session = json!({"session_id": format!("mcp-{}", self.session_suffix()), "label": label(), "notifications": false});
            // Path rules judge the upstream's calls from where the gateway runs.
            if let Some(cwd) = &self.0.cwd {
                session["cwd"] = json!(cwd);
            }
            ConsoleLink::connect(socket, session, self.invoker(), self.approver()).await
        } else {
            Err(not_running(socket))
        };
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

    /// Runs one client `tools/call` through the pipeline; `arguments` is
    /// their JSON text as the client wrote it; `early`, see [`OneCall`].
    pub(in crate::agents::mcp) async fn call(
        &self,
        server: usize,
        name: &str,
        arguments: &str,
        progress: Option<ProgressRoute>,
        cancel: &CancellationToken,
        early: Option<EarlyOutcome<'_>>,
    ) -> CallToolResult {
        let (outcome, edited) = self
            .run(server, Request::Tool, name, arguments, progress, cancel, early)
            .await;
        result_of(outcome, edited)
    }

    /// Runs one call through the pipeline as a one-call batch: its outcome
    /// as the link reports it (`code`, `value`, `decided_by`), and the
    /// arguments the call ran with when a human edited them before
    /// approving.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::agents::mcp) async fn run(
        &self,
        server: usize,
        request: Request,
        name: &str,
        arguments: &str,
        progress: Option<ProgressRoute>,
        cancel: &CancellationToken,
        early: Option<EarlyOutcome<'_>>,
    ) -> (Value, Option<Value>) {
        // A held tool's calls go through the pipeline like any other (so
        // they are journaled and seen), where the implicit rule denies them.
        let held = request == Request::Tool && self.held(server, name).await;
        let call_id = format!("mcp-{}", self.0.next_call.fetch_add(1, Ordering::Relaxed));
        lock(&self.0.routes).insert(call_id.clone(), (server, request, progress));
        let outcome = self
            .run_call(server, &call_id, name, arguments, held, cancel, early)
            .await;
        lock(&self.0.routes).remove(&call_id);
        (outcome, lock(&self.0.edits).remove(&call_id))
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_call(
        &self,
        server: usize,
        call_id: &str,
        name: &str,
        arguments: &str,
        held: bool,
        cancel: &CancellationToken,
        early: Option<EarlyOutcome<'_>>,
    ) -> Value {
        let refused = |code: &str, message: &str, decided_by: &str| json!({"code": code, "value": {"message": message}, "decided_by": decided_by});
        let cwd = self.client_cwd().await;
        if let Some(link) = self.console().await {
            let call = OneCall {
                id: call_id,
                name,
                arguments,
                scope: self.server_name(server),
                cwd: cwd.as_deref(),
                early,
            };
            return match link.execute(call, cancel).await {
                Ok(outcome) => outcome,
                Err(message) => refused("UNAVAILABLE", &message, "gateway"),
            };
        }
        match self.0.embedded.get().and_then(|e| e.get(server)) {
            Some(embedded) => {
                let cwd = cwd.or_else(|| self.0.cwd.clone());
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
