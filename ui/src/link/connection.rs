//! One agent's connection: reads requests and replies line by line, writes
//! through one writer task, and cleans up everything the agent left behind
//! when it goes.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Instant;

use futures::future::BoxFuture;
use futures::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tether_tools::{
    AgentPipelineScope, BoxError, DeclaredCall, ReadyOutcome, Registration, Tool, ToolBatchSink, ToolCall, ToolContext,
    ToolsChangeKind,
};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::{FramedRead, FramedWrite, LinesCodec};
use tokio_util::sync::CancellationToken;

use super::Link;
use super::protocol::{self, *};
use crate::app::AppEvent;
use crate::observer::UiSink;
use crate::provenance::{CallKey, decided_by};
use crate::scenario::Concurrency;

type InvokeReply = Result<Value, String>;

pub(super) struct Conn {
    out: mpsc::UnboundedSender<Value>,
    pending: Mutex<HashMap<u64, oneshot::Sender<InvokeReply>>>,
    next_id: AtomicU64,
    cancel: CancellationToken,
    session: Mutex<Option<AgentSession>>,
    batches: Mutex<HashMap<String, CancellationToken>>,
}

struct AgentSession {
    scope: AgentPipelineScope,
    tools: HashMap<String, Registration>,
    _changes: Registration,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Conn {
    fn send(&self, frame: Value) {
        // A closed writer means the agent is gone; the reader notices too.
        let _ = self.out.send(frame);
    }

    fn scope(&self) -> Option<AgentPipelineScope> {
        lock(&self.session).as_ref().map(|s| s.scope.clone())
    }

    /// Calls the agent back to run a tool body.
    async fn invoke(&self, ctx: &ToolContext, arguments: Value) -> Result<Value, BoxError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        lock(&self.pending).insert(id, reply);
        let execution = ctx.execution();
        self.send(protocol::request(
            id,
            "tool/invoke",
            json!({"call_id": execution.call_id(), "name": execution.name(), "arguments": arguments}),
        ));
        tokio::select! {
            answer = answer => match answer {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(message)) => Err(message.into()),
                Err(_) => Err("the agent disconnected".into()),
            },
            () = ctx.cancellation().cancelled() => {
                lock(&self.pending).remove(&id);
                self.send(protocol::notification("tool/cancel", json!({"id": id, "call_id": execution.call_id()})));
                Err("cancelled".into())
            }
            () = self.cancel.cancelled() => Err("the agent disconnected".into()),
        }
    }
}

pub(super) async fn handle(link: Arc<Link>, stream: UnixStream, stop: CancellationToken) {
    let (read, write) = stream.into_split();
    let mut lines = FramedRead::new(read, FrameCodec::new());
    let (out, mut outgoing) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut sink = FramedWrite::new(write, LinesCodec::new());
        // Everything queued goes out in one write and one flush: a call's
        // notifications and its call-back travel together.
        while let Some(frame) = outgoing.recv().await {
            let mut written = sink.feed(frame.to_string()).await;
            while let (Ok(()), Ok(frame)) = (&written, outgoing.try_recv()) {
                written = sink.feed(frame.to_string()).await;
            }
            if written.is_err() || SinkExt::<String>::flush(&mut sink).await.is_err() {
                break;
            }
        }
    });
    let conn = Arc::new(Conn {
        out,
        pending: Mutex::default(),
        next_id: AtomicU64::new(1),
        cancel: stop,
        session: Mutex::new(None),
        batches: Mutex::default(),
    });
    let agents = link.agents.fetch_add(1, Ordering::SeqCst) + 1;
    link.send(AppEvent::AgentsChanged { connected: agents });

    loop {
        let line = tokio::select! {
            () = conn.cancel.cancelled() => break,
            line = lines.next() => line,
        };
        match line {
            None => break,
            Some(Ok(Frame::Line(text))) => dispatch(&link, &conn, &text),
            Some(Ok(Frame::TooLong)) => conn.send(protocol::error(
                &Value::Null,
                INVALID_REQUEST,
                format!("line longer than {MAX_LINE} bytes; it was skipped"),
            )),
            Some(Err(error)) => {
                tracing::debug!(%error, "agent connection failed");
                break;
            }
        }
    }

    // Whatever the agent left: batches cancelled (as SPEC §10 says), pending
    // approvals closed with them, bodies waiting on it failed, its tools
    // disposed (a tools/change each).
    conn.cancel.cancel();
    lock(&conn.pending).clear();
    let session = lock(&conn.session).take();
    if let Some(session) = session {
        let label = session.scope.label().unwrap_or_default().to_owned();
        drop(session.tools);
        link.scopes_changed(None, Some(&session.scope));
        link.send(AppEvent::Note(format!(
            "agent {label} disconnected; its tools were disposed"
        )));
    }
    let agents = link.agents.fetch_sub(1, Ordering::SeqCst) - 1;
    link.send(AppEvent::AgentsChanged { connected: agents });
    drop(conn);
    let _ = writer.await;
}

fn dispatch(link: &Arc<Link>, conn: &Arc<Conn>, text: &str) {
    let frame: Value = match serde_json::from_str(text) {
        Ok(frame) => frame,
        Err(e) => {
            conn.send(protocol::error(&Value::Null, PARSE_ERROR, format!("not JSON: {e}")));
            return;
        }
    };
    let id = frame.get("id").cloned().unwrap_or(Value::Null);
    if frame.get("jsonrpc") != Some(&json!("2.0")) || !frame.is_object() {
        conn.send(protocol::error(
            &id,
            INVALID_REQUEST,
            "expected a JSON-RPC 2.0 object with \"jsonrpc\": \"2.0\"",
        ));
        return;
    }
    let Some(method) = frame.get("method").and_then(Value::as_str) else {
        reply_to_invoke(conn, &frame, &id);
        return;
    };
    let params = frame.get("params").cloned().unwrap_or(json!({}));
    let result = match method {
        "session/open" => parse(params).and_then(|p| open_session(link, conn, p)),
        "tools/register" => parse(params).and_then(|p| register_tool(link, conn, p)),
        "tools/unregister" => parse(params).and_then(|p| unregister_tool(conn, p)),
        "tools/list" => list_tools(link, conn),
        "batch/cancel" => parse::<CancelBatch>(params).map(|p| {
            let token = lock(&conn.batches).get(&p.batch_id).cloned();
            if let Some(token) = &token {
                token.cancel();
            }
            json!({"cancelled": token.is_some()})
        }),
        "hook/tool_use" => match parse::<HookToolUse>(params) {
            Ok(params) => {
                let (link, conn) = (Arc::clone(link), Arc::clone(conn));
                tokio::spawn(async move {
                    let result = super::hook_session::handle(&link, params, &conn.cancel).await;
                    conn.send(match result {
                        Ok(result) => protocol::response(&id, result),
                        Err((code, message)) => protocol::error(&id, code, message),
                    });
                });
                return;
            }
            Err(e) => Err(e),
        },
        "batch/execute" => match parse::<ExecuteBatch>(params) {
            Ok(params) => {
                let (link, conn) = (Arc::clone(link), Arc::clone(conn));
                tokio::spawn(async move {
                    let result = execute_batch(&link, &conn, params).await;
                    conn.send(match result {
                        Ok(result) => protocol::response(&id, result),
                        Err((code, message)) => protocol::error(&id, code, message),
                    });
                });
                return;
            }
            Err(e) => Err(e),
        },
        other => Err((METHOD_NOT_FOUND, format!("unknown method {other:?}"))),
    };
    if id.is_null() {
        return; // a notification gets no answer
    }
    conn.send(match result {
        Ok(result) => protocol::response(&id, result),
        Err((code, message)) => protocol::error(&id, code, message),
    });
}

type Reply = Result<Value, (i64, String)>;

fn parse<T: DeserializeOwned>(params: Value) -> Result<T, (i64, String)> {
    serde_json::from_value(params).map_err(|e| (INVALID_PARAMS, format!("invalid params: {e}")))
}

fn reply_to_invoke(conn: &Conn, frame: &Value, id: &Value) {
    let waiting = id.as_u64().and_then(|n| lock(&conn.pending).remove(&n));
    let Some(waiting) = waiting else {
        conn.send(protocol::error(
            &Value::Null,
            INVALID_REQUEST,
            format!("reply to unknown request id {id}"),
        ));
        return;
    };
    let reply = match (frame.get("result"), frame.get("error")) {
        (Some(result), None) => Ok(result.get("value").cloned().unwrap_or_else(|| result.clone())),
        (None, Some(error)) => Err(error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the agent's tool failed")
            .to_owned()),
        _ => Err("the agent's reply had neither \"result\" nor \"error\"".to_owned()),
    };
    let _ = waiting.send(reply);
}

fn open_session(link: &Arc<Link>, conn: &Arc<Conn>, params: OpenSession) -> Reply {
    let mut session = lock(&conn.session);
    if session.is_some() {
        return Err((APPLICATION_ERROR, "a session is already open on this connection".into()));
    }
    let mut builder = AgentPipelineScope::builder()
        .parent(&link.root)
        .label(params.label.clone().unwrap_or_else(|| params.session_id.clone()))
        .session_id(&params.session_id);
    if let Some(owner) = &params.owner {
        builder = builder.owner(owner);
    }
    let scope = builder.build().map_err(|e| (APPLICATION_ERROR, e.to_string()))?;
    let weak = Arc::downgrade(conn);
    let watched = scope.clone();
    let changes = link.registry.on_tools_change(move |event| {
        let visible = event.scope.as_ref().is_none_or(|s| watched.is_within(s));
        if let (true, Some(conn)) = (visible, weak.upgrade()) {
            let kind = if event.kind == ToolsChangeKind::Registered {
                "registered"
            } else {
                "disposed"
            };
            conn.send(protocol::notification(
                "tools/change",
                json!({"kind": kind, "name": event.name, "scope": event.scope.as_ref().and_then(|s| s.label())}),
            ));
        }
    });
    link.scopes_changed(Some(&scope), None);
    link.send(AppEvent::Note(format!(
        "agent {} connected (session {}, owner {})",
        scope.label().unwrap_or_default(),
        params.session_id,
        params.owner.as_deref().unwrap_or("none")
    )));
    let label = scope.label().map(str::to_owned);
    *session = Some(AgentSession {
        scope,
        tools: HashMap::new(),
        _changes: changes,
    });
    Ok(json!({"scope": label}))
}

fn no_session() -> (i64, String) {
    (APPLICATION_ERROR, "open a session first (session/open)".into())
}

fn register_tool(link: &Arc<Link>, conn: &Arc<Conn>, params: RegisterTool) -> Reply {
    let scope = conn.scope().ok_or_else(no_session)?;
    let weak: Weak<Conn> = Arc::downgrade(conn);
    let body = move |arguments: Value, ctx: ToolContext| {
        let weak = weak.clone();
        async move {
            let conn = weak.upgrade().ok_or("the agent disconnected")?;
            conn.invoke(&ctx, arguments).await
        }
    };
    let tool = Tool::new(&params.name, &params.description, params.parameters, body);
    let options = Concurrency::options(params.concurrency.as_ref(), params.metadata);
    let registration = link
        .registry
        .register(tool, Some(&scope), options)
        .map_err(|e| (APPLICATION_ERROR, e.to_string()))?;
    // Registering a name again replaces this agent's earlier registration.
    let mut session = lock(&conn.session);
    let session = session.as_mut().ok_or_else(no_session)?;
    session.tools.insert(params.name.clone(), registration);
    Ok(json!({"registered": params.name}))
}

fn unregister_tool(conn: &Arc<Conn>, params: UnregisterTool) -> Reply {
    let removed = lock(&conn.session)
        .as_mut()
        .ok_or_else(no_session)?
        .tools
        .remove(&params.name);
    Ok(json!({"unregistered": removed.is_some()}))
}

fn list_tools(link: &Arc<Link>, conn: &Arc<Conn>) -> Reply {
    let scope = conn.scope().ok_or_else(no_session)?;
    Ok(serde_json::to_value(link.registry.declarations(Some(&scope))).unwrap_or_default())
}

/// Tells the agent, the journal and the screen about every call and result.
pub(super) struct LinkSink<'a> {
    /// The agent to notify; hooks have no one listening.
    pub(super) conn: Option<&'a Conn>,
    pub(super) link: &'a Link,
    pub(super) batch_id: &'a str,
    pub(super) ui: Option<UiSink>,
}

impl ToolBatchSink for LinkSink<'_> {
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(async move {
            if let Some(journal) = &self.link.journal {
                journal.call_declared(call).await?;
            }
            if let Some(conn) = self.conn {
                conn.send(protocol::notification(
                    "tool/call",
                    json!({"batch_id": self.batch_id, "index": call.index, "call_id": call.call.call_id, "name": call.call.name, "mode": call.mode.as_str()}),
                ));
            }
            if let Some(ui) = &self.ui {
                ui.call_declared(call).await?;
            }
            Ok(())
        })
    }

    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(async move {
            if let Some(ui) = &self.ui {
                ui.outcome_ready(ready).await?;
            }
            let o = ready.outcome;
            if let Some(conn) = self.conn {
                conn.send(protocol::notification(
                    "tool/result",
                    json!({"batch_id": self.batch_id, "index": ready.index, "call_id": o.call_id(), "name": o.name(),
                           "code": o.code().map(|c| c.as_str()), "value": o.value()}),
                ));
            }
            match &self.link.journal {
                Some(journal) => journal.outcome_ready(ready).await,
                None => Ok(()),
            }
        })
    }
}

async fn execute_batch(link: &Link, conn: &Conn, params: ExecuteBatch) -> Reply {
    let scope = conn.scope().ok_or_else(no_session)?;
    let ui_batch = link.next_batch.fetch_add(1, Ordering::Relaxed);
    let batch_id = params.batch_id.unwrap_or_else(|| format!("batch-{ui_batch}"));
    let token = conn.cancel.child_token();
    lock(&conn.batches).insert(batch_id.clone(), token.clone());
    let calls: Vec<ToolCall> = params
        .calls
        .into_iter()
        .map(|c| ToolCall::new(c.id, c.name, c.arguments))
        .collect();
    let view = link.registry.seal(Some(&scope));
    let parallelism = params
        .max_parallelism
        .and_then(NonZeroUsize::new)
        .unwrap_or(NonZeroUsize::MIN.saturating_add(3));
    if let Some(events) = &link.events {
        events.send(AppEvent::BatchStarted {
            batch: ui_batch,
            label: format!("{} · {batch_id}", scope.label().unwrap_or("agent")),
            scope: Some(scope.id()),
            scope_label: scope.label().unwrap_or("agent").to_owned(),
            calls: calls.iter().map(|c| (c.clone(), view.classify(c))).collect(),
            max_parallelism: parallelism.get(),
        });
    }
    let sink = LinkSink {
        conn: Some(conn),
        link,
        batch_id: &batch_id,
        ui: link.events.clone().map(|events| UiSink {
            batch: ui_batch,
            events,
            journal: None,
        }),
    };
    let started = Instant::now();
    let result = link
        .registry
        .execute_batch(calls, &view, parallelism, Some(&sink), &token)
        .await;
    lock(&conn.batches).remove(&batch_id);
    link.send(AppEvent::BatchFinished { batch: ui_batch });
    let outcomes: Vec<Value> = result
        .outcomes
        .iter()
        .map(|o| {
            let trail = link.log.take(&CallKey {
                scope: Some(scope.id()),
                call_id: o.call_id().to_owned(),
            });
            let line = json!({
                "call_id": o.call_id(), "name": o.name(), "code": o.code().map(|c| c.as_str()),
                "value": o.value(), "is_error": o.is_error(), "decided_by": decided_by(o, &trail),
            });
            if let Some(printer) = &link.outcomes {
                let mut printed = line.clone();
                printed["agent"] = json!(scope.session_id());
                printed["batch_id"] = json!(batch_id);
                let _ = printer.send(printed);
            }
            line
        })
        .collect();
    tracing::info!(batch = %batch_id, calls = outcomes.len(), elapsed = ?started.elapsed(), "agent batch finished");
    Ok(json!({"batch_id": batch_id, "outcomes": outcomes}))
}
