//! A journal read back as a scenario, so recorded calls can be replayed
//! against a new policy. Each recorded outcome becomes the call's expectation,
//! so a replay reports exactly the outcomes the new policy changes.
//!
//! What a journal cannot tell is rebuilt conservatively: parameter schemas
//! become `{"type": "object"}`, a tool is parallel only if every recorded call
//! of it was, and a tool whose every call was `UNKNOWN_TOOL` stays unknown.
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

/// Builds the scenario a journal recorded.
pub fn scenario_from_journal(journal: &Journal, title: &str) -> Scenario {
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

    // (scope, tool) → (all parallel?, any call that was not UNKNOWN_TOOL?)
    let mut tools: BTreeMap<(Option<String>, String), (bool, bool)> = BTreeMap::new();
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
                .or_insert((true, false));
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
        .filter(|(_, (_, known))| *known)
        .map(|((scope, name), (parallel, _))| ToolSpec {
            description: format!("{name} as recorded in the journal"),
            name,
            parameters: json!({"type": "object"}),
            scope,
            concurrency: Some(Concurrency::Named(if parallel {
                NamedConcurrency::Always
            } else {
                NamedConcurrency::Never
            })),
            body: Body::Recorded(Arc::clone(&recorded)),
            metadata: Value::Null,
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
