//! Checks a scenario beyond its shape: references, duplicates, names,
//! schemas and pointers. Every problem is reported, each at its position.

use std::collections::{HashMap, HashSet};

use tether_tools::is_valid_tool_name;

use super::{Concurrency, Scenario};
use crate::files::source::{Document, FileError};

pub(super) fn check(scenario: &Scenario, doc: &Document) -> Vec<FileError> {
    let mut errors = Vec::new();
    let scope_ids = check_scopes(scenario, doc, &mut errors);
    let known = |id: &str| scope_ids.contains(id);
    let expected_scopes = || {
        if scope_ids.is_empty() {
            "no scopes are defined; add one under \"scopes\" or leave the field out".to_owned()
        } else {
            let mut ids: Vec<_> = scope_ids.iter().map(|s| format!("{s:?}")).collect();
            ids.sort();
            format!("expected one of: {}", ids.join(", "))
        }
    };

    for (i, tool) in scenario.tools.iter().enumerate() {
        let at = format!("/tools/{i}");
        if !is_valid_tool_name(&tool.name) {
            errors.push(doc.error_at(
                &format!("{at}/name"),
                format!(
                    "invalid tool name {:?}: expected 1 to 64 characters from A-Z a-z 0-9 _ . -",
                    tool.name
                ),
            ));
        }
        if let Some(scope) = &tool.scope {
            if !known(scope) {
                errors.push(doc.error_at(
                    &format!("{at}/scope"),
                    format!("unknown scope {scope:?}; {}", expected_scopes()),
                ));
            }
        }
        if let Err(e) = jsonschema::validator_for(&tool.parameters) {
            errors.push(doc.error_at(
                &format!("{at}/parameters"),
                format!("the parameter schema does not compile: {e}"),
            ));
        }
        if let Some(Concurrency::When { pointer, .. }) = &tool.concurrency {
            if !is_pointer(pointer) {
                errors.push(doc.error_at(
                    &format!("{at}/concurrency/pointer"),
                    format!("invalid JSON pointer {pointer:?}: expected \"\" or a path starting with '/'"),
                ));
            }
        }
    }

    for (b, batch) in scenario.batches.iter().enumerate() {
        let at = format!("/batches/{b}");
        if let Some(scope) = &batch.scope {
            if !known(scope) {
                errors.push(doc.error_at(
                    &format!("{at}/scope"),
                    format!("unknown scope {scope:?}; {}", expected_scopes()),
                ));
            }
        }
        let mut seen = HashSet::new();
        for (c, call) in batch.calls.iter().enumerate() {
            if !seen.insert(call.id.as_str()) {
                errors.push(doc.error_at(
                    &format!("{at}/calls/{c}/id"),
                    format!(
                        "duplicate call id {:?} in this batch; call ids must be unique per batch",
                        call.id
                    ),
                ));
            }
        }
    }
    errors.sort_by_key(|e| (e.line, e.column));
    errors
}

pub fn is_pointer(pointer: &str) -> bool {
    pointer.is_empty() || pointer.starts_with('/')
}

fn check_scopes(scenario: &Scenario, doc: &Document, errors: &mut Vec<FileError>) -> HashSet<String> {
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (i, scope) in scenario.scopes.iter().enumerate() {
        if ids.insert(scope.id.as_str(), i).is_some() {
            errors.push(doc.error_at(
                &format!("/scopes/{i}/id"),
                format!("duplicate scope id {:?}; scope ids must be unique", scope.id),
            ));
        }
    }
    for (i, scope) in scenario.scopes.iter().enumerate() {
        let Some(parent) = &scope.parent else { continue };
        if !ids.contains_key(parent.as_str()) {
            errors.push(doc.error_at(
                &format!("/scopes/{i}/parent"),
                format!("unknown parent scope {parent:?}; expected the id of another scope in this file"),
            ));
            continue;
        }
        // Walk up; a walk longer than the number of scopes is a cycle.
        let mut current = Some(parent.as_str());
        let mut steps = 0;
        let mut inherited_owner: Option<&str> = None;
        while let Some(id) = current {
            steps += 1;
            if id == scope.id || steps > scenario.scopes.len() {
                errors.push(doc.error_at(
                    &format!("/scopes/{i}/parent"),
                    format!("scope {:?} is its own ancestor; parents must form a tree", scope.id),
                ));
                break;
            }
            let Some(&index) = ids.get(id) else { break };
            let ancestor = &scenario.scopes[index];
            if inherited_owner.is_none() {
                inherited_owner = ancestor.owner.as_deref();
            }
            current = ancestor.parent.as_deref();
        }
        if let (Some(owner), Some(inherited)) = (&scope.owner, inherited_owner) {
            if owner != inherited {
                errors.push(doc.error_at(
                    &format!("/scopes/{i}/owner"),
                    format!("owner {owner:?} conflicts with {inherited:?} inherited from an ancestor; a child may not replace its ancestors' owner"),
                ));
            }
        }
    }
    ids.keys().map(|s| (*s).to_owned()).collect()
}
