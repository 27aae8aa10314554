//! A journal read back as a scenario, so recorded calls can be replayed
//! against a new policy. Each recorded outcome becomes the call's expectation,
//! so a replay reports exactly the outcomes the new policy changes.
//!
//! Each tool gets the declaration the journal recorded for it (`tool/declared`:
//! its schema and concurrency rule; the first one recorded for the scope and
//! name). What a journal does not tell (one written before declarations were
//! recorded) is rebuilt conservatively: the schema becomes `{"type":
//! "object"}`, a tool is parallel only if every recorded call of it was, and a
//! tool whose every call was `UNKNOWN_TOOL` stays unknown.
//! A `BLOCKED` call's real result was withheld from the model, and so from
//! the journal: post-execute policy cannot be replayed on it. It is expected
//! to stay `BLOCKED`; the replay reports the recorded block unless the new
//! policy stops the call before its body (see `session::replay`).
//!
//! Every batch is known by its position in the journal, and every call by
//! (batch, call id): models reuse call ids from step to step.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};
use tether_tools::ToolFailureCode;
use tether_tools::journal::{Journal, JournalScope};

use super::{
    BatchSpec, Body, CallSpec, Concurrency, Expect, NamedConcurrency, Recorded, RecordedCall, Scenario, ScopeSpec,
    ToolSpec,
};

/// What a `tool/declared` record says of a tool.
struct Declared {
    description: String,
    parameters: Value,
    concurrency: Option<Concurrency>,
}

/// The first declaration the journal recorded for each (scope, tool).
fn declarations(journal: &Journal) -> Vec<(Option<JournalScope>, String, Declared)> {
    let mut found: Vec<(Option<JournalScope>, String, Declared)> = Vec::new();
    for event in &journal.other_events {
        if event.get("event").and_then(Value::as_str) != Some("tool/declared") {
            continue;
        }
        let (Some(name), Some(parameters)) = (event.get("name").and_then(Value::as_str), event.get("parameters"))
        else {
            continue;
        };
        let scope: Option<JournalScope> = event.get("scope").and_then(|s| serde_json::from_value(s.clone()).ok());
        if found.iter().any(|(s, n, _)| *s == scope && n == name) {
            continue;
        }
        let declared = Declared {
            description: event
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            parameters: parameters.clone(),
            concurrency: event
                .get("concurrency")
                .and_then(|c| serde_json::from_value(c.clone()).ok()),
        };
        found.push((scope, name.to_owned(), declared));
    }
    found
}

/// Builds the scenario a journal recorded.
pub fn scenario_from_journal(journal: &Journal, title: &str) -> Scenario {
    let declared = declarations(journal);
    let mut scopes: Vec<(JournalScope, ScopeSpec)> = Vec::new();
    let mut scope_id = |scope: &Option<JournalScope>| -> Option<String> {
        let scope = scope.as_ref()?;
        if let Some((_, spec)) = scopes.iter().find(|(s, _)| s == scope) {
            return Some(spec.id.clone());
        }
        let id = scope
            .label
            .clone()
            .unwrap_or_else(|| format!("scope-{}", scopes.len() + 1));
        let spec = ScopeSpec {
            id: id.clone(),
            parent: None,
            session_id: scope.session_id.clone(),
            owner: scope.owner.clone(),
            label: scope.label.clone(),
        };
        scopes.push((scope.clone(), spec));
        Some(id)
    };

    // (scope, tool) → (all parallel?, any call that was not UNKNOWN_TOOL?, its declaration)
    type Seen<'a> = (bool, bool, Option<&'a Declared>);
    let mut tools: BTreeMap<(Option<String>, String), Seen<'_>> = BTreeMap::new();
    let mut recorded: HashMap<(usize, String), Recorded> = HashMap::new();
    let mut batches = Vec::new();
    for (position, batch) in journal.batches.iter().enumerate() {
        let scope = scope_id(&batch.scope);
        let mut calls = Vec::new();
        for call in &batch.calls {
            let record = &call.record;
            let code = call.outcome.as_ref().and_then(|o| o.code());
            let entry = tools
                .entry((scope.clone(), record.call.name.clone()))
                .or_insert_with(|| {
                    let found = declared
                        .iter()
                        .find(|(s, n, _)| *s == batch.scope && *n == record.call.name);
                    (true, false, found.map(|(_, _, d)| d))
                });
            entry.0 &= record.mode == tether_tools::ToolExecutionMode::Parallel;
            entry.1 |= code != Some(ToolFailureCode::UnknownTool);
            let result = match (&call.outcome, code) {
                (Some(o), None) => Recorded::Value(o.value().clone()),
                (Some(o), Some(ToolFailureCode::Blocked)) => Recorded::Value(o.value().clone()),
                (Some(o), Some(ToolFailureCode::ToolError)) => {
                    Recorded::Failed(o.failure().map(|f| f.message.clone()).unwrap_or_default())
                }
                _ => Recorded::NotRun,
            };
            recorded.insert((position, record.call.call_id.clone()), result);
            calls.push(CallSpec {
                id: record.call.call_id.clone(),
                name: record.call.name.clone(),
                arguments: Some(Value::String(record.call.arguments.clone())),
                approval: None,
                expect: call.outcome.as_ref().map(|o| Expect {
                    code: o.code(),
                    value: None,
                    decided_by: None,
                }),
                recorded: Some(RecordedCall {
                    batch: position,
                    outcome: call.outcome.clone(),
                    decision: call.result_extra.clone(),
                    context: record.call.invocation_context.clone(),
                }),
            });
        }
        batches.push(BatchSpec {
            label: Some(format!("journal batch {}", batch.batch)),
            scope,
            max_parallelism: None,
            cancel_after_ms: None,
            calls,
        });
    }
    let recorded = Arc::new(recorded);
    let tools = tools
        .into_iter()
        .filter(|(_, (_, known, declared))| *known || declared.is_some())
        .map(|((scope, name), (parallel, _, declared))| {
            let as_recorded = Concurrency::Named(if parallel {
                NamedConcurrency::Always
            } else {
                NamedConcurrency::Never
            });
            ToolSpec {
                description: declared.map_or_else(
                    || format!("{name} as recorded in the journal"),
                    |d| d.description.clone(),
                ),
                parameters: declared.map_or_else(|| json!({"type": "object"}), |d| d.parameters.clone()),
                concurrency: Some(declared.and_then(|d| d.concurrency.clone()).unwrap_or(as_recorded)),
                name,
                scope,
                body: Body::Recorded(Arc::clone(&recorded)),
                metadata: Value::Null,
            }
        })
        .collect();
    Scenario {
        name: Some(title.to_owned()),
        description: Some("replayed from a journal".to_owned()),
        approval_timeout_ms: None,
        scopes: scopes.into_iter().map(|(_, spec)| spec).collect(),
        tools,
        batches,
    }
}
