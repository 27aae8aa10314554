//! Batch files for `tether send`, as `tether check` reads them: every shape
//! error at its position, and every call of a tool the file does not
//! register. The scripted bodies and concurrency rules are the scenario
//! format's own (its schema's definitions are reused, not copied).

use std::sync::LazyLock;

use serde_json::Value;

use crate::files::source::{Document, FileError, Format};

/// The batch format as JSON Schema, without the definitions it shares with
/// the scenario format (`body`, `concurrency`).
const OWN_FORMAT: &str = include_str!("batch.schema.json");

/// The whole format: [`OWN_FORMAT`] with the scenario's shared definitions.
pub static FORMAT: LazyLock<String> = LazyLock::new(|| {
    let mut format: Value = serde_json::from_str(OWN_FORMAT).unwrap_or(Value::Null);
    let scenario: Value = serde_json::from_str(crate::files::scenario::FORMAT).unwrap_or(Value::Null);
    for shared in ["body", "concurrency"] {
        if let (Some(defs), Some(definition)) = (
            format.get_mut("$defs").and_then(Value::as_object_mut),
            scenario.pointer(&format!("/$defs/{shared}")),
        ) {
            defs.insert(shared.to_owned(), definition.clone());
        }
    }
    format.to_string()
});

static FORMAT_CHECK: LazyLock<Format> = LazyLock::new(|| Format::new(&FORMAT, "batch file"));

/// Every problem in a batch file, in position order: its shape, and calls
/// of tools it does not register (unless its tool list cannot be read; a
/// send session sees only the tools it registers, so such a call would end
/// `UNKNOWN_TOOL`).
pub fn check(document: &Document) -> Vec<FileError> {
    let mut errors = match FORMAT_CHECK.read::<Value>(document) {
        Ok(_) => Vec::new(),
        Err(errors) => errors,
    };
    let tools: Option<Vec<&str>> = match document.value.get("tools") {
        None => Some(Vec::new()),
        Some(Value::Array(list)) => list.iter().map(|t| t.get("name").and_then(Value::as_str)).collect(),
        Some(_) => None,
    };
    let calls = document.value.get("calls").and_then(Value::as_array);
    if let Some(tools) = tools {
        for (i, call) in calls.into_iter().flatten().enumerate() {
            let Some(name) = call.get("name").and_then(Value::as_str) else {
                continue;
            };
            if !tools.contains(&name) {
                errors.push(document.error_at(
                    &format!("/calls/{i}/name"),
                    format!(
                        "tool {name:?} is not registered under \"tools\"; {}",
                        if tools.is_empty() {
                            "none is".to_owned()
                        } else {
                            format!("expected one of: {}", tools.join(", "))
                        }
                    ),
                ));
            }
        }
    }
    errors.sort_by_key(|e| (e.line, e.column));
    errors.dedup();
    errors
}
