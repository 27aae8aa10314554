//! A Claude Code result withheld from the model. Claude Code replaces what
//! the model sees only through `updatedToolOutput`, and only when it has the
//! exact shape of the `tool_response` it passed in (a mismatch is ignored
//! and the original goes through); MCP tools take `updatedMCPToolOutput`,
//! a bare content array. So the replacement is built from the received
//! value: the reason goes where the output was, every other string is
//! emptied, and the tool's own formatter renders it for the model.

use serde_json::{Map, Value, json};

/// The PostToolUse answer that shows the model `reason` instead of the result.
pub fn claude_code(tool: &str, response: Option<&Value>, reason: &str) -> Value {
    let output = if tool.starts_with("mcp__") {
        ("updatedMCPToolOutput", json!([{"type": "text", "text": reason}]))
    } else {
        ("updatedToolOutput", replaced(response.unwrap_or(&Value::Null), reason))
    };
    let mut specific = Map::new();
    specific.insert("hookEventName".into(), json!("PostToolUse"));
    specific.insert(output.0.into(), output.1);
    json!({"hookSpecificOutput": specific})
}

/// `response` with the reason in place of its output.
fn replaced(response: &Value, reason: &str) -> Value {
    let Some(object) = response.as_object() else {
        return match response {
            Value::Array(_) => scrubbed(response, reason),
            _ => json!(reason),
        };
    };
    let mut out = emptied(response);
    let mut set = |key: &str, value: Value| {
        out.insert(key.to_owned(), value);
    };
    if object.contains_key("stdout") {
        // Bash: the reason as its output.
        set("stdout", json!(reason));
        set("isImage", json!(false));
        set("interrupted", json!(false));
    } else if object.get("file").is_some_and(Value::is_object) {
        // Read (text, image, notebook, pdf alike): a one-line text file.
        return json!({"type": "text", "file": {
            "filePath": "", "content": reason, "numLines": 1, "startLine": 1, "totalLines": 1,
        }});
    } else if let Some(mode) = object.get("mode").and_then(Value::as_str) {
        // Grep: the reason as the only match.
        if mode == "files_with_matches" {
            set("filenames", json!([reason]));
            set("numFiles", json!(1));
        } else {
            set("filenames", json!([]));
            set("content", json!(reason));
            set("numLines", json!(1));
        }
    } else {
        // Write, Edit and tools not seen yet: every string replaced.
        return scrubbed(response, reason);
    }
    Value::Object(out)
}

/// An object's strings emptied, its shape kept.
fn emptied(object: &Value) -> Map<String, Value> {
    match scrubbed(object, "") {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Every string in `value` replaced by `with`, except the discriminators
/// (`type`, `mode`) that select the shape; numbers and booleans stay.
fn scrubbed(value: &Value, with: &str) -> Value {
    match value {
        Value::String(_) => json!(with),
        Value::Array(items) => Value::Array(items.iter().map(|item| scrubbed(item, with)).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, v)| {
                    let kept = matches!(key.as_str(), "type" | "mode") && v.is_string();
                    (key.clone(), if kept { v.clone() } else { scrubbed(v, with) })
                })
                .collect(),
        ),
        other => other.clone(),
    }
}
