//! The frames sent for every call, written straight into the connection's
//! outgoing buffer: `tool/call`, `tool/result`, `tool/invoke` and
//! `batch/execute`'s response.

use serde::Serialize;
use serde_json::Value;

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
pub fn invoke(out: &mut Vec<u8>, id: u64, call_id: &str, name: &str, arguments: &Value, edited: bool) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    json(out, &id);
    out.extend_from_slice(br#","method":"tool/invoke","params":{"call_id":"#);
    text(out, call_id);
    out.extend_from_slice(br#","name":"#);
    text(out, name);
    out.extend_from_slice(br#","arguments":"#);
    json(out, arguments);
    // Only when a human edited them: the agent's own arguments need no word.
    if edited {
        out.extend_from_slice(br#","edited":true"#);
    }
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
