//! SPEC §10 for a batch of one call, which the engine runs without its
//! ordering machinery (no parallel slots, no outcomes to put in order):
//! the sink is told exactly what it is told of a longer batch's call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batch_support;
mod common;

use batch_support::*;
use common::*;
use serde_json::json;
use tether_tools::{SinkStage, ToolExecutionMode};
use tokio_util::sync::CancellationToken;

#[tokio::test(start_paused = true)]
async fn its_sink_hears_the_call_its_start_and_its_outcome_in_that_order() {
    for parallel in [false, true] {
        let clock = Clock::default();
        let registry = timed_registry(&clock);
        let sink = RecordingSink::default();
        let batch = through_sink(&registry, vec![work("a", 10, parallel)], &sink).await;
        assert_eq!(
            sink.events(),
            ["call 0 a", "started 0 a", "result 0 a ok"],
            "parallel: {parallel}"
        );
        assert_eq!(batch.outcomes.len(), 1);
        assert_eq!(batch.outcomes[0].value(), &json!("a"));
        let mode = if parallel {
            ToolExecutionMode::Parallel
        } else {
            ToolExecutionMode::Exclusive
        };
        assert_eq!(batch.modes, [mode]);
        assert!(batch.sink_errors.is_empty());
        assert_eq!(clock.count(), 1);
    }
}

#[tokio::test(start_paused = true)]
async fn a_failing_or_panicking_call_declared_means_its_body_never_runs() {
    for (fails, panics, synchronous) in [(true, false, false), (true, false, true), (false, true, false)] {
        let clock = Clock::default();
        let registry = timed_registry(&clock);
        let named = |on: bool| if on { vec!["a".to_owned()] } else { Vec::new() };
        let sink = RecordingSink {
            fail_declared: named(fails),
            panic_declared: named(panics),
            synchronous,
            ..Default::default()
        };
        let batch = through_sink(&registry, vec![work("a", 10, true)], &sink).await;
        let case = format!("fails {fails}, panics {panics}, synchronous {synchronous}");
        assert_eq!(code(&batch.outcomes[0]), Some("TOOL_ERROR"), "{case}");
        assert_eq!(clock.count(), 0, "the body never ran: {case}");
        assert_eq!(batch.sink_errors.len(), 1, "{case}");
        assert_eq!(batch.sink_errors[0].stage, SinkStage::CallDeclared, "{case}");
        assert!(
            sink.events().contains(&"result 0 a TOOL_ERROR".to_owned()),
            "the failed call still gets its result: {case}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_failing_or_panicking_outcome_ready_is_reported_and_the_outcome_kept() {
    for panics in [false, true] {
        let clock = Clock::default();
        let registry = timed_registry(&clock);
        let sink = RecordingSink {
            fail_ready: if panics { Vec::new() } else { vec!["a".into()] },
            panic_ready: if panics { vec!["a".into()] } else { Vec::new() },
            ..Default::default()
        };
        let batch = through_sink(&registry, vec![work("a", 10, false)], &sink).await;
        assert_eq!(batch.outcomes[0].value(), &json!("a"), "panics: {panics}");
        assert_eq!(batch.sink_errors.len(), 1, "panics: {panics}");
        assert_eq!(
            (batch.sink_errors[0].stage, batch.sink_errors[0].call_id.as_str()),
            (SinkStage::OutcomeReady, "a")
        );
    }
}

#[tokio::test(start_paused = true)]
async fn cancelled_before_it_starts_it_ends_before_dispatch_and_is_still_told() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let sink = RecordingSink::default();
    let batch = through_sink_with(&registry, vec![work("a", 1, true)], &sink, 1, &cancel).await;
    assert_eq!(code(&batch.outcomes[0]), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(clock.count(), 0);
    assert_eq!(sink.events(), ["call 0 a", "result 0 a ABORTED_BEFORE_DISPATCH"]);
}

#[tokio::test(start_paused = true)]
async fn cancelled_while_its_body_runs_it_ends_aborted() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        c.cancel();
    });
    let sink = RecordingSink::default();
    let batch = through_sink_with(&registry, vec![work("a", 50, false)], &sink, 1, &cancel).await;
    assert_eq!(code(&batch.outcomes[0]), Some("ABORTED"));
    assert_eq!(sink.events(), ["call 0 a", "started 0 a", "result 0 a ABORTED"]);
}
