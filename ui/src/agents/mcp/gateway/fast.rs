//! The client's `tools/call` taken off its stdio before rmcp parses it
//! (`lines/`), run through the same [`Gateway::call`] as rmcp's handler
//! runs it, and answered with the result rmcp would have written.
//!
//! Taken only when nothing about the request needs rmcp: the session
//! initialized, the request a plain JSON-RPC 2.0 `tools/call` whose
//! parameters are a known tool's name, its arguments and a `_meta` with
//! none of rmcp's keys (no task, no per-request protocol version; a
//! progress token and a client's own marks, as Claude Code's tool use id,
//! are fine), and the tool one of the gateway's. Anything else passes to
//! rmcp as before, which answers it itself: an unknown tool, a malformed
//! request, a `tools/call` before `initialized`. A `notifications/cancelled`
//! for a call taken here cancels it (the client then hears no answer for
//! it, as rmcp does).
//!
//! What it saves: rmcp's typed parse of the request, the task and tracing
//! span it starts for it, and the response's trip through its service
//! loop; measured by `cargo bench -p tether --bench mcp` (docs/performance.md).

use rmcp::model::{ProgressToken, ProtocolVersion};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tether_tools::ToolExecutionOutcome;
use tokio_util::sync::CancellationToken;

use super::super::lines::LineSink;
use super::super::upstream::ProgressRoute;
use super::answer;
use super::calls::result_of;
use super::{Gateway, Request, lock};

/// What the gateway looks at in a line from the client: its parameters
/// are only looked into for a `tools/call` (or a cancellation).
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    id: Option<Value>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

/// A `tools/call`'s parameters, when they hold nothing rmcp reads.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams<'a> {
    name: String,
    /// Kept as the client wrote them: the pipeline reads this text (as it
    /// reads a socket agent's), so it is not parsed into a tree and
    /// written out again here.
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta", default)]
    meta: Option<Value>,
}

/// A `tools/call` the gateway runs itself.
struct Call {
    id: Value,
    shown: String,
    /// The arguments' JSON text (an object).
    arguments: String,
    progress: Option<ProgressToken>,
}

impl Call {
    /// The call in `message` when it needs nothing of rmcp's.
    fn of(message: Message<'_>) -> Option<Self> {
        let id = message.id.filter(|id| id.is_string() || id.is_u64() || id.is_i64())?;
        if message.jsonrpc.as_deref() != Some("2.0") || message.method.as_deref() != Some("tools/call") {
            return None;
        }
        // Any other key is rmcp's (a task): it is then left to rmcp.
        let params: CallParams<'_> = serde_json::from_str(message.params?.get()).ok()?;
        let progress = match params.meta {
            None => None,
            Some(Value::Object(mut meta)) => {
                let token = meta.remove("progressToken");
                // rmcp reads its own keys (a request's protocol version,
                // client info, log level); any other key (Claude Code's
                // `claudecode/toolUseId`) neither it nor the gateway uses.
                if meta.keys().any(|key| key.starts_with("io.modelcontextprotocol/")) {
                    return None;
                }
                match token {
                    None => None,
                    Some(token) => Some(serde_json::from_value::<ProgressToken>(token).ok()?),
                }
            }
            Some(_) => return None,
        };
        // `null` is no arguments, as rmcp reads it.
        let arguments = match params.arguments {
            None => "{}".to_owned(),
            Some(raw) if raw.get().starts_with('{') => raw.get().to_owned(),
            Some(_) => return None,
        };
        Some(Self {
            id,
            shown: params.name,
            arguments,
            progress,
        })
    }
}

impl Gateway {
    /// Takes `line` when it is a `tools/call` (or the cancellation of one)
    /// the gateway answers itself on `sink`; `false` leaves it to rmcp.
    pub(in crate::agents::mcp) fn take_line(&self, line: &[u8], sink: &LineSink) -> bool {
        let Ok(message) = serde_json::from_slice::<Message>(line) else {
            return false;
        };
        if message.method.as_deref() == Some("notifications/cancelled") {
            let params = message
                .params
                .and_then(|p| serde_json::from_str::<Map<String, Value>>(p.get()).ok());
            return self.cancel_taken(params.as_ref());
        }
        if !*self.0.ready.borrow() {
            return false;
        }
        let Some(client) = lock(&self.0.client).clone() else {
            return false;
        };
        let Some(call) = Call::of(message) else {
            return false;
        };
        let Some((server, name)) = self.resolve(&call.shown) else {
            return false;
        };
        if Request::reserved(&name).is_some() || self.with_listed(server, &name, |_| ()).is_none() {
            return false;
        }
        let key = call.id.to_string();
        let cancel = CancellationToken::new();
        {
            let mut taken = lock(&self.0.taken);
            if taken.contains_key(&key) {
                return false; // an id still running: rmcp says what it says of that
            }
            taken.insert(key.clone(), cancel.clone());
        }
        tracing::debug!(id = %key, tool = %call.shown, "a tools/call taken off the client's stdio");
        let (this, sink) = (self.clone(), sink.clone());
        tokio::spawn(async move {
            let progress = call.progress.map(|token| ProgressRoute::Line((token, sink.clone())));
            let newer = client
                .peer_info()
                .is_some_and(|info| info.protocol_version.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
            // The client has a plain success as soon as the journal holds
            // it, before the console's bookkeeping of the batch: a refusal
            // (which names what decided it) or an edited call (which says
            // so) waits for it.
            let answered = AtomicBool::new(false);
            let early = |outcome: &ToolExecutionOutcome| {
                let plain = outcome.code().is_none() && !lock(&this.0.edits).contains_key(outcome.call_id());
                // Taken out of the running calls, so the client may reuse its id at once.
                if plain && lock(&this.0.taken).remove(&key).is_some() {
                    if let Some(line) = answer::success(&call.id, outcome.value(), newer) {
                        sink.send(line);
                    }
                    answered.store(true, Ordering::Relaxed);
                }
            };
            let (outcome, edited) = this
                .run(
                    server,
                    Request::Tool,
                    &name,
                    &call.arguments,
                    progress,
                    &cancel,
                    Some(&early),
                )
                .await;
            if answered.load(Ordering::Relaxed) || lock(&this.0.taken).remove(&key).is_none() {
                return; // answered, or cancelled by the client (no answer)
            }
            // A plain success not answered early (the console over its
            // socket, or the gateway's own policy) goes as the server wrote
            // it too.
            let line = if edited.is_none() && outcome["code"].is_null() {
                answer::success(&call.id, &outcome["value"], newer)
            } else {
                answer::shaped(&call.id, result_of(outcome, edited), newer)
            };
            if let Some(line) = line {
                sink.send(line);
            }
        });
        true
    }

    /// A client's `notifications/cancelled` for a call taken here.
    fn cancel_taken(&self, params: Option<&Map<String, Value>>) -> bool {
        let Some(id) = params.and_then(|p| p.get("requestId")) else {
            return false;
        };
        match lock(&self.0.taken).remove(&id.to_string()) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(message: &Value) -> Option<Call> {
        let line = message.to_string();
        Call::of(serde_json::from_str(&line).unwrap())
    }

    #[test]
    fn a_plain_tools_call_is_taken_with_its_progress_token() {
        let taken = call(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "hi"}, "_meta": {"progressToken": "p1"}}}))
        .unwrap();
        assert_eq!((taken.id, taken.shown.as_str()), (json!(7), "echo"));
        assert_eq!(taken.arguments, r#"{"message":"hi"}"#);
        assert_eq!(serde_json::to_value(taken.progress).unwrap(), json!("p1"));
        // Claude Code marks each call with its tool use id: not rmcp's business.
        let claude = call(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}, "_meta": {"claudecode/toolUseId": "toolu_01", "progressToken": 8}}}))
        .unwrap();
        assert_eq!(serde_json::to_value(claude.progress).unwrap(), json!(8));
        let bare =
            call(&json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "echo"}})).unwrap();
        assert_eq!(bare.arguments, "{}");
        assert!(bare.progress.is_none());
    }

    #[test]
    fn whatever_needs_rmcp_is_left_to_it() {
        let base =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {}}});
        let with = |pointer: &str, value: Value| {
            let mut message = base.clone();
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            message.pointer_mut(parent).unwrap()[key] = value;
            message
        };
        for (why, message) in [
            ("a task", with("/params/task", json!({"ttl": 1000}))),
            (
                "a request's own protocol version",
                with(
                    "/params/_meta",
                    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
                ),
            ),
            (
                "a request's own client info",
                with(
                    "/params/_meta",
                    json!({"io.modelcontextprotocol/clientInfo": {"name": "x"}}),
                ),
            ),
            ("a meta that is not an object", with("/params/_meta", json!("x"))),
            (
                "a progress token that is neither text nor number",
                with("/params/_meta", json!({"progressToken": [1]})),
            ),
            (
                "arguments that are not an object",
                with("/params/arguments", json!([1])),
            ),
            ("a name that is not text", with("/params/name", json!(3))),
            ("another method", with("/method", json!("tools/list"))),
            ("another JSON-RPC", with("/jsonrpc", json!("1.0"))),
            ("an id that is neither text nor integer", with("/id", json!(1.5))),
            ("a notification (no id)", with("/id", Value::Null)),
        ] {
            assert!(call(&message).is_none(), "{why}: {message}");
        }
        assert!(call(&base).is_some());
    }
}
