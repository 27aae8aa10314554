//! A stdio upstream's `tools/call`s sent and answered as lines, past rmcp.
//!
//! The server is started by `child.rs` (not by rmcp's `TokioChildProcess`)
//! so its stdout can be read through a `Tap`: the answer to a call sent here
//! (an id `tether-N`, which rmcp's numbered ids never are) and the progress
//! notifications about it (token `tether-N`) are taken as they are read and
//! never reach rmcp; everything else is rmcp's, as before. A progress
//! notification is written to the client as it is read, so it is always
//! ahead of the result it is about, which goes through the console first.
//! A call whose progress goes to an rmcp session (`mcp serve --http`) is
//! sent through rmcp, where `ordered.rs` keeps that order. Other
//! notifications (a log line) go through rmcp and `ordered.rs` as before;
//! against a result sent here they are forwarded while the result goes to
//! the console and back, not held for.
//!
//! What it saves: rmcp's typed parse of each result (an untagged enum of
//! every result type, tried in turn), its service loop's task hops for the
//! request and the response, and the result's conversion back to JSON.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::ProgressToken;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::super::lines::LineSink;
use super::lock;

/// What a call's progress is written to: the client's own token, and the
/// client's stdio.
pub type LineRoute = (ProgressToken, LineSink);

/// The calls sent past rmcp to one server, waiting for their answers.
pub struct Raw {
    to_server: LineSink,
    next: AtomicU64,
    waiting: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    progress: Mutex<HashMap<String, LineRoute>>,
    /// The server's stdout ended: no answer is coming.
    pub(super) ended: CancellationToken,
    /// The client's stdio once it is initialized (a stdio gateway's): the
    /// server's log messages are written there as read, so they stay ahead
    /// of a result read after them, as progress does.
    pub client: std::sync::OnceLock<LineSink>,
}

/// A line's JSON-RPC shape, enough to tell a notification.
#[derive(serde::Deserialize)]
struct Shape<'a> {
    #[serde(borrow)]
    method: Option<&'a str>,
    id: Option<serde::de::IgnoredAny>,
}

/// A `tools/call` as sent to the server.
#[derive(serde::Serialize)]
struct CallRequest<'a> {
    jsonrpc: &'static str,
    id: &'a str,
    method: &'static str,
    params: CallParams<'a>,
}

#[derive(serde::Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a Map<String, Value>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Meta<'a>>,
}

#[derive(serde::Serialize)]
struct Meta<'a> {
    #[serde(rename = "progressToken")]
    progress_token: &'a str,
}

/// A line of the server's that may be about a call sent here: an answer
/// (a text id) or a notification.
#[derive(serde::Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

/// The server's answer to a call sent here.
struct Answer {
    result: Option<Value>,
    error: Option<Value>,
}

/// The prefix of the ids and progress tokens of the calls sent here.
const PREFIX: &str = "tether-";

impl Raw {
    /// The calls sent to a server through `to_server`.
    pub(super) fn new(to_server: LineSink) -> Arc<Self> {
        Arc::new(Raw {
            to_server,
            next: AtomicU64::new(1),
            waiting: Mutex::default(),
            progress: Mutex::default(),
            ended: CancellationToken::new(),
            client: std::sync::OnceLock::new(),
        })
    }

    /// Takes a line of the server's when it is about a call sent here.
    pub(super) fn take(&self, line: &[u8]) -> bool {
        if let Some(client) = self.client.get() {
            let log = memchr::memmem::find(line, b"notifications/message").is_some()
                && serde_json::from_slice::<Shape<'_>>(line)
                    .is_ok_and(|s| s.method == Some("notifications/message") && s.id.is_none());
            if log {
                client.send(line.to_vec());
                return true;
            }
        }
        if memchr::memmem::find(line, PREFIX.as_bytes()).is_none() {
            return false;
        }
        // Typed, not a map: a line that is not a message of this shape (an
        // rmcp request's numbered id) is not one of these calls'.
        let Ok(message) = serde_json::from_slice::<Line<'_>>(line) else {
            return false;
        };
        if let Some(method) = message.method {
            let params = message.params.unwrap_or_default();
            let token = params.get("progressToken").and_then(Value::as_str);
            let Some(token) = token.filter(|t| method == "notifications/progress" && t.starts_with(PREFIX)) else {
                return false;
            };
            if let Some(route) = lock(&self.progress).get(token).cloned() {
                tell_progress(&route, params);
            }
            return true;
        }
        let Some(id) = message.id.filter(|id| id.starts_with(PREFIX)) else {
            return false;
        };
        if let Some(waiting) = lock(&self.waiting).remove(id.as_ref()) {
            let _ = waiting.send(Answer {
                result: message.result,
                error: message.error,
            });
        }
        true
    }

    /// Calls `name` on the server; the result as the server wrote it, or
    /// why there is none. Cancelling `cancel` sends the server its own
    /// `notifications/cancelled`.
    pub async fn call(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
        progress: Option<LineRoute>,
        cancel: &CancellationToken,
    ) -> Result<Value, String> {
        let id = format!("{PREFIX}{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (answer, answered) = oneshot::channel();
        lock(&self.waiting).insert(id.clone(), answer);
        let with_progress = progress.is_some();
        if let Some(route) = progress {
            lock(&self.progress).insert(id.clone(), route);
        }
        // Written straight from borrowed parts: no JSON tree built per call.
        let request = CallRequest {
            jsonrpc: "2.0",
            id: &id,
            method: "tools/call",
            params: CallParams {
                name,
                arguments: &arguments,
                meta: with_progress.then_some(Meta { progress_token: &id }),
            },
        };
        if let Ok(line) = serde_json::to_vec(&request) {
            self.to_server.send(line);
        }
        let answer = tokio::select! {
            // An answer read just before the server's stdout ended is its answer.
            biased;
            answer = answered => Some(answer.ok()),
            () = self.ended.cancelled() => Some(None),
            () = cancel.cancelled() => None,
        };
        lock(&self.progress).remove(&id);
        lock(&self.waiting).remove(&id);
        let gone = || format!("the MCP server {server:?} is gone");
        match answer {
            None => {
                let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": id, "reason": "cancelled by the client"}});
                if let Ok(line) = serde_json::to_vec(&cancelled) {
                    self.to_server.send(line);
                }
                Err("cancelled".into())
            }
            Some(None) => Err(gone()),
            Some(Some(answer)) => match (answer.result, answer.error) {
                (Some(result @ Value::Object(_)), _) => Ok(result),
                (Some(_), _) => Err(format!(
                    "the MCP server {server:?} answered tools/call with something else"
                )),
                (None, Some(error)) => Err(error["message"]
                    .as_str()
                    .map_or_else(|| error.to_string(), str::to_owned)),
                (None, None) => Err(format!(
                    "the MCP server {server:?} failed: an answer with neither result nor error"
                )),
            },
        }
    }
}

/// Writes a progress notification to the client under its own token.
pub fn tell_progress((token, client): &LineRoute, mut params: Value) {
    params["progressToken"] = json!(token);
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params});
    if let Ok(line) = serde_json::to_vec(&notification) {
        client.send(line);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::transport::Transport as _;
    use tokio::io::AsyncReadExt as _;

    use super::super::child::ChildTransport;
    use super::*;

    /// A server written in `sh`, its transport read as rmcp's service loop
    /// reads it (the tap sees the server's lines only while it is read).
    fn server(script: &str) -> (Arc<Raw>, tokio::task::JoinHandle<ChildTransport>) {
        let mut command = tokio::process::Command::new("sh");
        command.arg("-c").arg(script);
        let (mut transport, raw) = ChildTransport::spawn(command).unwrap();
        let reading = tokio::spawn(async move {
            while transport.receive().await.is_some() {}
            transport
        });
        (raw, reading)
    }

    #[tokio::test]
    async fn a_call_gets_the_servers_result_and_its_progress_reaches_the_client_first() {
        let (raw, _reading) = server(
            r#"read request
            echo '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tether-1","progress":1}}'
            echo '{"jsonrpc":"2.0","id":"tether-1","result":{"content":[{"type":"text","text":"done"}]}}'
            sleep 1"#,
        );
        let (client, mut client_reads) = tokio::io::duplex(4096);
        let route = (
            ProgressToken(rmcp::model::NumberOrString::Number(7)),
            LineSink::start(client),
        );
        let result = raw
            .call("sh", "work", Map::new(), Some(route), &CancellationToken::new())
            .await;
        assert_eq!(result, Ok(json!({"content": [{"type": "text", "text": "done"}]})));
        let mut heard = vec![0; 4096];
        let n = client_reads.read(&mut heard).await.unwrap();
        let progress: Value = serde_json::from_slice(&heard[..n]).unwrap();
        assert_eq!(progress["params"], json!({"progressToken": 7, "progress": 1}));
    }

    /// What the server reads: a JSON-RPC `tools/call` under the gateway's
    /// own id, its progress token that id when the client wants progress.
    #[tokio::test]
    async fn the_server_reads_a_tools_call_under_the_gateways_id() {
        let dir = tempfile::tempdir().unwrap();
        let heard = dir.path().join("heard");
        let (raw, _reading) = server(&format!(
            r#"read first; echo "$first" >> {0}
            echo '{{"jsonrpc":"2.0","id":"tether-1","result":{{"content":[]}}}}'
            read second; echo "$second" >> {0}
            echo '{{"jsonrpc":"2.0","id":"tether-2","result":{{"content":[]}}}}'
            sleep 1"#,
            heard.display()
        ));
        let arguments = json!({"path": "a b", "n": 1}).as_object().cloned().unwrap();
        let never = CancellationToken::new();
        assert!(raw.call("sh", "write", arguments.clone(), None, &never).await.is_ok());
        let (client, _client_reads) = tokio::io::duplex(4096);
        let route = (
            ProgressToken(rmcp::model::NumberOrString::Number(7)),
            LineSink::start(client),
        );
        assert!(raw.call("sh", "write", arguments, Some(route), &never).await.is_ok());
        let lines: Vec<Value> = std::fs::read_to_string(&heard)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                json!({"jsonrpc": "2.0", "id": "tether-1", "method": "tools/call",
                    "params": {"name": "write", "arguments": {"path": "a b", "n": 1}}}),
                json!({"jsonrpc": "2.0", "id": "tether-2", "method": "tools/call",
                    "params": {"name": "write", "arguments": {"path": "a b", "n": 1},
                        "_meta": {"progressToken": "tether-2"}}}),
            ]
        );
    }

    #[tokio::test]
    async fn a_server_that_ends_without_answering_fails_the_call() {
        let (raw, _reading) = server("read request; exit 0");
        let result = raw
            .call("sh", "work", Map::new(), None, &CancellationToken::new())
            .await;
        assert_eq!(result, Err("the MCP server \"sh\" is gone".to_owned()));
    }

    #[tokio::test]
    async fn a_cancelled_call_tells_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let heard = dir.path().join("heard");
        let (raw, _reading) = server(&format!(
            "read request; read cancelled; echo \"$cancelled\" > {}",
            heard.display()
        ));
        let cancel = CancellationToken::new();
        let calling = raw.call("sh", "work", Map::new(), None, &cancel);
        let (result, ()) = tokio::join!(calling, async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        });
        assert_eq!(result, Err("cancelled".to_owned()));
        let started = std::time::Instant::now();
        while !heard.exists() && started.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let said: Value = serde_json::from_str(&std::fs::read_to_string(&heard).unwrap()).unwrap();
        assert_eq!(said["method"], "notifications/cancelled");
        assert_eq!(said["params"]["requestId"], "tether-1");
    }
}
