//! SPEC §10 and CONSOLE "Journal": the JSON-lines journal sink and its reader.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::num::NonZeroUsize;

use common::*;
use serde_json::json;
use tether_tools::journal::{Journal, JournalError, JournalSink};
use tether_tools::{AgentPipelineScope, ToolCall, ToolExecutionMode, ToolRegistrationOptions, ToolRegistry};
use tokio_util::sync::CancellationToken;

async fn journal_of(
    registry: &ToolRegistry,
    scope: Option<&AgentPipelineScope>,
    batches: Vec<Vec<ToolCall>>,
) -> String {
    let sink = JournalSink::new(Vec::<u8>::new());
    for calls in batches {
        registry
            .execute_batch(
                calls,
                &registry.seal(scope),
                NonZeroUsize::new(4).unwrap(),
                Some(&sink),
                &CancellationToken::new(),
            )
            .await;
    }
    String::from_utf8(sink.into_inner()).unwrap()
}

fn demo_registry() -> (ToolRegistry, AgentPipelineScope) {
    let registry = ToolRegistry::new();
    let scope = AgentPipelineScope::builder()
        .label("agent-1")
        .session_id("s-42")
        .owner("alice")
        .build()
        .unwrap();
    registry
        .register(
            echo("read", path_schema()),
            Some(&scope),
            ToolRegistrationOptions::always_parallel(),
        )
        .unwrap()
        .keep();
    (registry, scope)
}

#[tokio::test]
async fn every_call_and_result_is_one_json_line_in_declared_order() {
    let (registry, scope) = demo_registry();
    let text = journal_of(
        &registry,
        Some(&scope),
        vec![vec![call("a", "read", r#"{"path":"x"}"#), call("b", "ghost", "{}")]],
    )
    .await;
    let events: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary: Vec<_> = events
        .iter()
        .map(|e| format!("{} {}", e["event"].as_str().unwrap(), e["call_id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        ["tool/call a", "tool/call b", "tool/result a", "tool/result b"]
    );
    assert_eq!(events[0]["arguments"], json!(r#"{"path":"x"}"#), "the raw text is kept");
    assert_eq!(
        events[0]["scope"],
        json!({"label": "agent-1", "session_id": "s-42", "owner": "alice"})
    );
    assert_eq!(events[0]["mode"], json!("parallel"));
    assert_eq!(events[3]["code"], json!("UNKNOWN_TOOL"));
    assert!(text.ends_with('\n'));
}

#[tokio::test]
async fn a_journal_reads_back_into_the_batches_it_recorded() {
    let (registry, scope) = demo_registry();
    let first = vec![call("a", "read", r#"{"path":"x"}"#), call("b", "read", "not json")];
    let second = vec![call("c", "read", r#"{"path":"y"}"#)];
    let text = journal_of(&registry, Some(&scope), vec![first.clone(), second.clone()]).await;
    let journal = Journal::parse(&text).unwrap();
    assert_eq!(journal.batches.len(), 2);
    assert_eq!(journal.batches[0].tool_calls(), first);
    assert_eq!(journal.batches[1].tool_calls(), second);
    assert_eq!(
        journal.batches[0].scope.as_ref().unwrap().owner.as_deref(),
        Some("alice")
    );
    let outcome = journal.batches[0].calls[0].outcome.clone().unwrap();
    assert_eq!(outcome.value(), &json!({"path": "x"}));
    let invalid = journal.batches[0].calls[1].outcome.clone().unwrap();
    assert_eq!(invalid.code().map(|c| c.as_str()), Some("INVALID_ARGS"));
    assert_eq!(journal.batches[0].calls[1].record.mode, ToolExecutionMode::Exclusive);
    assert_eq!(journal.truncated_line, None);
}

#[tokio::test]
async fn a_truncated_last_line_is_reported_not_an_error() {
    let (registry, scope) = demo_registry();
    let text = journal_of(
        &registry,
        Some(&scope),
        vec![vec![call("a", "read", r#"{"path":"x"}"#)]],
    )
    .await;
    // A crash in the middle of writing the result line.
    let cut = &text[..text.len() - 20];
    let journal = Journal::parse(cut).unwrap();
    assert_eq!(journal.truncated_line, Some(2));
    assert_eq!(journal.batches[0].calls.len(), 1, "the declared call is not lost");
    assert_eq!(journal.batches[0].calls[0].outcome, None);
}

#[test]
fn a_broken_line_in_the_middle_is_an_error_with_line_and_column() {
    let text = "{\"event\":\"other\"}\n{\"event\": tool}\n{\"event\":\"other\"}\n";
    let error = Journal::parse(text).unwrap_err();
    match error {
        JournalError::Syntax { line, column, .. } => assert_eq!((line, column), (2, 12)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_result_without_its_call_is_an_error() {
    let text = r#"{"event":"tool/result","ts_ms":1,"batch":1,"index":0,"call_id":"a","name":"t","code":null,"value":1}
"#;
    let error = Journal::parse(text).unwrap_err();
    assert!(
        matches!(&error, JournalError::Shape { line: 1, message } if message.contains("no tool/call")),
        "{error}"
    );
}

#[test]
fn a_line_without_an_event_is_an_error_and_other_events_are_kept() {
    let error = Journal::parse("[1,2]\n").unwrap_err();
    assert!(matches!(error, JournalError::Shape { line: 1, .. }));
    let journal = Journal::parse("{\"event\":\"approval/decision\",\"decided_by\":\"human\"}\n").unwrap();
    assert_eq!(journal.other_events.len(), 1);
}

#[tokio::test]
async fn two_runs_appending_to_one_file_with_the_same_batch_ids_stay_apart() {
    let (first_registry, scope) = demo_registry();
    let a = journal_of(
        &first_registry,
        Some(&scope),
        vec![vec![call("a", "read", r#"{"path":"x"}"#)]],
    )
    .await;
    let (second_registry, scope) = demo_registry();
    let b = journal_of(
        &second_registry,
        Some(&scope),
        vec![vec![call("b", "read", r#"{"path":"y"}"#)]],
    )
    .await;
    let journal = Journal::parse(&(a + &b)).unwrap();
    assert_eq!(journal.batches.len(), 2);
    assert!(journal.batches.iter().all(|b| b.calls[0].outcome.is_some()));
}

#[test]
fn fields_a_writer_adds_to_a_result_line_are_read_back_with_its_call() {
    let text = concat!(
        r#"{"event":"tool/call","ts_ms":1,"batch":1,"index":0,"total":1,"mode":"exclusive","call_id":"a","name":"t","arguments":"{}"}"#,
        "\n",
        r#"{"event":"tool/result","ts_ms":2,"batch":1,"index":0,"call_id":"a","name":"t","code":"DENIED","value":{"message":"no"},"decided_by":"human@main","waited_ms":1200}"#,
        "\n",
    );
    let journal = Journal::parse(text).unwrap();
    let call = &journal.batches[0].calls[0];
    assert_eq!(
        call.outcome.as_ref().unwrap().code(),
        Some(tether_tools::ToolFailureCode::Denied)
    );
    assert_eq!(call.result_extra.get("decided_by"), Some(&json!("human@main")));
    assert_eq!(call.result_extra.get("waited_ms"), Some(&json!(1200)));
}
