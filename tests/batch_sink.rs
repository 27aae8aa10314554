//! SPEC §10: a batch's sink. Every call is declared before anything
//! happens to it, every outcome handed over once in declared order, a
//! failing or panicking sink costs no outcome.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batch_support;
mod common;

use std::sync::Arc;
use std::time::Duration;

use batch_support::*;
use common::*;
use serde_json::json;
use tether_tools::{ListenerOrder, SinkStage, ToolExecution, ToolRegistrationOptions, ToolRegistry};
use tokio_util::sync::CancellationToken;

/// A pre-execute listener that writes `pre ID` among `sink`'s events, so
/// the order against the sink's own is visible; it denies call `denied`.
fn pre_into(registry: &ToolRegistry, sink: &Arc<RecordingSink>, denied: Option<&'static str>) {
    let s = Arc::clone(sink);
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, next: tether_tools::PreExecuteNext| {
                s.events.lock().unwrap().push(format!("pre {}", e.call_id()));
                async move {
                    if Some(e.call_id()) == denied {
                        Ok(tether_tools::ToolPreDecision::Deny("no".into()))
                    } else {
                        next.run().await
                    }
                }
            },
        )
        .keep();
}

#[tokio::test(start_paused = true)]
async fn the_sink_hears_every_call_before_its_body_and_every_outcome_once_in_declared_order() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    // The body logs into the same trail as the sink so the order is visible.
    let sink = Arc::new(RecordingSink::default());
    pre_into(&registry, &sink, None);
    let calls = vec![
        work("a", 30, true),
        work("b", 10, true),
        work("c", 5, false),
        call("d", "ghost", "{}"),
    ];
    let batch = through_sink(&registry, calls, &*sink).await;
    assert!(batch.sink_errors.is_empty());
    let events = sink.events();
    let position = |e: &str| sink.position(e);
    for (i, id) in ["a", "b", "c", "d"].iter().enumerate() {
        assert!(
            position(&format!("call {i} {id}"))
                < position(&format!(
                    "result {i} {id} {}",
                    if *id == "d" { "UNKNOWN_TOOL" } else { "ok" }
                ))
        );
        if *id != "d" {
            assert!(position(&format!("call {i} {id}")) < position(&format!("pre {id}")));
        }
    }
    let results: Vec<_> = events.iter().filter(|e| e.starts_with("result")).cloned().collect();
    assert_eq!(
        results,
        [
            "result 0 a ok",
            "result 1 b ok",
            "result 2 c ok",
            "result 3 d UNKNOWN_TOOL"
        ]
    );
    let declared: Vec<_> = events.iter().filter(|e| e.starts_with("call")).cloned().collect();
    assert_eq!(declared, ["call 0 a", "call 1 b", "call 2 c", "call 3 d"]);
}

#[tokio::test(start_paused = true)]
async fn a_failing_call_declared_means_the_body_never_runs_and_the_call_is_a_tool_error() {
    // Both ways a sink can fail: from its future, and at once (`SinkFuture::done`).
    for synchronous in [false, true] {
        let clock = Clock::default();
        let registry = timed_registry(&clock);
        let sink = RecordingSink {
            fail_declared: vec!["b".into()],
            synchronous,
            ..Default::default()
        };
        let calls = vec![work("a", 10, true), work("b", 10, true), work("c", 10, false)];
        let batch = through_sink(&registry, calls, &sink).await;
        let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
        assert_eq!(codes, [None, Some("TOOL_ERROR"), None], "synchronous: {synchronous}");
        assert!(message(&batch.outcomes[1]).contains("could not be recorded"));
        assert_eq!(clock.count(), 2, "b's body never ran (synchronous: {synchronous})");
        assert_eq!(batch.sink_errors.len(), 1);
        assert_eq!(batch.sink_errors[0].stage, SinkStage::CallDeclared);
        assert!(
            sink.events().contains(&"result 1 b TOOL_ERROR".to_owned()),
            "the failed call still gets its result"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_sink_hears_each_start_after_approval_and_before_the_body_and_none_for_calls_that_end_early() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let sink = Arc::new(RecordingSink {
        panic_started: vec!["b".into()],
        ..Default::default()
    });
    pre_into(&registry, &sink, Some("x"));
    let s = Arc::clone(&sink);
    registry
        .register_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, d: tether_tools::ToolDispatch, next: tether_tools::ExecuteNext| {
                s.events.lock().unwrap().push(format!("body {}", e.call_id()));
                next.run(d)
            },
        )
        .keep();
    let calls = vec![
        work("a", 10, true),
        work("b", 10, true),
        call("d", "ghost", "{}"),
        work("x", 10, false),
    ];
    let batch = through_sink(&registry, calls, &*sink).await;
    let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
    assert_eq!(
        codes,
        [None, None, Some("UNKNOWN_TOOL"), Some("DENIED")],
        "a panicking call_started does not fail the call"
    );
    assert!(batch.sink_errors.is_empty());
    let events = sink.events();
    let position = |e: &str| sink.position(e);
    for (i, id) in ["a", "b"].iter().enumerate() {
        assert!(position(&format!("pre {id}")) < position(&format!("started {i} {id}")));
        assert!(position(&format!("started {i} {id}")) < position(&format!("body {id}")));
    }
    let started: Vec<_> = events.iter().filter(|e| e.starts_with("started")).cloned().collect();
    assert_eq!(started.len(), 2, "only calls that reach their body start: {events:?}");
    assert_eq!(clock.count(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_failing_outcome_ready_is_reported_and_the_outcome_kept() {
    let sink = RecordingSink {
        fail_ready: vec!["a".into()],
        ..Default::default()
    };
    let batch = a_then_b_with_a_ready_refused(&sink).await;
    assert!(batch.sink_errors[0].to_string().contains("journal disk full"));
    assert_eq!(sink.events().iter().filter(|e| e.starts_with("result")).count(), 2);
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_batch_aborts_running_bodies_and_ends_the_rest_before_dispatch() {
    let registry = ToolRegistry::new();
    registry
        .register(
            waits_for_cancellation("wait"),
            None,
            ToolRegistrationOptions::always_parallel(),
        )
        .unwrap()
        .keep();
    register(&registry, returning("quick", json!("done")), None).keep();
    let notified = Trail::default();
    hears_results(&registry, &notified, |e, _o| e.call_id().to_owned());
    let sink = RecordingSink::default();
    let cancel = cancelled_after(Duration::from_millis(100));
    let calls = vec![
        call("done", "quick", "{}"),
        call("w1", "wait", "{}"),
        call("w2", "wait", "{}"),
        call("w3", "wait", "{}"),
        call("later", "quick", "{}"),
    ];
    let batch = through_sink_with(&registry, calls, &sink, 2, &cancel).await;
    let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
    assert_eq!(
        codes,
        [
            None,
            Some("ABORTED"),
            Some("ABORTED"),
            Some("ABORTED_BEFORE_DISPATCH"),
            Some("ABORTED_BEFORE_DISPATCH")
        ],
        "w3 waited for a slot under the cap of 2, so it never dispatched"
    );
    assert_eq!(notified.entries().len(), 5, "every call reaches the result stage");
    assert_eq!(sink.events().iter().filter(|e| e.starts_with("call")).count(), 5);
    assert_eq!(sink.events().iter().filter(|e| e.starts_with("result")).count(), 5);
}

#[tokio::test(start_paused = true)]
async fn a_batch_cancelled_before_it_starts_still_returns_one_outcome_per_call() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let sink = RecordingSink::default();
    let batch = through_sink_with(
        &registry,
        vec![work("a", 1, true), work("b", 1, false)],
        &sink,
        2,
        &cancel,
    )
    .await;
    assert!(
        batch
            .outcomes
            .iter()
            .all(|o| code(o) == Some("ABORTED_BEFORE_DISPATCH"))
    );
    assert_eq!(clock.count(), 0);
    assert_eq!(sink.events().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn calls_that_end_before_dispatch_give_result_listeners_the_tools_metadata() {
    let registry = ToolRegistry::new();
    let options = ToolRegistrationOptions::default().with_metadata(json!({"risk": "low"}));
    registry
        .register(returning("t", json!(1)), None, options)
        .unwrap()
        .keep();
    let seen = Trail::default();
    hears_results(&registry, &seen, |e, o| {
        format!(
            "{} {} {} {}",
            e.call_id(),
            o.code().map_or("ok", |c| c.as_str()),
            e.metadata(),
            e.arguments()
        )
    });
    let sink = RecordingSink {
        fail_declared: vec!["b".into()],
        ..Default::default()
    };
    let calls = vec![call("a", "t", r#"{"x":1}"#), call("b", "t", r#"{"x":2}"#)];
    through_sink_with(&registry, calls, &sink, 1, &CancellationToken::new()).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    registry
        .execute_batch(vec![call("c", "t", "{")], &registry.seal(None), cap(1), None, &cancel)
        .await;
    assert_eq!(
        seen.entries(),
        [
            r#"a ok {"risk":"low"} {"x":1}"#,
            r#"b TOOL_ERROR {"risk":"low"} {"x":2}"#,
            r#"c ABORTED_BEFORE_DISPATCH {"risk":"low"} "{""#,
        ]
    );
}
