//! SPEC §10: batches. These tests prove the schedule, not just the results:
//! every body records its start and end instants (tokio's paused clock makes
//! them exact), and the assertions are about those instants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tether_tools::{
    ApprovalAnswer, BatchOutcome, BoxError, DeclaredCall, ListenerOrder, ReadyOutcome, SinkFuture, SinkStage,
    StartedCall, Tool, ToolBatchSink, ToolCall, ToolContext, ToolExecution, ToolExecutionMode, ToolExecutionOutcome,
    ToolPreDecision, ToolRegistrationOptions, ToolRegistry,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Debug)]
struct Span {
    id: String,
    start: Instant,
    end: Instant,
}

#[derive(Clone, Default)]
struct Clock {
    spans: Arc<Mutex<Vec<Span>>>,
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

impl Clock {
    fn span(&self, id: &str) -> Span {
        self.spans.lock().unwrap().iter().find(|s| s.id == id).cloned().unwrap()
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    fn count(&self) -> usize {
        self.spans.lock().unwrap().len()
    }
}

/// A tool `work` that sleeps `ms` and records its span; parallel when `par` is true.
fn timed_registry(clock: &Clock) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let c = clock.clone();
    let tool = Tool::new(
        "work",
        "sleeps",
        json!({"type": "object", "properties": {"ms": {"type": "integer"}, "par": {"type": "boolean"}}}),
        move |args: Value, ctx: ToolContext| {
            let c = c.clone();
            async move {
                let start = Instant::now();
                let now = c.running.fetch_add(1, Ordering::SeqCst) + 1;
                c.peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(10))).await;
                c.running.fetch_sub(1, Ordering::SeqCst);
                c.spans.lock().unwrap().push(Span {
                    id: ctx.execution().call_id().to_owned(),
                    start,
                    end: Instant::now(),
                });
                Ok::<_, BoxError>(json!(ctx.execution().call_id()))
            }
        },
    );
    let options = ToolRegistrationOptions::default().with_concurrency(|args| args.get("par") == Some(&json!(true)));
    registry.register(tool, None, options).unwrap().keep();
    registry
}

fn work(id: &str, ms: u64, parallel: bool) -> ToolCall {
    call(id, "work", &json!({"ms": ms, "par": parallel}).to_string())
}

/// `calls` through the global view, four at a time, reported to `sink`.
async fn through_sink(registry: &ToolRegistry, calls: Vec<ToolCall>, sink: &dyn ToolBatchSink) -> BatchOutcome {
    registry
        .execute_batch(
            calls,
            &registry.seal(None),
            cap(4),
            Some(sink),
            &CancellationToken::new(),
        )
        .await
}

fn cap(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

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

/// A sink that records what it is told, and fails (or panics before
/// returning its future) where asked.
#[derive(Default)]
struct RecordingSink {
    events: Mutex<Vec<String>>,
    fail_declared: Vec<String>,
    fail_ready: Vec<String>,
    panic_declared: Vec<String>,
    panic_ready: Vec<String>,
    panic_started: Vec<String>,
    /// Answer `call_declared` at once (`SinkFuture::done`), as a sink that
    /// writes synchronously does, instead of with a future.
    synchronous: bool,
}

impl ToolBatchSink for RecordingSink {
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> SinkFuture<'a> {
        if self.panic_declared.contains(&call.call.call_id) {
            panic!("call_declared bug");
        }
        if self.synchronous {
            self.events
                .lock()
                .unwrap()
                .push(format!("call {} {}", call.index, call.call.call_id));
            return SinkFuture::done(if self.fail_declared.contains(&call.call.call_id) {
                Err("journal disk full".into())
            } else {
                Ok(())
            });
        }
        SinkFuture::pending(async move {
            self.events
                .lock()
                .unwrap()
                .push(format!("call {} {}", call.index, call.call.call_id));
            if self.fail_declared.contains(&call.call.call_id) {
                return Err("journal disk full".into());
            }
            Ok(())
        })
    }

    fn call_started(&self, started: StartedCall<'_>) {
        let id = started.execution.call_id();
        self.events
            .lock()
            .unwrap()
            .push(format!("started {} {id}", started.index));
        if self.panic_started.iter().any(|p| p == id) {
            panic!("call_started bug");
        }
    }

    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> SinkFuture<'a> {
        if self.panic_ready.iter().any(|id| id == ready.outcome.call_id()) {
            panic!("outcome_ready bug");
        }
        SinkFuture::pending(async move {
            let code = ready.outcome.code().map_or("ok", |c| c.as_str());
            self.events
                .lock()
                .unwrap()
                .push(format!("result {} {} {code}", ready.index, ready.outcome.call_id()));
            if self.fail_ready.contains(&ready.outcome.call_id().to_owned()) {
                return Err("journal disk full".into());
            }
            Ok(())
        })
    }
}

impl RecordingSink {
    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }
}

#[tokio::test(start_paused = true)]
async fn the_sink_hears_every_call_before_its_body_and_every_outcome_once_in_declared_order() {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    // The body logs into the same trail as the sink so the order is visible.
    let sink = Arc::new(RecordingSink::default());
    let s = Arc::clone(&sink);
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, next: tether_tools::PreExecuteNext| {
                s.events.lock().unwrap().push(format!("pre {}", e.call_id()));
                next.run()
            },
        )
        .keep();
    let calls = vec![
        work("a", 30, true),
        work("b", 10, true),
        work("c", 5, false),
        call("d", "ghost", "{}"),
    ];
    let batch = registry
        .execute_batch(
            calls,
            &registry.seal(None),
            cap(4),
            Some(&*sink),
            &CancellationToken::new(),
        )
        .await;
    assert!(batch.sink_errors.is_empty());
    let events = sink.events();
    let position = |e: &str| {
        events
            .iter()
            .position(|x| x == e)
            .unwrap_or_else(|| panic!("{e} missing: {events:?}"))
    };
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
    let s = Arc::clone(&sink);
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, next: tether_tools::PreExecuteNext| {
                s.events.lock().unwrap().push(format!("pre {}", e.call_id()));
                async move {
                    if e.call_id() == "x" {
                        Ok(tether_tools::ToolPreDecision::Deny("no".into()))
                    } else {
                        next.run().await
                    }
                }
            },
        )
        .keep();
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
    let batch = registry
        .execute_batch(
            calls,
            &registry.seal(None),
            cap(4),
            Some(&*sink),
            &CancellationToken::new(),
        )
        .await;
    let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
    assert_eq!(
        codes,
        [None, None, Some("UNKNOWN_TOOL"), Some("DENIED")],
        "a panicking call_started does not fail the call"
    );
    assert!(batch.sink_errors.is_empty());
    let events = sink.events();
    let position = |e: &str| {
        events
            .iter()
            .position(|x| x == e)
            .unwrap_or_else(|| panic!("{e} missing: {events:?}"))
    };
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
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let sink = RecordingSink {
        fail_ready: vec!["a".into()],
        ..Default::default()
    };
    let batch = registry
        .execute_batch(
            vec![work("a", 10, false), work("b", 10, false)],
            &registry.seal(None),
            cap(1),
            Some(&sink),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(batch.outcomes[0].value(), &json!("a"));
    assert_eq!(batch.sink_errors.len(), 1);
    assert_eq!(
        (batch.sink_errors[0].stage, batch.sink_errors[0].call_id.as_str()),
        (SinkStage::OutcomeReady, "a")
    );
    assert!(batch.sink_errors[0].to_string().contains("journal disk full"));
    assert_eq!(sink.events().iter().filter(|e| e.starts_with("result")).count(), 2);
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_batch_aborts_running_bodies_and_ends_the_rest_before_dispatch() {
    let registry = ToolRegistry::new();
    let waiter = Tool::new(
        "wait",
        "waits",
        object_schema(),
        |_a: Value, ctx: ToolContext| async move {
            ctx.cancellation().cancelled().await;
            Err::<Value, BoxError>("stopped".into())
        },
    );
    registry
        .register(waiter, None, ToolRegistrationOptions::always_parallel())
        .unwrap()
        .keep();
    register(&registry, returning("quick", json!("done")), None).keep();
    let notified = Trail::default();
    let n = notified.clone();
    registry
        .register_result(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, _o: Arc<ToolExecutionOutcome>| {
                n.push(e.call_id().to_owned());
                async { Ok(()) }
            },
        )
        .keep();
    let sink = RecordingSink::default();
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        c.cancel();
    });
    let calls = vec![
        call("done", "quick", "{}"),
        call("w1", "wait", "{}"),
        call("w2", "wait", "{}"),
        call("w3", "wait", "{}"),
        call("later", "quick", "{}"),
    ];
    let batch = registry
        .execute_batch(calls, &registry.seal(None), cap(2), Some(&sink), &cancel)
        .await;
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
    let batch = registry
        .execute_batch(
            vec![work("a", 1, true), work("b", 1, false)],
            &registry.seal(None),
            cap(2),
            Some(&sink),
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
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let sink = RecordingSink {
        panic_ready: vec!["a".into()],
        ..Default::default()
    };
    let batch = registry
        .execute_batch(
            vec![work("a", 10, false), work("b", 10, false)],
            &registry.seal(None),
            cap(1),
            Some(&sink),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(batch.outcomes[0].value(), &json!("a"));
    assert_eq!(batch.outcomes[1].value(), &json!("b"));
    assert_eq!(batch.sink_errors.len(), 1);
    assert_eq!(
        (batch.sink_errors[0].stage, batch.sink_errors[0].call_id.as_str()),
        (SinkStage::OutcomeReady, "a")
    );
    assert!(batch.sink_errors[0].message.contains("outcome_ready bug"));
    assert_eq!(
        sink.events(),
        ["call 0 a", "started 0 a", "call 1 b", "started 1 b", "result 1 b ok"]
    );
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
    let s = seen.clone();
    registry
        .register_result(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, o: Arc<ToolExecutionOutcome>| {
                s.push(format!(
                    "{} {} {} {}",
                    e.call_id(),
                    o.code().map_or("ok", |c| c.as_str()),
                    e.metadata(),
                    e.arguments()
                ));
                async { Ok(()) }
            },
        )
        .keep();
    let sink = RecordingSink {
        fail_declared: vec!["b".into()],
        ..Default::default()
    };
    let calls = vec![call("a", "t", r#"{"x":1}"#), call("b", "t", r#"{"x":2}"#)];
    registry
        .execute_batch(
            calls,
            &registry.seal(None),
            cap(1),
            Some(&sink),
            &CancellationToken::new(),
        )
        .await;
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

/// Panics when dropped: a body future with a buggy destructor.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("destructor bug");
    }
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
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        c.cancel();
    });
    let calls = vec![
        call("a", "quick", "{}"),
        call("b", "stuck", "{}"),
        call("c", "quick", "{}"),
    ];
    let batch = registry
        .execute_batch(calls, &registry.seal(None), cap(2), Some(&sink), &cancel)
        .await;
    let codes: Vec<_> = batch.outcomes.iter().map(code).collect();
    assert_eq!(codes, [None, Some("TOOL_ERROR"), Some("ABORTED_BEFORE_DISPATCH")]);
    assert!(message(&batch.outcomes[1]).contains("destructor bug"));
    let results: Vec<_> = sink.events().into_iter().filter(|e| e.starts_with("result")).collect();
    assert_eq!(results.len(), 3);
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
