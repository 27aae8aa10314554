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

/// The frames sent for every call, written straight into the connection's
/// outgoing buffer: the fixed parts are constants, only strings and values
/// go through the JSON serializer (for escaping). A `Value` tree or a
/// derived struct per frame cost an allocation and a serializer call per
/// field, most of the link's own time per call.
fn text(out: &mut Vec<u8>, s: &str) {
    json(out, s);
}

/// Writes `value` as JSON; `null` in the impossible case that it fails
/// (strings, numbers and `Value`s always serialize).
pub fn json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

fn code(out: &mut Vec<u8>, code: Option<tether_tools::ToolFailureCode>) {
    match code {
        Some(code) => text(out, code.as_str()),
        None => out.extend_from_slice(b"null"),
    }
}

/// `tool/call`.
pub fn call_notification(out: &mut Vec<u8>, batch_id: &str, index: usize, call_id: &str, name: &str, mode: &str) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"tool/call","params":{"batch_id":"#);
    text(out, batch_id);
    out.extend_from_slice(br#","index":"#);
    json(out, &index);
    out.extend_from_slice(br#","call_id":"#);
    text(out, call_id);
    out.extend_from_slice(br#","name":"#);
    text(out, name);
    out.extend_from_slice(br#","mode":"#);
    text(out, mode);
    out.extend_from_slice(b"}}");
}

/// `tool/result`.
pub fn result_notification(
    out: &mut Vec<u8>,
    batch_id: &str,
    index: usize,
    outcome: &tether_tools::ToolExecutionOutcome,
) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"tool/result","params":{"batch_id":"#);
    text(out, batch_id);
    out.extend_from_slice(br#","index":"#);
    json(out, &index);
    out.push(b',');
    outcome_fields(out, outcome);
    out.extend_from_slice(b"}}");
}

/// An outcome's `"call_id":…,"name":…,"code":…,"value":…`, as both
/// `tool/result` and `batch/execute`'s response carry them.
fn outcome_fields(out: &mut Vec<u8>, outcome: &tether_tools::ToolExecutionOutcome) {
    out.extend_from_slice(br#""call_id":"#);
    text(out, outcome.call_id());
    out.extend_from_slice(br#","name":"#);
    text(out, outcome.name());
    out.extend_from_slice(br#","code":"#);
    code(out, outcome.code());
    out.extend_from_slice(br#","value":"#);
    json(out, outcome.value());
}

/// The `tool/invoke` request.
pub fn invoke(out: &mut Vec<u8>, id: u64, call_id: &str, name: &str, arguments: &Value) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    json(out, &id);
    out.extend_from_slice(br#","method":"tool/invoke","params":{"call_id":"#);
    text(out, call_id);
    out.extend_from_slice(br#","name":"#);
    text(out, name);
    out.extend_from_slice(br#","arguments":"#);
    json(out, arguments);
    out.extend_from_slice(b"}}");
}

/// `batch/execute`'s response: the batch id and one entry per outcome, with
/// what decided it.
pub fn batch_response<'a>(
    out: &mut Vec<u8>,
    id: &Value,
    batch_id: &str,
    outcomes: impl IntoIterator<Item = (&'a tether_tools::ToolExecutionOutcome, &'a str)>,
) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    json(out, id);
    out.extend_from_slice(br#","result":{"batch_id":"#);
    text(out, batch_id);
    out.extend_from_slice(br#","outcomes":["#);
    for (n, (o, decided_by)) in outcomes.into_iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.push(b'{');
        outcome_fields(out, o);
        out.extend_from_slice(if o.is_error() {
            br#","is_error":true,"decided_by":"#
        } else {
            br#","is_error":false,"decided_by":"#
        });
        text(out, decided_by);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}}");
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenSession {
    pub session_id: String,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    /// The agent's working directory: path rules resolve its calls' relative
    /// paths against it.
    #[serde(default)]
    pub cwd: Option<String>,
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
    /// Where these calls run, when it is not the session's `cwd` (an MCP
    /// client's root): path rules resolve their relative paths against it.
    #[serde(default)]
    pub cwd: Option<String>,
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
    /// Codex's turn: a PermissionRequest comes in the turn of its PreToolUse.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The subagent that made the call (the hook input's `agent_type`);
    /// absent for the main agent.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// That subagent run's id (the hook input's `agent_id`).
    #[serde(default)]
    pub agent_id: Option<String>,
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
    pub result: Option<InvokeResult>,
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// What a body returned, from the agent's `result` to a `tool/invoke`: its
/// `value`, or the whole result when it has none. Read straight from the
/// frame, so the common `{"value": …}` builds no map to take the value out of.
#[derive(Debug, PartialEq)]
pub struct InvokeResult(pub Value);

impl InvokeResult {
    /// The same, from a result already read into a tree.
    pub fn from_value(result: Value) -> Self {
        match result {
            Value::Object(mut map) => Self(match map.remove("value") {
                Some(value) => value,
                None => Value::Object(map),
            }),
            other => Self(other),
        }
    }
}

impl<'de> Deserialize<'de> for InvokeResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(InvokeResultVisitor)
    }
}

struct InvokeResultVisitor;

/// A key of the result object: `value`, or another one (kept by name).
enum Key {
    Value,
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                Ok(if key == "value" {
                    Key::Value
                } else {
                    Key::Other(key.to_owned())
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> serde::de::Visitor<'de> for InvokeResultVisitor {
    type Value = InvokeResult;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<InvokeResult, A::Error> {
        let mut value = None;
        let mut others = serde_json::Map::new();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                // A repeated key: the last one wins, as in a `Value` tree.
                Key::Value => value = Some(map.next_value::<Value>()?),
                Key::Other(key) => {
                    others.insert(key, map.next_value()?);
                }
            }
        }
        Ok(InvokeResult(value.unwrap_or(Value::Object(others))))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<InvokeResult, A::Error> {
        Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(InvokeResult)
    }

    fn visit_bool<E>(self, v: bool) -> Result<InvokeResult, E> {
        Ok(InvokeResult(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_str<E>(self, v: &str) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_string<E>(self, v: String) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_unit<E>(self) -> Result<InvokeResult, E> {
        Ok(InvokeResult(Value::Null))
    }

    fn visit_none<E>(self) -> Result<InvokeResult, E> {
        Ok(InvokeResult(Value::Null))
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<InvokeResult, D::Error> {
        d.deserialize_any(self)
    }
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
