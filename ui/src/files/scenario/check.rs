//! Checks a scenario beyond its shape: references, duplicates, names,
//! schemas and pointers. Every problem is reported, each at its position.
//!
//! The checks read the document's JSON itself rather than the typed
//! scenario, so they run even when the shape check failed: one run reports
//! both kinds of error. A value whose shape is wrong (an id that is not a
//! string, a tool list that is not a list) is skipped here; the shape check
//! has reported it already.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use tether_tools::is_valid_tool_name;

use crate::files::source::{Document, FileError};

/// The elements of an array field, with their index; none when the field is
/// missing or not an array.
fn items<'a>(value: &'a Value, field: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    value
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

fn text<'a>(value: &'a Value, field: &str) -> Option<&'a str> {
    value.get(field).and_then(Value::as_str)
}

/// What a scenario defines, as far as its shape lets it be known: `None`
/// for a list that cannot be read whole (not an array, or an element
/// without a string id or name), since any reference might then name the
/// element that could not be read.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Scope ids and labels.
    pub scopes: Option<Vec<String>>,
    /// Tool names.
    pub tools: Option<Vec<String>>,
}

impl Names {
    pub fn of(value: &Value) -> Names {
        let scopes = match value.get("scopes") {
            None => Some(Vec::new()),
            Some(Value::Array(list)) => list
                .iter()
                .map(|s| {
                    let id = text(s, "id")?.to_owned();
                    Some([Some(id), text(s, "label").map(str::to_owned)])
                })
                .collect::<Option<Vec<_>>>()
                .map(|pairs| pairs.into_iter().flatten().flatten().collect()),
            Some(_) => None,
        };
        let tools = match value.get("tools") {
            Some(Value::Array(list)) => list
                .iter()
                .map(|t| text(t, "name").map(str::to_owned))
                .collect::<Option<Vec<_>>>(),
            _ => None,
        };
        Names { scopes, tools }
    }
}

pub(super) fn check(value: &Value, doc: &Document) -> Vec<FileError> {
    let mut errors = Vec::new();
    let scope_ids = check_scopes(value, doc, &mut errors);
    let expected_scopes = |ids: &HashSet<String>| {
        if ids.is_empty() {
            "no scopes are defined; add one under \"scopes\" or leave the field out".to_owned()
        } else {
            let mut ids: Vec<_> = ids.iter().map(|s| format!("{s:?}")).collect();
            ids.sort();
            format!("expected one of: {}", ids.join(", "))
        }
    };
    // A scope reference is checked only when every scope's id could be read.
    let unknown_scope = |at: String, scope: Option<&str>, errors: &mut Vec<FileError>| {
        if let (Some(scope), Some(ids)) = (scope, &scope_ids) {
            if !ids.contains(scope) {
                errors.push(doc.error_at(&at, format!("unknown scope {scope:?}; {}", expected_scopes(ids))));
            }
        }
    };

    for (i, tool) in items(value, "tools") {
        let at = format!("/tools/{i}");
        if let Some(name) = text(tool, "name") {
            if !is_valid_tool_name(name) {
                errors.push(doc.error_at(
                    &format!("{at}/name"),
                    format!("invalid tool name {name:?}: expected 1 to 64 characters from A-Z a-z 0-9 _ . -"),
                ));
            }
        }
        unknown_scope(format!("{at}/scope"), text(tool, "scope"), &mut errors);
        // Only an object is a schema here; anything else is a shape error.
        if let Some(parameters @ Value::Object(_)) = tool.get("parameters") {
            if let Err(e) = jsonschema::validator_for(parameters) {
                errors.push(doc.error_at(
                    &format!("{at}/parameters"),
                    format!("the parameter schema does not compile: {e}"),
                ));
            }
        }
        if let Some(pointer) = tool.get("concurrency").and_then(|c| text(c, "pointer")) {
            if !is_pointer(pointer) {
                errors.push(doc.error_at(
                    &format!("{at}/concurrency/pointer"),
                    format!("invalid JSON pointer {pointer:?}: expected \"\" or a path starting with '/'"),
                ));
            }
        }
    }

    for (b, batch) in items(value, "batches") {
        let at = format!("/batches/{b}");
        unknown_scope(format!("{at}/scope"), text(batch, "scope"), &mut errors);
        let mut seen = HashSet::new();
        for (c, call) in items(batch, "calls") {
            let Some(id) = text(call, "id") else { continue };
            if !seen.insert(id) {
                errors.push(doc.error_at(
                    &format!("{at}/calls/{c}/id"),
                    format!("duplicate call id {id:?} in this batch; call ids must be unique per batch"),
                ));
            }
        }
    }
    errors.sort_by_key(|e| (e.line, e.column));
    errors
}

/// Calls of a tool the scenario declares nowhere, unless the call expects
/// `UNKNOWN_TOOL` (a scenario may test that on purpose). Reported by
/// `tether check` only: such a scenario still loads and runs, each of these
/// calls ending `UNKNOWN_TOOL`. Skipped when the tool list cannot be read.
pub fn undeclared_tools(doc: &Document) -> Vec<FileError> {
    let Some(tools) = Names::of(&doc.value).tools else {
        return Vec::new();
    };
    let declared = || {
        if tools.is_empty() {
            "none is declared".to_owned()
        } else {
            format!("expected one of: {}", tools.join(", "))
        }
    };
    let mut errors = Vec::new();
    for (b, batch) in items(&doc.value, "batches") {
        for (c, call) in items(batch, "calls") {
            let Some(name) = text(call, "name") else { continue };
            let expects_unknown = call.pointer("/expect/code").and_then(Value::as_str) == Some("UNKNOWN_TOOL");
            if !expects_unknown && !tools.iter().any(|t| t == name) {
                errors.push(doc.error_at(
                    &format!("/batches/{b}/calls/{c}/name"),
                    format!(
                        "tool {name:?} is not declared under \"tools\"; {} (or add \"expect\": {{\"code\": \"UNKNOWN_TOOL\"}} to test an unknown tool)",
                        declared()
                    ),
                ));
            }
        }
    }
    errors
}

pub fn is_pointer(pointer: &str) -> bool {
    pointer.is_empty() || pointer.starts_with('/')
}

/// Checks the scope tree; returns every scope id, or `None` when some
/// scope's id cannot be read (then references to scopes are not checked).
fn check_scopes(value: &Value, doc: &Document, errors: &mut Vec<FileError>) -> Option<HashSet<String>> {
    let scopes: Vec<(usize, &Value)> = match value.get("scopes") {
        None => Vec::new(),
        Some(Value::Array(list)) => list.iter().enumerate().collect(),
        Some(_) => return None,
    };
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut readable = true;
    for (i, scope) in &scopes {
        let Some(id) = text(scope, "id") else {
            readable = false;
            continue;
        };
        if ids.insert(id, *i).is_some() {
            errors.push(doc.error_at(
                &format!("/scopes/{i}/id"),
                format!("duplicate scope id {id:?}; scope ids must be unique"),
            ));
        }
    }
    for (i, scope) in &scopes {
        let (Some(id), Some(parent)) = (text(scope, "id"), text(scope, "parent")) else {
            continue;
        };
        if !ids.contains_key(parent) {
            if readable {
                errors.push(doc.error_at(
                    &format!("/scopes/{i}/parent"),
                    format!("unknown parent scope {parent:?}; expected the id of another scope in this file"),
                ));
            }
            continue;
        }
        // Walk up; a walk longer than the number of scopes is a cycle.
        let mut current = Some(parent);
        let mut steps = 0;
        let mut inherited_owner: Option<&str> = None;
        while let Some(ancestor_id) = current {
            steps += 1;
            if ancestor_id == id || steps > scopes.len() {
                errors.push(doc.error_at(
                    &format!("/scopes/{i}/parent"),
                    format!("scope {id:?} is its own ancestor; parents must form a tree"),
                ));
                break;
            }
            let Some(&index) = ids.get(ancestor_id) else { break };
            let ancestor = scopes[index].1;
            if inherited_owner.is_none() {
                inherited_owner = text(ancestor, "owner");
            }
            current = text(ancestor, "parent");
        }
        if let (Some(owner), Some(inherited)) = (text(scope, "owner"), inherited_owner) {
            if owner != inherited {
                errors.push(doc.error_at(
                    &format!("/scopes/{i}/owner"),
                    format!("owner {owner:?} conflicts with {inherited:?} inherited from an ancestor; a child may not replace its ancestors' owner"),
                ));
            }
        }
    }
    readable.then(|| ids.keys().map(|s| (*s).to_owned()).collect())
}
