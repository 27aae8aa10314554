//! A scripted model server for driving the real Claude Code and Codex CLIs
//! offline: the Anthropic Messages API (`POST /v1/messages`, streamed as
//! server-sent events) for Claude Code and the OpenAI Responses API
//! (`POST /v1/responses`) for Codex, on 127.0.0.1. Every request body is
//! recorded, so a test can check what the model saw.
//!
//! The script is stateless per request: the number of tool results the
//! request already carries picks the next tool call (a subagent's requests
//! have a script of their own); past the end, or for a
//! request that offers no tools (Claude's side calls), the model answers
//! with text. HTTP is axum's, so nothing here parses HTTP by hand.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The tool calls the model makes, one per turn, in order.
#[derive(Clone, Debug, Default)]
pub struct Script {
    /// Claude Code: `{"name": "Bash", "input": {...}}`.
    pub anthropic: Vec<Value>,
    /// Codex: `{"name": "exec_command", "arguments": {...}}`; a deferred
    /// tool (an MCP tool behind Codex's `tool_search`) also names its
    /// `"namespace"`, and `{"tool_search": {"query": ..., "limit": ...}}`
    /// is the search turn that loads such tools first.
    pub openai: Vec<Value>,
    /// Subagents' calls: Claude Code's in a conversation whose first user
    /// message holds [`SUBAGENT_TASK`] (the prompt the main script gave its
    /// `Agent` tool), Codex's in one whose input holds it (the message of
    /// its `spawn_agent`), counted as above.
    pub subagent: Vec<Value>,
}

/// Marks the prompt of a subagent the script starts (see [`Script::subagent`]).
pub const SUBAGENT_TASK: &str = "TETHER-SUBAGENT-TASK";

/// Whether a Messages request is a subagent's: its first user message
/// holds the task the main script gave it.
fn is_subagent(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.first())
        .is_some_and(|first| first["content"].to_string().contains(SUBAGENT_TASK))
}

/// Whether a Responses request is a Codex subagent's: its input holds the
/// task, and not as the `spawn_agent` call that gave it (the parent's).
fn is_codex_subagent(body: &Value) -> bool {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    input.iter().any(|i| i.to_string().contains(SUBAGENT_TASK)) && !input.iter().any(|i| i["name"] == "spawn_agent")
}

#[derive(Default)]
struct Shared {
    script: Script,
    requests: Mutex<Vec<(String, String)>>,
    next: AtomicU64,
}

/// A running model server; stops when dropped.
pub struct MockModel {
    pub port: u16,
    shared: Arc<Shared>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl MockModel {
    pub async fn start(script: Script) -> Self {
        let shared = Arc::new(Shared {
            script,
            ..Shared::default()
        });
        let app = Router::new().fallback(handle).with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Self {
            port,
            shared,
            _stop: stop,
        }
    }

    /// Every request so far: (path, body text).
    pub fn requests(&self) -> Vec<(String, String)> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// The bodies of the model requests (Messages or Responses), parsed.
    pub fn model_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|(path, _)| path.ends_with("/messages") || path.ends_with("/responses"))
            .filter_map(|(_, body)| serde_json::from_str(&body).ok())
            .collect()
    }
}

/// Whether some model request (of [`MockModel::model_requests`]) offered
/// the model a tool named `name`.
// Only the MCP tests ask; each test file compiles this module alone.
#[allow(dead_code)]
pub fn offered(requests: &[Value], name: &str) -> bool {
    requests
        .iter()
        .any(|r| r["tools"].as_array().into_iter().flatten().any(|t| t["name"] == name))
}

async fn handle(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let path = uri.path().to_owned();
    let text = String::from_utf8_lossy(&body).into_owned();
    shared.requests.lock().unwrap().push((path.clone(), text));
    let body: Value = serde_json::from_slice(&body).unwrap_or(json!({}));
    let seq = shared.next.fetch_add(1, Ordering::Relaxed) + 1;
    if path.ends_with("/messages/count_tokens") {
        json_response(json!({"input_tokens": 10}))
    } else if path.ends_with("/messages") {
        sse(anthropic(&shared.script, &body, seq))
    } else if path.ends_with("/responses") {
        sse(responses(&shared.script, &body, seq))
    } else if path.ends_with("/models") {
        json_response(json!({"data": [], "has_more": false, "models": []}))
    } else {
        json_response(json!({}))
    }
}

fn json_response(value: Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

fn sse(events: Vec<Value>) -> Response {
    let text: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        text,
    )
        .into_response()
}

fn count(items: impl Iterator<Item = Value>, kinds: &[&str]) -> usize {
    items.filter(|item| kinds.iter().any(|k| item["type"] == *k)).count()
}

fn anthropic(script: &Script, body: &Value, seq: u64) -> Vec<Value> {
    let results = count(
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default()),
        &["tool_result"],
    );
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let steps = if is_subagent(body) {
        &script.subagent
    } else {
        &script.anthropic
    };
    let step = steps.get(results).filter(|_| offers_tools);
    let (block, delta, stop) = match step {
        Some(step) => (
            json!({"type": "tool_use", "id": format!("toolu_mock_{seq}"), "name": step["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": step["input"].to_string()}),
            "tool_use",
        ),
        None => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "done"}),
            "end_turn",
        ),
    };
    vec![
        json!({"type": "message_start", "message": {"id": format!("msg_mock_{seq}"), "type": "message", "role": "assistant",
               "model": body["model"], "content": [], "stop_reason": null, "stop_sequence": null,
               "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ]
}

fn responses(script: &Script, body: &Value, seq: u64) -> Vec<Value> {
    let outputs = count(
        body["input"].as_array().into_iter().flatten().cloned(),
        &["function_call_output", "custom_tool_call_output", "tool_search_output"],
    );
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let steps = if is_codex_subagent(body) {
        &script.subagent
    } else {
        &script.openai
    };
    let item = match steps.get(outputs).filter(|_| offers_tools) {
        Some(step) if step.get("tool_search").is_some() => {
            json!({"type": "tool_search_call", "id": format!("ts_mock_{seq}"), "call_id": format!("call_mock_{seq}"),
                   "status": "completed", "execution": "client", "arguments": step["tool_search"]})
        }
        Some(step) => {
            let mut call = json!({"type": "function_call", "id": format!("fc_mock_{seq}"), "call_id": format!("call_mock_{seq}"),
                                  "name": step["name"], "status": "completed", "arguments": step["arguments"].to_string()});
            // A tool in a namespace (an MCP tool behind `tool_search`, Codex's `collaboration` tools).
            if let Some(namespace) = step.get("namespace") {
                call["namespace"] = namespace.clone();
            }
            call
        }
        None => json!({"type": "message", "id": format!("msg_mock_{seq}"), "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": "done", "annotations": []}]}),
    };
    let id = format!("resp_mock_{seq}");
    vec![
        json!({"type": "response.created", "response": {"id": id, "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"id": id, "object": "response", "status": "completed", "output": [item],
               "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}}),
    ]
}
