//! SPEC §10: a panic anywhere around a batch (a sink callback, a body
//! before or after it returns its future, a destructor run by a cancel)
//! costs no outcome: one per call, always.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batch_support;
mod common;

use std::time::Duration;

use batch_support::*;
use common::*;
use serde_json::{Value, json};
use tether_tools::{BoxError, SinkStage, Tool, ToolContext, ToolRegistrationOptions, ToolRegistry};
use tokio_util::sync::CancellationToken;

/// `work`, plus a tool `early` that panics before returning its future when
/// its arguments say so.
fn registry_with_early_panics(clock: &Clock) -> ToolRegistry {
    let registry = timed_registry(clock);
    let early = Tool::new(
        "early",
        "panics early",
        object_schema(),
        |args: Value, _c: ToolContext| {
            if args["panic"] == json!(true) {
                panic!("body bug before the future");
            }
            async { Ok::<Value, BoxError>(json!("early ran")) }
        },
    );
    registry
        .register(early, None, ToolRegistrationOptions::always_parallel())
        .unwrap()
        .keep();
    registry
}

#[tokio::test(start_paused = true)]
async fn a_body_that_panics_before_its_future_loses_no_other_outcome_of_its_batch() {
    let clock = Clock::default();
    let registry = registry_with_early_panics(&clock);
    let sink = RecordingSink::default();
    let calls = vec![
        work("a", 10, true),
        call("b", "early", r#"{"panic": true}"#),
        work("c", 10, true),
    ];
    let batch = through_sink(&registry, calls, &sink).await;
    let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
    assert_eq!(codes, [None, Some("TOOL_ERROR"), None]);
    assert_eq!(message(&batch.outcomes[1]), "tool panicked: body bug before the future");
    assert_eq!(clock.count(), 2);
    let results: Vec<_> = sink.events().into_iter().filter(|e| e.starts_with("result")).collect();
    assert_eq!(results, ["result 0 a ok", "result 1 b TOOL_ERROR", "result 2 c ok"]);
    // The registry keeps working.
    let again = registry
        .execute_batch(
            vec![call("d", "early", "{}")],
            &registry.seal(None),
            cap(1),
            None,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(again.outcomes[0].value(), &json!("early ran"));
}

#[tokio::test(start_paused = true)]
async fn a_call_declared_that_panics_fails_that_call_without_its_body() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let sink = RecordingSink {
        panic_declared: vec!["b".into()],
        ..Default::default()
    };
    let calls = vec![work("a", 10, true), work("b", 10, true), work("c", 10, false)];
    let batch = through_sink(&registry, calls, &sink).await;
    let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
    assert_eq!(codes, [None, Some("TOOL_ERROR"), None]);
    assert!(message(&batch.outcomes[1]).contains("call_declared bug"));
    assert_eq!(clock.count(), 2, "b's body never ran");
    assert_eq!(batch.sink_errors.len(), 1);
    assert_eq!(
        (batch.sink_errors[0].stage, batch.sink_errors[0].call_id.as_str()),
        (SinkStage::CallDeclared, "b")
    );
    assert!(sink.events().contains(&"result 1 b TOOL_ERROR".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn an_outcome_ready_that_panics_is_reported_and_every_outcome_kept() {
    let sink = RecordingSink {
        panic_ready: vec!["a".into()],
        ..Default::default()
    };
    let batch = a_then_b_with_a_ready_refused(&sink).await;
    assert_eq!(batch.outcomes[1].value(), &json!("b"));
    assert!(batch.sink_errors[0].message.contains("outcome_ready bug"));
    assert_eq!(
        sink.events(),
        ["call 0 a", "started 0 a", "call 1 b", "started 1 b", "result 1 b ok"]
    );
}

#[tokio::test(start_paused = true)]
async fn a_body_future_that_panics_when_dropped_by_a_cancel_still_leaves_one_outcome_per_call() {
    let registry = ToolRegistry::new();
    let stuck = Tool::new("stuck", "never ends", object_schema(), |_a: Value, _c: ToolContext| {
        let armed = PanicsOnDrop;
        async move {
            std::future::pending::<()>().await;
            drop(armed);
            Ok::<Value, BoxError>(json!(null))
        }
    });
    registry
        .register(stuck, None, ToolRegistrationOptions::always_parallel())
        .unwrap()
        .keep();
    register(&registry, returning("quick", json!("done")), None).keep();
    let sink = RecordingSink::default();
    let cancel = cancelled_after(Duration::from_millis(10));
    let calls = vec![
        call("a", "quick", "{}"),
        call("b", "stuck", "{}"),
        call("c", "quick", "{}"),
    ];
    let batch = through_sink_with(&registry, calls, &sink, 2, &cancel).await;
    let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
    assert_eq!(codes, [None, Some("TOOL_ERROR"), Some("ABORTED_BEFORE_DISPATCH")]);
    assert!(message(&batch.outcomes[1]).contains("destructor bug"));
    let results: Vec<_> = sink.events().into_iter().filter(|e| e.starts_with("result")).collect();
    assert_eq!(results.len(), 3);
}

/// Panics when dropped: a body future with a buggy destructor.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("destructor bug");
    }
}
