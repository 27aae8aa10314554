//! One agent's connection: reads requests and replies line by line, writes
//! through one writer task, and cleans up everything the agent left behind
//! when it goes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tether_tools::{AgentPipelineScope, Tool, ToolContext, ToolsChangeKind};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use super::conn::{AgentSession, Conn, Reply, lock, no_session, reply_to_invoke};
use super::protocol::{self, *};
use super::state::Link;
use super::wire::{Frame, LineReader, Outbox};
use crate::files::scenario::Concurrency;
use crate::session::approval::AgentConnection;
use crate::session::events::AppEvent;

/// The connection's running batches. Polled by the connection's own task
/// rather than each spawned as a task: a spawn costs an aligned allocation
/// and a copy of the batch's future, a good share of a remote call's work.
type Batches = FuturesUnordered<BoxFuture<'static, ()>>;

pub(super) async fn handle(link: Arc<Link>, stream: UnixStream, stop: CancellationToken) {
    match super::quiet::split(stream) {
        Ok((read, write)) => serve_halves(link, read, write, stop).await,
        Err(error) => tracing::warn!(%error, "could not serve an agent's connection"),
    }
}

/// What a connection reads from: a socket's read half, which can carry
/// descriptors, or an in-process stream, which cannot.
pub(super) trait Incoming: tokio::io::AsyncRead + Unpin {
    /// The descriptors received with what was read so far.
    fn take_fds(&mut self) -> Vec<std::os::fd::OwnedFd> {
        Vec::new()
    }
}

impl Incoming for super::quiet::ReadHalf {
    fn take_fds(&mut self) -> Vec<std::os::fd::OwnedFd> {
        super::quiet::ReadHalf::take_fds(self)
    }
}

impl Incoming for tokio::io::ReadHalf<tokio::io::DuplexStream> {}

/// Serves one agent on a connection's two halves.
pub(super) async fn serve_halves(
    link: Arc<Link>,
    incoming: impl Incoming,
    write: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
    stop: CancellationToken,
) {
    serve_conn(link, new_conn(stop, None), incoming, write).await;
}

/// A connection's state, before it is served; `direct` runs its tool
/// bodies in this process (a hosted gateway's) instead of asking the agent.
pub(super) fn new_conn(stop: CancellationToken, direct: Option<super::Invoke>) -> Arc<Conn> {
    Arc::new(Conn {
        out: Arc::new(Outbox::default()),
        pending: Mutex::default(),
        next_id: AtomicU64::new(1),
        cancel: stop,
        session: Mutex::new(None),
        batches: Mutex::default(),
        view: Mutex::default(),
        fds: Mutex::default(),
        carrier: std::sync::atomic::AtomicBool::new(false),
        direct,
    })
}

/// Serves `conn`'s agent on its two halves.
pub(super) async fn serve_conn(
    link: Arc<Link>,
    conn: Arc<Conn>,
    mut incoming: impl Incoming,
    write: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
) {
    let writer = tokio::spawn(Arc::clone(&conn.out).run(write));
    let agents = link.agents.fetch_add(1, Ordering::SeqCst) + 1;
    link.send(AppEvent::AgentsChanged { connected: agents });

    let mut lines = LineReader::default();
    let mut batches = Batches::new();
    // One wait for the whole connection, not one per read.
    let cancelled = conn.cancel.clone().cancelled_owned();
    tokio::pin!(cancelled);
    loop {
        while let Some(frame) = lines.next_frame() {
            if conn.cancel.is_cancelled() {
                break;
            }
            handle_frame(&link, &conn, &mut batches, frame);
        }
        let read = tokio::select! {
            () = &mut cancelled => break,
            Some(()) = batches.next(), if !batches.is_empty() => continue,
            read = lines.fill(&mut incoming) => read,
        };
        match read {
            Ok(0) => {
                // The last line may end without a newline.
                if let Some(frame) = lines.rest() {
                    handle_frame(&link, &conn, &mut batches, frame);
                }
                break;
            }
            Ok(_) => {
                let fds = incoming.take_fds();
                if !fds.is_empty() {
                    lock(&conn.fds).extend(fds);
                }
            }
            Err(error) => {
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
        lock(&link.sessions).retain(|(scope, _)| *scope != session.scope);
        let label = session.scope.label().unwrap_or_default().to_owned();
        drop(session.tools);
        for child in session.children.values() {
            link.scopes_changed(None, Some(child));
        }
        link.scopes_changed(None, Some(&session.scope));
        link.send(AppEvent::Note(format!(
            "agent {label} disconnected; its tools were disposed"
        )));
    }
    // Cancelled batches still write their outcomes before the socket closes.
    while batches.next().await.is_some() {}
    if !conn.carrier.load(Ordering::SeqCst) {
        let agents = link.agents.fetch_sub(1, Ordering::SeqCst) - 1;
        link.send(AppEvent::AgentsChanged { connected: agents });
    }
    drop(conn);
    let _ = writer.await;
}

fn handle_frame(link: &Arc<Link>, conn: &Arc<Conn>, batches: &mut Batches, frame: Frame<'_>) {
    match frame {
        Frame::Line(text) => dispatch(link, conn, batches, text),
        Frame::TooLong => conn.send(protocol::error(
            &Value::Null,
            INVALID_REQUEST,
            format!("line longer than {MAX_LINE} bytes; it was skipped"),
        )),
        Frame::NotUtf8 { valid_up_to } => conn.send(protocol::error(
            &Value::Null,
            PARSE_ERROR,
            format!("not JSON: the line is not valid UTF-8 (bad byte at offset {valid_up_to})"),
        )),
    }
}

fn dispatch(link: &Arc<Link>, conn: &Arc<Conn>, batches: &mut Batches, text: &str) {
    // The frames of every remote call first, without a JSON tree.
    if let Some(frame) = HotFrame::read(text) {
        match (frame.method, frame.params) {
            (Some("batch/execute"), Some(params)) => return execute(link, conn, batches, frame.id, params),
            (None, None) => return reply_to_invoke(conn, &frame.id, frame.result, frame.error.as_ref()),
            _ => {}
        }
    }
    let mut frame: Value = match serde_json::from_str(text) {
        Ok(frame) => frame,
        Err(e) => {
            conn.send(protocol::error(&Value::Null, PARSE_ERROR, format!("not JSON: {e}")));
            return;
        }
    };
    let id = frame.get("id").cloned().unwrap_or(Value::Null);
    // JSON-RPC 2.0 ids are strings, numbers or null; anything else cannot
    // be echoed back meaningfully, so the request is refused as a whole.
    if !matches!(id, Value::Null | Value::String(_) | Value::Number(_)) {
        conn.send(protocol::error(
            &Value::Null,
            INVALID_REQUEST,
            "the id must be a string, a number or null",
        ));
        return;
    }
    if frame.get("jsonrpc") != Some(&json!("2.0")) || !frame.is_object() {
        conn.send(protocol::error(
            &id,
            INVALID_REQUEST,
            "expected a JSON-RPC 2.0 object with \"jsonrpc\": \"2.0\"",
        ));
        return;
    }
    // Taken, not cloned: a batch's params hold every call's arguments.
    let params = frame.get_mut("params").map_or_else(|| json!({}), Value::take);
    let Some(method) = frame.get("method").and_then(Value::as_str) else {
        let result = frame.get_mut("result").map(Value::take).map(InvokeResult::from_value);
        reply_to_invoke(conn, &id, result, frame.get("error"));
        return;
    };
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
        "mcp/host" => {
            let fds = std::mem::take(&mut *lock(&conn.fds));
            let hosted = match &link.mcp_host {
                Some(host) => host(link, params, fds, conn.cancel.clone()).map_err(|why| (INVALID_PARAMS, why)),
                None => Err((
                    METHOD_NOT_FOUND,
                    format!("unknown method {method:?}: this console hosts no gateway"),
                )),
            };
            if hosted.is_ok() && !conn.carrier.swap(true, Ordering::SeqCst) {
                let agents = link.agents.fetch_sub(1, Ordering::SeqCst) - 1;
                link.send(AppEvent::AgentsChanged { connected: agents });
            }
            hosted
        }
        "batch/execute" => match parse::<ExecuteBatch>(params) {
            Ok(params) => return execute(link, conn, batches, id, params),
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

/// Runs a batch alongside the connection's others; its response is written
/// when it ends. A batch that panics ends alone, as a task of its own would.
fn execute(link: &Arc<Link>, conn: &Arc<Conn>, batches: &mut Batches, id: Value, params: ExecuteBatch) {
    let (link, conn) = (Arc::clone(link), Arc::clone(conn));
    let batch = async move {
        super::batch::execute_batch(&link, &conn, &id, params).await;
    };
    batches.push(std::panic::AssertUnwindSafe(batch).catch_unwind().map(drop).boxed());
}

fn parse<T: DeserializeOwned>(params: Value) -> Result<T, (i64, String)> {
    serde_json::from_value(params).map_err(|e| (INVALID_PARAMS, format!("invalid params: {e}")))
}

fn open_session(link: &Arc<Link>, conn: &Arc<Conn>, params: OpenSession) -> Reply {
    let mut session = lock(&conn.session);
    if session.is_some() {
        return Err((APPLICATION_ERROR, "a session is already open on this connection".into()));
    }
    let mut builder = AgentPipelineScope::builder()
        .parent(&link.root)
        .label(params.label.clone().unwrap_or_else(|| params.session_id.clone()))
        .session_id(&params.session_id)
        .session(Arc::new(AgentConnection {
            closed: conn.cancel.clone(),
        }));
    if let Some(owner) = &params.owner {
        builder = builder.owner(owner);
    }
    let scope = builder.build().map_err(|e| (APPLICATION_ERROR, e.to_string()))?;
    let notifications = params.notifications;
    let weak = Arc::downgrade(conn);
    let watched = scope.clone();
    let changes = link.registry.on_tools_change(move |event| {
        if !notifications {
            return;
        }
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
    lock(&link.sessions).push((scope.clone(), Arc::downgrade(conn)));
    link.send(AppEvent::Note(format!(
        "agent {} connected (session {}, owner {})",
        scope.label().unwrap_or_default(),
        params.session_id,
        params.owner.as_deref().unwrap_or("none")
    )));
    let label = scope.label().map(str::to_owned);
    *session = Some(AgentSession {
        scope,
        children: HashMap::new(),
        tools: HashMap::new(),
        _changes: changes,
        cwd: params.cwd,
        notifications,
    });
    Ok(json!({"scope": label}))
}

/// The child scope `label` of the agent's session, made on first use.
fn child_scope(link: &Link, conn: &Conn, label: &str) -> Reply<AgentPipelineScope> {
    let mut session = lock(&conn.session);
    let session = session.as_mut().ok_or_else(no_session)?;
    if let Some(child) = session.children.get(label) {
        return Ok(child.clone());
    }
    let mut builder = AgentPipelineScope::builder().parent(&session.scope).label(label);
    if let Some(id) = session.scope.session_id() {
        builder = builder.session_id(id);
    }
    let child = builder.build().map_err(|e| (APPLICATION_ERROR, e.to_string()))?;
    session.children.insert(label.to_owned(), child.clone());
    link.scopes_changed(Some(&child), None);
    Ok(child)
}

fn register_tool(link: &Arc<Link>, conn: &Arc<Conn>, params: RegisterTool) -> Reply {
    let scope = match &params.scope {
        None => conn.scope().ok_or_else(no_session)?,
        Some(label) => child_scope(link, conn, label)?,
    };
    let weak: Weak<Conn> = Arc::downgrade(conn);
    let body = move |arguments: Value, ctx: ToolContext| {
        let weak = weak.clone();
        async move {
            let conn = weak.upgrade().ok_or("the agent disconnected")?;
            conn.invoke(&ctx, arguments).await
        }
    };
    let tool = Tool::new(&params.name, &params.description, params.parameters, body);
    let options = Concurrency::options_for(params.concurrency.as_ref(), params.metadata, Some(&scope), &params.name);
    let registration = link
        .registry
        .register(tool, Some(&scope), options)
        .map_err(|e| (APPLICATION_ERROR, e.to_string()))?;
    // Registering a name again replaces this agent's earlier registration.
    let mut session = lock(&conn.session);
    let session = session.as_mut().ok_or_else(no_session)?;
    let key = (params.scope.unwrap_or_default(), params.name.clone());
    session.tools.insert(key, registration);
    Ok(json!({"registered": params.name}))
}

fn unregister_tool(conn: &Arc<Conn>, params: UnregisterTool) -> Reply {
    let removed = lock(&conn.session)
        .as_mut()
        .ok_or_else(no_session)?
        .tools
        .remove(&(params.scope.unwrap_or_default(), params.name));
    Ok(json!({"unregistered": removed.is_some()}))
}

fn list_tools(link: &Arc<Link>, conn: &Arc<Conn>) -> Reply {
    let scope = conn.scope().ok_or_else(no_session)?;
    Ok(serde_json::to_value(link.registry.declarations(Some(&scope))).unwrap_or_default())
}
