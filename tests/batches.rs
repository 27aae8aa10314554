//! SPEC §10: batches. These tests prove the schedule, not just the results:
//! every body records its start and end instants (tokio's paused clock makes
//! them exact), and the assertions are about those instants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batch_support;
mod common;

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use batch_support::*;
use common::*;
use serde_json::{Value, json};
use tether_tools::{
    ApprovalAnswer, BoxError, DeclaredCall, ListenerOrder, ReadyOutcome, SinkFuture, Tool, ToolBatchSink, ToolContext,
    ToolExecution, ToolExecutionMode, ToolExecutionOutcome, ToolPreDecision, ToolRegistrationOptions, ToolRegistry,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[tokio::test(start_paused = true)]
async fn an_exclusive_call_starts_after_every_earlier_call_and_blocks_every_later_one() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let calls = vec![
        work("p1", 30, true),
        work("p2", 50, true),
        work("x", 20, false),
        work("p3", 10, true),
        work("p4", 10, true),
    ];
    let batch = registry
        .execute_batch(calls, &registry.seal(None), cap(8), None, &CancellationToken::new())
        .await;
    assert!(batch.outcomes.iter().all(|o| !o.is_error()));
    let x = clock.span("x");
    assert!(x.start >= clock.span("p1").end && x.start >= clock.span("p2").end);
    assert!(clock.span("p3").start >= x.end && clock.span("p4").start >= x.end);
    // The parallel neighbours really overlapped.
    assert_eq!(clock.span("p1").start, clock.span("p2").start);
    assert_eq!(clock.span("p3").start, clock.span("p4").start);
    assert_eq!(
        batch.modes,
        [
            ToolExecutionMode::Parallel,
            ToolExecutionMode::Parallel,
            ToolExecutionMode::Exclusive,
            ToolExecutionMode::Parallel,
            ToolExecutionMode::Parallel
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn consecutive_exclusive_calls_never_overlap() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let calls = (0..4).map(|i| work(&format!("x{i}"), 10, false)).collect();
    registry
        .execute_batch(calls, &registry.seal(None), cap(8), None, &CancellationToken::new())
        .await;
    assert_eq!(clock.peak(), 1);
    for i in 1..4 {
        assert!(clock.span(&format!("x{i}")).start >= clock.span(&format!("x{}", i - 1)).end);
    }
}

#[tokio::test(start_paused = true)]
async fn parallel_bodies_never_exceed_max_parallelism_and_reach_it_when_there_is_work() {
    for limit in [1, 3, 7] {
        let clock = Clock::default();
        let registry = timed_registry(&clock);
        let calls = (0..20).map(|i| work(&format!("p{i}"), 10 + i % 3, true)).collect();
        let started = Instant::now();
        registry
            .execute_batch(calls, &registry.seal(None), cap(limit), None, &CancellationToken::new())
            .await;
        assert_eq!(clock.peak(), limit, "limit {limit}");
        assert_eq!(clock.count(), 20);
        // With the cap saturated, the makespan is about 20/limit rounds.
        let rounds = 20_u32.div_ceil(limit as u32);
        assert!(
            started.elapsed() <= Duration::from_millis(12) * rounds,
            "limit {limit}: {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn outcomes_come_back_in_declared_order_when_completion_order_is_reversed() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let calls: Vec<_> = (0..6).map(|i| work(&format!("c{i}"), 60 - i * 10, true)).collect();
    let batch = registry
        .execute_batch(calls, &registry.seal(None), cap(6), None, &CancellationToken::new())
        .await;
    let ids: Vec<_> = batch.outcomes.iter().map(|o| o.call_id().to_owned()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4", "c5"]);
    assert!(
        clock.span("c5").end < clock.span("c0").end,
        "completion really was reversed"
    );
}

#[tokio::test(start_paused = true)]
async fn calls_of_one_parallel_group_wait_for_approval_together_while_the_cap_bounds_bodies() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    registry
        .register_pre_execute(None, ListenerOrder::Append, pre_decides(ToolPreDecision::Ask(None)))
        .keep();
    let (answerer, mut requests) = tether_tools::pipeline::approval::channel();
    registry.set_approval_answerer(answerer).keep();
    let calls = (0..4).map(|i| work(&format!("p{i}"), 10, true)).collect();
    let view = registry.seal(None);
    let cancel = CancellationToken::new();
    let batch = registry.execute_batch(calls, &view, cap(1), None, &cancel);
    let approver = async {
        let mut pending = Vec::new();
        // All four are waiting at once even though only one body may run.
        for _ in 0..4 {
            pending.push(requests.recv().await.unwrap());
        }
        for p in pending {
            p.reply.send(ApprovalAnswer::Approved).unwrap();
        }
    };
    let (batch, ()) = tokio::join!(batch, approver);
    assert!(batch.outcomes.iter().all(|o| !o.is_error()));
    assert_eq!(clock.peak(), 1);
}

#[tokio::test(start_paused = true)]
async fn unknown_tools_and_panicking_bodies_still_get_their_outcome_in_place() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let panicker = Tool::new("boom", "panics", object_schema(), |_a: Value, _c: ToolContext| async {
        panic!("body bug");
        #[allow(unreachable_code)]
        Ok::<Value, BoxError>(json!(null))
    });
    registry
        .register(panicker, None, ToolRegistrationOptions::always_parallel())
        .unwrap()
        .keep();
    let calls = vec![
        work("a", 5, true),
        call("b", "boom", "{}"),
        call("c", "ghost", "{}"),
        work("d", 5, true),
    ];
    let batch = registry
        .execute_batch(calls, &registry.seal(None), cap(4), None, &CancellationToken::new())
        .await;
    let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
    assert_eq!(codes, [None, Some("TOOL_ERROR"), Some("UNKNOWN_TOOL"), None]);
}

/// Records the execution id of every call declared and of every call the
/// pre-execute stage saw.
#[derive(Default)]
struct ExecutionIds {
    declared: Mutex<Vec<tether_tools::ExecutionId>>,
}

impl ToolBatchSink for ExecutionIds {
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> SinkFuture<'a> {
        self.declared.lock().unwrap().push(call.execution);
        SinkFuture::done(Ok(()))
    }

    fn outcome_ready<'a>(&'a self, _ready: ReadyOutcome<'a>) -> SinkFuture<'a> {
        SinkFuture::done(Ok(()))
    }
}

#[tokio::test]
async fn calls_sharing_a_call_id_are_each_their_own_execution_from_declaration_to_outcome() {
    let registry = ToolRegistry::new();
    let _tool = register(&registry, returning("t", json!(1)), None);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let saw = Arc::clone(&seen);
    let _pre = registry.register_pre_execute(
        None,
        ListenerOrder::Append,
        move |e: ToolExecution, next: tether_tools::PreExecuteNext| {
            saw.lock().unwrap().push(e.id());
            next.run()
        },
    );
    let sink = ExecutionIds::default();
    let view = registry.seal(None);
    let calls = vec![call("x", "t", "{}"), call("x", "t", "{}"), call("x", "nope", "{}")];
    let batch = registry
        .execute_batch(
            calls.clone(),
            &view,
            NonZeroUsize::MIN,
            Some(&sink),
            &CancellationToken::new(),
        )
        .await;
    let declared = sink.declared.lock().unwrap().clone();
    let outcomes: Vec<_> = batch.outcomes.iter().map(ToolExecutionOutcome::execution_id).collect();
    assert_eq!(
        declared, outcomes,
        "each outcome names the execution declared in its place"
    );
    assert_eq!(
        &seen.lock().unwrap()[..],
        &declared[..2],
        "the listener saw the same executions"
    );
    let mut distinct = declared.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "three calls, three executions: {declared:?}");
    // Another batch of the same calls: new executions again.
    let again = registry
        .execute_batch(calls, &view, NonZeroUsize::MIN, None, &CancellationToken::new())
        .await;
    assert!(again.outcomes.iter().all(|o| !declared.contains(&o.execution_id())));
}
