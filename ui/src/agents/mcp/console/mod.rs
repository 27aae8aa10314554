//! The gateway's end of the agent link: one session on the running console,
//! requests answered by id, and the console's `tool/invoke` call-backs run
//! by the gateway (which forwards them upstream).

use std::collections::HashMap;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::net::UnixStream;
use tokio::sync::oneshot;
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::sync::CancellationToken;

use super::lines::LineSink;
use crate::agents::link::protocol::{self, MAX_LINE};

/// How what the model reads begins when there is no console to ask.
pub use crate::agents::link::socket::NOT_RUNNING;

/// What the model reads when nothing listens on `socket`: [`NOT_RUNNING`]
/// and the socket tried.
pub fn not_running(socket: &Path) -> String {
    crate::agents::link::socket::Unreachable::NotRunning(socket.to_path_buf()).to_string()
}

pub use crate::agents::link::Invoke;

/// What the console's `mcp/approve` carries: the held tool, and the new
/// definition the human was shown and approved, with its SHA-256 name.
#[derive(Debug, Clone)]
pub struct Approval {
    pub server: String,
    pub tool: String,
    pub hash: String,
    /// The definition as the console showed it (`Null` from a console that
    /// sends none: nothing is approved then).
    pub definition: Value,
}

/// Answers the console's `mcp/approve`.
pub type Approve = Arc<dyn Fn(Approval) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

type Waiting = oneshot::Sender<Result<Value, String>>;

/// One call the gateway runs through the console, as a one-call batch.
pub struct OneCall<'a> {
    /// The call's id, which is the batch's too.
    pub id: &'a str,
    pub name: &'a str,
    /// The arguments' JSON text, as the client wrote it.
    pub arguments: &'a str,
    /// The scope (the server's) the tool is registered in.
    pub scope: &'a str,
    /// Where the call runs, when the client said (its root).
    pub cwd: Option<&'a str>,
    /// Told the outcome once the journal holds it (a hosted call only).
    pub early: Option<crate::agents::link::EarlyOutcome<'a>>,
}

/// A live session on the console.
pub struct ConsoleLink {
    out: LineSink,
    pending: Mutex<HashMap<u64, Waiting>>,
    invokes: Mutex<HashMap<u64, CancellationToken>>,
    next_id: AtomicU64,
    /// Fires when the console goes away.
    pub closed: CancellationToken,
    /// The console this process is: batches run on it directly.
    direct: std::sync::OnceLock<crate::agents::link::InProcess>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ConsoleLink {
    /// Connects and opens the session (`session/open` params).
    ///
    /// # Errors
    /// [`not_running`] when nobody listens on `socket`; the console's refusal otherwise.
    pub async fn connect(socket: &Path, session: Value, invoke: Invoke, approve: Approve) -> Result<Arc<Self>, String> {
        let stream = UnixStream::connect(socket).await.map_err(|error| {
            // Said by the gateway when it changes, not at each call.
            tracing::debug!(%error, socket = %socket.display(), "no console");
            not_running(socket)
        })?;
        let (read, write) = crate::agents::link::quiet::split(stream).map_err(|error| {
            tracing::warn!(%error, "could not use the console's socket");
            not_running(socket)
        })?;
        Self::open(read, write, session, invoke, approve).await
    }

    /// Opens the session on the console this process is (a gateway the
    /// console hosts): the same link, through memory instead of a socket.
    ///
    /// # Errors
    /// The console's refusal.
    pub async fn in_process(
        link: &Arc<crate::agents::link::Link>,
        stop: CancellationToken,
        session: Value,
        invoke: Invoke,
        approve: Approve,
    ) -> Result<Arc<Self>, String> {
        let (stream, direct) = crate::agents::link::connect_in_process(link, stop, Arc::clone(&invoke));
        let (read, write) = tokio::io::split(stream);
        let link = Self::open(read, write, session, invoke, approve).await?;
        let _ = link.direct.set(direct);
        Ok(link)
    }

    async fn open(
        read: impl tokio::io::AsyncRead + Send + Unpin + 'static,
        write: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
        session: Value,
        invoke: Invoke,
        approve: Approve,
    ) -> Result<Arc<Self>, String> {
        let closed = CancellationToken::new();
        let link = Arc::new(Self {
            out: LineSink::start_until(write, closed.clone()),
            pending: Mutex::default(),
            invokes: Mutex::default(),
            next_id: AtomicU64::new(1),
            closed,
            direct: std::sync::OnceLock::new(),
        });
        let reader = Arc::clone(&link);
        tokio::spawn(async move {
            let mut lines = FramedRead::new(read, LinesCodec::new_with_max_length(MAX_LINE));
            loop {
                let line = tokio::select! {
                    () = reader.closed.cancelled() => break,
                    line = lines.next() => line,
                };
                match line {
                    Some(Ok(line)) => reader.dispatch(&line, &invoke, &approve),
                    Some(Err(error)) => {
                        tracing::warn!(%error, "the console's link failed");
                        break;
                    }
                    None => break,
                }
            }
            reader.closed.cancel();
            for (_, waiting) in lock(&reader.pending).drain() {
                let _ = waiting.send(Err("the Tether console went away".into()));
            }
            for (_, token) in lock(&reader.invokes).drain() {
                token.cancel();
            }
        });
        if let Err(why) = link.request("session/open", session.clone()).await {
            // A console from before `notifications` refuses the field: the
            // session opens without it (and hears every notification).
            let mut session = session;
            let refused_field = why.contains("`notifications`");
            match session.as_object_mut().and_then(|s| s.remove("notifications")) {
                Some(_) if refused_field => link.request("session/open", session).await.map(drop)?,
                _ => return Err(why),
            }
        }
        Ok(link)
    }

    /// Sends a request and waits for its answer (or the console's end).
    ///
    /// # Errors
    /// The console's error message, or that it went away.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        lock(&self.pending).insert(id, reply);
        self.send(&protocol::request(id, method, params));
        tokio::select! {
            // An answer read just before the console hung up is its answer.
            biased;
            answer = answer => answer.unwrap_or_else(|_| Err("the Tether console went away".into())),
            () = self.closed.cancelled() => Err("the Tether console went away".into()),
        }
    }

    /// Runs `call` through the console's pipeline as a one-call batch: its
    /// outcome as `{"code", "value", "decided_by"}`. Cancelling `cancel`
    /// cancels the batch, whose outcome then still comes. On the console
    /// this process is, the batch runs directly: no frame is built or read.
    ///
    /// # Errors
    /// The console's error message, or that it went away.
    pub async fn execute(&self, call: OneCall<'_>, cancel: &CancellationToken) -> Result<Value, String> {
        let Some(direct) = self.direct.get() else {
            let mut batch = json!({
                "batch_id": call.id, "max_parallelism": 1, "scope": call.scope,
                "calls": [{"id": call.id, "name": call.name, "arguments": call.arguments}],
            });
            if let Some(cwd) = call.cwd {
                batch["cwd"] = json!(cwd);
            }
            let execute = std::pin::pin!(self.request("batch/execute", batch));
            let mut answer = self.cancelling(call.id, execute, cancel).await?;
            return Ok(answer["outcomes"][0].take());
        };
        let batch = protocol::ExecuteBatch {
            batch_id: Some(call.id.to_owned()),
            calls: vec![protocol::CallParams {
                id: call.id.to_owned(),
                name: call.name.to_owned(),
                arguments: call.arguments.to_owned(),
                agent_type: None,
                agent_id: None,
            }],
            max_parallelism: Some(1),
            scope: Some(call.scope.to_owned()),
            cwd: call.cwd.map(str::to_owned),
        };
        let run = std::pin::pin!(direct.execute(batch, call.early));
        let outcomes = tokio::select! {
            biased;
            answer = self.cancelling(call.id, run, cancel) => answer?,
            () = self.closed.cancelled() => return Err("the Tether console went away".into()),
        };
        let (outcome, decided_by) = outcomes
            .into_iter()
            .next()
            .ok_or("the console's pipeline gave no outcome")?;
        // Built by hand: `json!` would copy the value through a serializer.
        let mut fields = serde_json::Map::with_capacity(3);
        fields.insert("code".into(), outcome.code().map(|c| c.as_str()).into());
        fields.insert("decided_by".into(), decided_by.into());
        fields.insert("value".into(), outcome.into_value());
        Ok(Value::Object(fields))
    }

    /// `run` (a batch's execution) to its end; when `cancel` fires first,
    /// the batch is cancelled on the console and its outcome still awaited.
    ///
    /// `run` comes pinned where the caller made it: taken by value, it
    /// would be kept twice in this future (as the argument and pinned),
    /// and every call's task, which holds this future, copied at each
    /// spawn and move, would be that much larger.
    async fn cancelling<T>(
        &self,
        batch_id: &str,
        mut run: Pin<&mut impl Future<Output = T>>,
        cancel: &CancellationToken,
    ) -> T {
        tokio::select! {
            answer = &mut run => answer,
            () = cancel.cancelled() => {
                let _ = self.request("batch/cancel", json!({"batch_id": batch_id})).await;
                run.await
            }
        }
    }

    fn send(&self, frame: &Value) {
        self.out.send(frame.to_string().into_bytes());
    }

    fn dispatch(self: &Arc<Self>, line: &str, invoke: &Invoke, approve: &Approve) {
        let Ok(frame) = serde_json::from_str::<Value>(line) else {
            tracing::warn!("the console sent a line that is not JSON");
            return;
        };
        match frame.get("method").and_then(Value::as_str) {
            Some("tool/invoke") => {
                let (Some(id), params) = (frame.get("id").and_then(Value::as_u64), &frame["params"]) else {
                    return;
                };
                let text = |key: &str| params[key].as_str().unwrap_or_default().to_owned();
                let token = CancellationToken::new();
                lock(&self.invokes).insert(id, token.clone());
                let edited = params["edited"] == json!(true);
                let body = invoke(
                    text("call_id"),
                    text("name"),
                    params["arguments"].clone(),
                    edited,
                    token,
                );
                let link = Arc::clone(self);
                tokio::spawn(async move {
                    let reply = match body.await {
                        Ok(value) => protocol::response(&json!(id), json!({"value": value})),
                        Err(message) => protocol::error(&json!(id), protocol::APPLICATION_ERROR, message),
                    };
                    if lock(&link.invokes).remove(&id).is_some() {
                        link.send(&reply);
                    }
                });
            }
            Some("tool/cancel") => {
                if let Some(token) = frame["params"]["id"]
                    .as_u64()
                    .and_then(|id| lock(&self.invokes).remove(&id))
                {
                    token.cancel();
                }
            }
            Some("mcp/approve") => {
                let Some(id) = frame.get("id").cloned() else { return };
                let params = &frame["params"];
                let text = |key: &str| params[key].as_str().unwrap_or_default().to_owned();
                let answer = approve(Approval {
                    server: text("server"),
                    tool: text("tool"),
                    hash: text("hash"),
                    definition: params["definition"].clone(),
                });
                let link = Arc::clone(self);
                tokio::spawn(async move {
                    link.send(&match answer.await {
                        Ok(value) => protocol::response(&id, value),
                        Err(message) => protocol::error(&id, protocol::APPLICATION_ERROR, message),
                    });
                });
            }
            Some(_) => {} // tool/call, tool/result, tools/change
            None => {
                let waiting = frame
                    .get("id")
                    .and_then(Value::as_u64)
                    .and_then(|id| lock(&self.pending).remove(&id));
                if let Some(waiting) = waiting {
                    let answer = match (frame.get("result"), frame.get("error")) {
                        (Some(result), _) => Ok(result.clone()),
                        (None, Some(error)) => Err(error["message"].as_str().unwrap_or("refused").to_owned()),
                        _ => Err("the console's answer had neither result nor error".to_owned()),
                    };
                    let _ = waiting.send(answer);
                } else if let Some(error) = frame.get("error") {
                    tracing::warn!(%error, "the console reported an error");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
