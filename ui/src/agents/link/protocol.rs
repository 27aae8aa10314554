//! JSON-RPC 2.0 over newline-delimited JSON: frames, error codes and the
//! parameters of each method (see docs/protocol.md).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::files::scenario::Concurrency;

/// The longest line the console reads; a longer one is refused and skipped.
pub const MAX_LINE: usize = 1 << 20;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
/// An application error: no session, a registration refused, …
pub const APPLICATION_ERROR: i64 = -32000;

pub fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error(id: &Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The frames sent for every call, serialized straight from borrowed data:
/// building a `Value` tree first costs an allocation and a hashed insert
/// per field, which was most of the link's own time per call.
#[derive(Serialize)]
struct OutFrame<'a, P> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    method: &'a str,
    params: P,
}

fn line<P: Serialize>(id: Option<u64>, method: &str, params: P) -> String {
    let frame = OutFrame {
        jsonrpc: "2.0",
        id,
        method,
        params,
    };
    // Plain structs of strings, numbers and JSON values always serialize.
    serde_json::to_string(&frame).unwrap_or_default()
}

#[derive(Serialize)]
struct CallNotice<'a> {
    batch_id: &'a str,
    index: usize,
    call_id: &'a str,
    name: &'a str,
    mode: &'a str,
}

#[derive(Serialize)]
struct ResultNotice<'a> {
    batch_id: &'a str,
    index: usize,
    call_id: &'a str,
    name: &'a str,
    code: Option<&'static str>,
    value: &'a Value,
}

#[derive(Serialize)]
struct Invoke<'a> {
    call_id: &'a str,
    name: &'a str,
    arguments: &'a Value,
}

/// A response, as one line, serialized straight from `result`.
pub fn response_line<R: Serialize>(id: &Value, result: &R) -> String {
    #[derive(Serialize)]
    struct Response<'a, R> {
        jsonrpc: &'static str,
        id: &'a Value,
        result: &'a R,
    }
    // Plain structs of strings, numbers and JSON values always serialize.
    serde_json::to_string(&Response {
        jsonrpc: "2.0",
        id,
        result,
    })
    .unwrap_or_default()
}

/// One outcome in `batch/execute`'s result.
#[derive(Serialize)]
pub struct OutcomeLine<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
    pub code: Option<&'static str>,
    pub value: &'a Value,
    pub is_error: bool,
    pub decided_by: String,
}

/// `batch/execute`'s result.
#[derive(Serialize)]
pub struct BatchResult<'a> {
    pub batch_id: &'a str,
    pub outcomes: Vec<OutcomeLine<'a>>,
}

/// `tool/call`, as one line.
pub fn call_notification(batch_id: &str, index: usize, call_id: &str, name: &str, mode: &str) -> String {
    let params = CallNotice {
        batch_id,
        index,
        call_id,
        name,
        mode,
    };
    line(None, "tool/call", params)
}

/// `tool/result`, as one line.
pub fn result_notification(batch_id: &str, index: usize, outcome: &tether_tools::ToolExecutionOutcome) -> String {
    let params = ResultNotice {
        batch_id,
        index,
        call_id: outcome.call_id(),
        name: outcome.name(),
        code: outcome.code().map(|c| c.as_str()),
        value: outcome.value(),
    };
    line(None, "tool/result", params)
}

/// The `tool/invoke` request, as one line.
pub fn invoke(id: u64, call_id: &str, name: &str, arguments: &Value) -> String {
    line(
        Some(id),
        "tool/invoke",
        Invoke {
            call_id,
            name,
            arguments,
        },
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenSession {
    pub session_id: String,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterTool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "crate::files::scenario::object_schema")]
    pub parameters: Value,
    #[serde(default)]
    pub concurrency: Option<Concurrency>,
    #[serde(default)]
    pub metadata: Value,
    /// A child scope of the session (made on first use), e.g. one MCP server.
    #[serde(default)]
    pub scope: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnregisterTool {
    pub name: String,
    #[serde(default)]
    pub scope: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteBatch {
    #[serde(default)]
    pub batch_id: Option<String>,
    pub calls: Vec<CallParams>,
    #[serde(default)]
    pub max_parallelism: Option<usize>,
    /// Run from this child scope of the session (see `tools/register`).
    #[serde(default)]
    pub scope: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallParams {
    pub id: String,
    pub name: String,
    /// The raw argument text exactly as the model sent it.
    pub arguments: String,
}

/// A coding agent's tool-use hook, forwarded by `tether hook`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookToolUse {
    /// `claude-code` or `codex`.
    pub agent: String,
    /// `PreToolUse`, `PermissionRequest` or `PostToolUse`.
    pub event: String,
    pub session_id: String,
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub tool_response: Option<Value>,
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CancelBatch {
    pub batch_id: String,
}

/// The two frames every remote call brings, read without a JSON tree of the
/// whole frame: `batch/execute` (its params straight into [`ExecuteBatch`])
/// and the agent's reply to `tool/invoke`. Any other frame, or one that does
/// not read as this, goes the general way, which says what is wrong with it.
#[derive(Debug, Deserialize)]
pub struct HotFrame<'a> {
    /// Borrowed: a frame with escapes in it goes the general way.
    #[serde(borrow, default)]
    pub jsonrpc: Option<&'a str>,
    #[serde(default)]
    pub id: Value,
    #[serde(borrow, default)]
    pub method: Option<&'a str>,
    #[serde(default)]
    pub params: Option<ExecuteBatch>,
    /// `Some(Null)` for `"result": null`, as the general path reads it.
    #[serde(default, deserialize_with = "present")]
    pub result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl<'a> HotFrame<'a> {
    /// `None` when the line is not an object, does not read as a hot frame,
    /// or is one the general path must judge (a bad version or id).
    pub fn read(line: &'a str) -> Option<Self> {
        // A struct also reads from an array; the general path refuses that.
        if !line.trim_start().starts_with('{') {
            return None;
        }
        let frame: Self = serde_json::from_str(line).ok()?;
        let valid_id = matches!(frame.id, Value::Null | Value::String(_) | Value::Number(_));
        (frame.jsonrpc == Some("2.0") && valid_id).then_some(frame)
    }
}

/// One line from an agent, or word that a line was too long (and skipped)
/// or was not UTF-8.
#[derive(Debug)]
pub enum Frame {
    Line(String),
    TooLong,
    /// The line's bytes are not UTF-8; `valid_up_to` is where the first bad
    /// byte sits.
    NotUtf8 {
        valid_up_to: usize,
    },
}

/// Newline-delimited frames read as bytes, with a maximum length. A line
/// that is too long or not UTF-8 is an item, not an error: a framed stream
/// ends at its first error, and one bad line must not end the agent's
/// connection. The inner codec skips the rest of an oversized line itself.
#[derive(Debug)]
pub struct FrameCodec(tokio_util::codec::AnyDelimiterCodec);

impl FrameCodec {
    pub fn new() -> Self {
        Self(tokio_util::codec::AnyDelimiterCodec::new_with_max_length(
            b"\n".to_vec(),
            b"\n".to_vec(),
            MAX_LINE,
        ))
    }

    fn frame(
        chunk: Result<Option<bytes::Bytes>, tokio_util::codec::AnyDelimiterCodecError>,
    ) -> Result<Option<Frame>, std::io::Error> {
        use tokio_util::codec::AnyDelimiterCodecError as E;
        match chunk {
            Ok(Some(bytes)) => {
                let line = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
                Ok(Some(match std::str::from_utf8(line) {
                    Ok(text) => Frame::Line(text.to_owned()),
                    Err(e) => Frame::NotUtf8 {
                        valid_up_to: e.valid_up_to(),
                    },
                }))
            }
            Ok(None) => Ok(None),
            Err(E::MaxChunkLengthExceeded) => Ok(Some(Frame::TooLong)),
            Err(E::Io(e)) => Err(e),
        }
    }
}

impl Default for FrameCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl tokio_util::codec::Decoder for FrameCodec {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut bytes::BytesMut) -> Result<Option<Frame>, std::io::Error> {
        Self::frame(self.0.decode(buf))
    }

    fn decode_eof(&mut self, buf: &mut bytes::BytesMut) -> Result<Option<Frame>, std::io::Error> {
        Self::frame(self.0.decode_eof(buf))
    }
}
