//! One agent connection's state: its writer, the tool bodies it was asked
//! to run and is still running, its session and batches. Framing and
//! dispatch live in `connection`; the handlers use only this.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tether_tools::{AgentPipelineScope, BoxError, Registration, SealedToolCatalogView, ToolContext, ToolRegistry};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::protocol::{self, APPLICATION_ERROR, INVALID_REQUEST, InvokeResult};
use super::wire::Outbox;

type InvokeReply = Result<Value, String>;

pub(super) struct Conn {
    pub(super) out: Arc<Outbox>,
    pub(super) pending: Mutex<HashMap<u64, oneshot::Sender<InvokeReply>>>,
    pub(super) next_id: AtomicU64,
    pub(super) cancel: CancellationToken,
    pub(super) session: Mutex<Option<AgentSession>>,
    pub(super) batches: Mutex<HashMap<String, CancellationToken>>,
    /// The view the last batch ran in: the registry's change count when it
    /// was sealed, the scope's id, the view.
    pub(super) view: Mutex<Option<(u64, u64, SealedToolCatalogView)>>,
    /// Descriptors the agent sent along with its frames, for the request
    /// that takes them (`mcp/host`); dropped (closed) with the connection.
    pub(super) fds: Mutex<Vec<std::os::fd::OwnedFd>>,
    /// A proxy that handed its gateway to the console: not an agent (the
    /// hosted gateway's own session is), so not counted as one.
    pub(super) carrier: std::sync::atomic::AtomicBool,
    /// Runs the agent's tool bodies in this process (a hosted gateway's):
    /// no `tool/invoke` frame written and its answer read back.
    pub(super) direct: Option<super::Invoke>,
}

pub(super) struct AgentSession {
    pub(super) scope: AgentPipelineScope,
    /// Child scopes named by `tools/register`'s `scope`, by label.
    pub(super) children: HashMap<String, AgentPipelineScope>,
    /// By child scope label (empty for the session's own scope), then name.
    pub(super) tools: HashMap<(String, String), Registration>,
    pub(super) _changes: Registration,
    /// The working directory `session/open` gave, put on every call.
    pub(super) cwd: Option<String>,
    /// Whether the agent is sent `tool/call`, `tool/result` and `tools/change`.
    pub(super) notifications: bool,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The writer sends what is queued and ends once nothing can send more.
impl Drop for Conn {
    fn drop(&mut self) {
        self.out.close();
    }
}

impl Conn {
    /// Queues a frame. A broken writer means the agent is gone (the reader
    /// notices too); the frame is dropped.
    pub(super) fn send(&self, frame: Value) {
        self.out.push(|out| protocol::json(out, &frame));
    }

    /// Queues a frame that `write` writes (the per-call frames, written
    /// without building a JSON tree first).
    pub(super) fn write(&self, write: impl FnOnce(&mut Vec<u8>)) {
        self.out.push(write);
    }

    /// The view a batch from `scope` runs in: the last one again while no
    /// tool was registered or disposed (`changed` counts the registry's
    /// `tools/change` events) since it was sealed (sealing walks
    /// every visible tool, once per batch otherwise). The count is read
    /// before sealing, so a change that lands meanwhile only makes the next
    /// batch seal again.
    pub(super) fn view(
        &self,
        registry: &ToolRegistry,
        changed: &AtomicU64,
        scope: &AgentPipelineScope,
    ) -> SealedToolCatalogView {
        let changes = changed.load(Ordering::Acquire);
        let mut cached = lock(&self.view);
        if let Some((sealed_at, id, view)) = &*cached {
            if *sealed_at == changes && *id == scope.id() {
                return view.clone();
            }
        }
        let view = registry.seal(Some(scope));
        *cached = Some((changes, scope.id(), view.clone()));
        view
    }

    pub(super) fn scope(&self) -> Option<AgentPipelineScope> {
        lock(&self.session).as_ref().map(|s| s.scope.clone())
    }

    /// The session's scope, or one of its child scopes by label.
    pub(super) fn scope_named(&self, child: Option<&str>) -> Result<AgentPipelineScope, (i64, String)> {
        let session = lock(&self.session);
        let session = session.as_ref().ok_or_else(no_session)?;
        match child {
            None => Ok(session.scope.clone()),
            Some(label) => session
                .children
                .get(label)
                .cloned()
                .ok_or_else(|| (APPLICATION_ERROR, format!("no scope {label:?} in this session"))),
        }
    }

    /// Sends the agent a request of the console's own (not a tool body) and
    /// waits for its answer; the answer comes back like a body's.
    pub(super) async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        lock(&self.pending).insert(id, reply);
        self.send(protocol::request(id, method, params));
        tokio::select! {
            answer = answer => answer.unwrap_or_else(|_| Err("the agent disconnected".into())),
            () = self.cancel.cancelled() => Err("the agent disconnected".into()),
        }
    }

    /// Calls the agent back to run a tool body.
    pub(super) async fn invoke(&self, ctx: &ToolContext, arguments: Value) -> Result<Value, BoxError> {
        let execution = ctx.execution();
        let edited = execution.edited_from().is_some();
        if let Some(direct) = &self.direct {
            let (call_id, name) = (execution.call_id().to_owned(), execution.name().to_owned());
            let run = direct(call_id, name, arguments, edited, ctx.cancellation().clone());
            return tokio::select! {
                result = run => result.map_err(BoxError::from),
                () = self.cancel.cancelled() => Err("the agent disconnected".into()),
            };
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        lock(&self.pending).insert(id, reply);
        self.write(|out| protocol::invoke(out, id, execution.call_id(), execution.name(), &arguments, edited));
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

pub(super) type Reply<T = Value> = Result<T, (i64, String)>;

pub(super) fn no_session() -> (i64, String) {
    (APPLICATION_ERROR, "open a session first (session/open)".into())
}

/// The agent's answer to a `tool/invoke`: `result` and `error` as the frame
/// has them (`Some(Null)` for an explicit null).
pub(super) fn reply_to_invoke(conn: &Conn, id: &Value, result: Option<InvokeResult>, error: Option<&Value>) {
    let waiting = id.as_u64().and_then(|n| lock(&conn.pending).remove(&n));
    let Some(waiting) = waiting else {
        conn.send(protocol::error(
            &Value::Null,
            INVALID_REQUEST,
            format!("reply to unknown request id {id}"),
        ));
        return;
    };
    let reply = match (result, error) {
        (Some(InvokeResult(value)), None) => Ok(value),
        (None, Some(error)) => Err(error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the agent's tool failed")
            .to_owned()),
        _ => Err("the agent's reply had neither \"result\" nor \"error\"".to_owned()),
    };
    let _ = waiting.send(reply);
}
