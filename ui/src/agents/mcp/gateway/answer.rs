//! The answer to a `tools/call` the gateway took off the client's stdio
//! (`fast.rs`), as the line the client reads.
//!
//! A plain success (the server's result, nothing decided against it) is
//! written as the server wrote it: the client reads what it would have read
//! from the server directly, fields rmcp has no type for included, and the
//! gateway spends no typed round trip on it (rmcp's `CallToolResult` parsed
//! from the result and written out again). Only what the negotiated
//! protocol asks is changed: an older peer is not sent `resultType`. A
//! result it cannot carry as it is (a non-object `structuredContent` for an
//! older peer, anything that is not a tool result) is shaped as rmcp's
//! handler shapes what a `call_tool` returns.

use rmcp::model::{CallToolResult, ServerResult};
use serde::Serialize;
use serde::ser::SerializeMap as _;
use serde_json::{Map, Value};

use super::calls;

/// A response as rmcp writes one.
#[derive(Serialize)]
struct Response<'a, R> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: R,
}

/// The line answering `id` with a plain success's `value`, for a client
/// on the protocol `newer` says (2026-07-28 or later).
pub(super) fn success(id: &Value, value: &Value, newer: bool) -> Option<Vec<u8>> {
    match AsIs::of(value, newer) {
        Some(result) => line(id, result),
        None => shaped(id, calls::success(value), newer),
    }
}

/// The line answering `id` with `result`, shaped for the protocol the
/// client negotiated as rmcp's handler shapes what a `call_tool` returns.
pub(super) fn shaped(id: &Value, result: CallToolResult, newer: bool) -> Option<Vec<u8>> {
    let mut result = ServerResult::CallToolResult(result);
    if newer {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
    }
    line(id, &result)
}

fn line(id: &Value, result: impl Serialize) -> Option<Vec<u8>> {
    let response = Response {
        jsonrpc: "2.0",
        id,
        result,
    };
    serde_json::to_vec(&response)
        .inspect_err(|error| tracing::error!(%error, "a tool result could not be written"))
        .ok()
}

/// A server's tool result the client can be sent as it is.
struct AsIs<'a> {
    fields: &'a Map<String, Value>,
    /// The client negotiated a protocol before 2026-07-28.
    legacy: bool,
}

impl<'a> AsIs<'a> {
    fn of(value: &'a Value, newer: bool) -> Option<Self> {
        let fields = value.as_object()?;
        // A tool result has its content (rmcp writes the list always).
        if !fields.get("content").is_some_and(Value::is_array) {
            return None;
        }
        // Complete, as a result a client can take; any other kind is
        // rmcp's to judge.
        if fields.get("resultType").is_some_and(|kind| kind != "complete") {
            return None;
        }
        // An older protocol's structured content is an object; rmcp moves
        // any other into the content.
        if !newer && fields.get("structuredContent").is_some_and(|v| !v.is_object()) {
            return None;
        }
        Some(Self { fields, legacy: !newer })
    }
}

impl Serialize for AsIs<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.fields {
            // An older peer does not know the field (it is "complete" here).
            if !(self.legacy && key == "resultType") {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(line: &[u8]) -> Value {
        serde_json::from_slice(line).unwrap()
    }

    #[test]
    fn a_servers_result_reaches_the_client_as_the_server_wrote_it() {
        // Fields rmcp has no type for: a vendor's key, a block's own mark.
        let result = json!({
            "content": [{"type": "text", "text": "Echo: hi", "x-origin": "server"}],
            "isError": false,
            "x-vendor": {"took_ms": 3},
        });
        for newer in [false, true] {
            let answer = read(&success(&json!(7), &result, newer).unwrap());
            assert_eq!(
                answer,
                json!({"jsonrpc": "2.0", "id": 7, "result": result}),
                "newer: {newer}"
            );
        }
    }

    #[test]
    fn an_older_peer_is_not_sent_the_result_type() {
        let result = json!({"resultType": "complete", "content": [{"type": "text", "text": "hi"}]});
        let older = read(&success(&json!("a"), &result, false).unwrap());
        assert_eq!(older["result"], json!({"content": [{"type": "text", "text": "hi"}]}));
        let newer = read(&success(&json!("a"), &result, true).unwrap());
        assert_eq!(newer["result"], result);
    }

    #[test]
    fn what_cannot_go_as_it_is_is_shaped_as_rmcp_shapes_it() {
        let id = json!(1);
        // Not a tool result: its text.
        let text = read(&success(&id, &json!("replaced by a rule"), false).unwrap());
        assert_eq!(
            text["result"]["content"],
            json!([{"type": "text", "text": "replaced by a rule"}])
        );
        // A list as structured content, for an older peer: moved into the content.
        let list = json!({"content": [], "structuredContent": ["a", "b"]});
        let older = read(&success(&id, &list, false).unwrap());
        assert_eq!(
            older["result"]["content"],
            json!([{"type": "text", "text": "[\"a\",\"b\"]"}])
        );
        assert!(older["result"].get("structuredContent").is_none());
        // The same for a newer peer goes as it is.
        let newer = read(&success(&id, &list, true).unwrap());
        assert_eq!(newer["result"], list);
        // A kind of result other than complete is rmcp's: not a tool result, so text.
        let task = json!({"resultType": "task", "content": []});
        let shaped = read(&success(&id, &task, true).unwrap());
        assert_eq!(shaped["result"]["content"][0]["type"], "text");
    }

    #[test]
    fn a_shaped_result_is_what_rmcp_writes() {
        let result = CallToolResult::success(vec![rmcp::model::ContentBlock::text("hi")]);
        let older = read(&shaped(&json!(2), result.clone(), false).unwrap());
        assert_eq!(
            older,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}], "isError": false}})
        );
        let newer = read(&shaped(&json!(2), result, true).unwrap());
        assert_eq!(newer["result"]["resultType"], "complete");
    }
}
