//! SPEC §10 under load: 2,000 mixed calls, sinks failing now and then, the
//! batch cancelled midway. Every call has exactly one outcome and one
//! `outcome_ready`, in declared order; nothing is duplicated or lost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tether_tools::{
    BoxError, DeclaredCall, ListenerOrder, PreExecuteNext, ReadyOutcome, SinkFuture, SinkStage, Tool, ToolBatchSink,
    ToolCall, ToolContext, ToolExecution, ToolPreDecision, ToolRegistrationOptions, ToolRegistry,
};
use tokio_util::sync::CancellationToken;

/// A small deterministic generator, so a failure reproduces.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Default)]
struct FlakySink {
    declared: Mutex<Vec<String>>,
    ready: Mutex<Vec<(usize, String)>>,
    fail_declared: Vec<String>,
    fail_ready: Vec<String>,
}

impl ToolBatchSink for FlakySink {
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> SinkFuture<'a> {
        SinkFuture::pending(async move {
            self.declared.lock().unwrap().push(call.call.call_id.clone());
            if self.fail_declared.contains(&call.call.call_id) {
                return Err("declare failed".into());
            }
            tokio::task::yield_now().await;
            Ok(())
        })
    }

    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> SinkFuture<'a> {
        SinkFuture::pending(async move {
            let id = ready.outcome.call_id().to_owned();
            self.ready.lock().unwrap().push((ready.index, id.clone()));
            if self.fail_ready.contains(&id) {
                return Err("ready failed".into());
            }
            Ok(())
        })
    }
}

fn mixed_registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    let body = Tool::new(
        "mixed",
        "does what it is told",
        object_schema(),
        |args: Value, ctx: ToolContext| async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            if ms > 0 {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                    () = ctx.cancellation().cancelled() => return Err::<Value, BoxError>("stopped".into()),
                }
            }
            match args["kind"].as_str() {
                Some("fail") => Err("told to fail".into()),
                Some("panic") => panic!("told to panic"),
                _ => Ok(json!(ctx.execution().call_id())),
            }
        },
    );
    let options = ToolRegistrationOptions::default().with_concurrency(|a| a.get("par") == Some(&json!(true)));
    registry.register(body, None, options).unwrap().keep();
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            |e: ToolExecution, next: PreExecuteNext| async move {
                if e.arguments()["kind"] == json!("deny") {
                    return Ok(ToolPreDecision::Deny("told to deny".into()));
                }
                next.run().await
            },
        )
        .keep();
    registry
}

#[tokio::test(start_paused = true)]
async fn two_thousand_mixed_calls_each_get_exactly_one_outcome_in_declared_order() {
    let registry = mixed_registry();
    let mut rng = XorShift(0x5eed_1234_abcd_0001);
    let kinds = ["ok", "ok", "ok", "fail", "panic", "deny", "unknown", "invalid"];
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut expected_kind = HashMap::new();
    let mut sink = FlakySink::default();
    for i in 0..2000 {
        let id = format!("c{i:04}");
        let kind = kinds[rng.below(kinds.len() as u64) as usize];
        let parallel = rng.below(4) != 0;
        let ms = rng.below(40);
        let call = match kind {
            "unknown" => ToolCall::new(&id, "ghost", "{}"),
            "invalid" => ToolCall::new(&id, "mixed", "{\"kind\": "),
            _ => ToolCall::new(
                &id,
                "mixed",
                json!({"kind": kind, "par": parallel, "ms": ms}).to_string(),
            ),
        };
        if rng.below(50) == 0 {
            sink.fail_declared.push(id.clone());
        }
        if rng.below(50) == 0 {
            sink.fail_ready.push(id.clone());
        }
        expected_kind.insert(id, kind);
        calls.push(call);
    }
    let ids: Vec<String> = calls.iter().map(|c| c.call_id.clone()).collect();
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        // Midway through the batch, in virtual time.
        tokio::time::sleep(Duration::from_millis(6_000)).await;
        canceller.cancel();
    });
    let view = registry.seal(None);
    let batch = registry
        .execute_batch(calls, &view, NonZeroUsize::new(16).unwrap(), Some(&sink), &cancel)
        .await;

    // One outcome per call, in declared order.
    let got: Vec<&str> = batch.outcomes.iter().map(|o| o.call_id()).collect();
    assert_eq!(got, ids.iter().map(String::as_str).collect::<Vec<_>>());
    // call_declared and outcome_ready exactly once per call, in declared order.
    assert_eq!(*sink.declared.lock().unwrap(), ids);
    let ready = sink.ready.lock().unwrap().clone();
    assert_eq!(ready.len(), 2000);
    for (position, (index, id)) in ready.iter().enumerate() {
        assert_eq!((*index, id), (position, &ids[position]));
    }
    // Sink failures are all reported, none swallowed.
    let declared_errors = batch
        .sink_errors
        .iter()
        .filter(|e| e.stage == SinkStage::CallDeclared)
        .count();
    let ready_errors = batch
        .sink_errors
        .iter()
        .filter(|e| e.stage == SinkStage::OutcomeReady)
        .count();
    assert_eq!(
        (declared_errors, ready_errors),
        (sink.fail_declared.len(), sink.fail_ready.len())
    );

    // Each code is the one its kind allows; cancellation shows up as one of the two abort codes.
    let mut seen_cancelled = 0;
    let mut seen_finished = 0;
    for outcome in &batch.outcomes {
        let id = outcome.call_id();
        let code = code(outcome);
        if sink.fail_declared.iter().any(|f| f == id) {
            assert_eq!(code, Some("TOOL_ERROR"), "{id}");
            continue;
        }
        if matches!(code, Some("ABORTED") | Some("ABORTED_BEFORE_DISPATCH")) {
            seen_cancelled += 1;
            continue;
        }
        seen_finished += 1;
        let expected = match expected_kind[id] {
            "ok" => None,
            "fail" | "panic" => Some("TOOL_ERROR"),
            "deny" => Some("DENIED"),
            "unknown" => Some("UNKNOWN_TOOL"),
            "invalid" => Some("INVALID_ARGS"),
            other => unreachable!("{other}"),
        };
        assert_eq!(code, expected, "{id}");
    }
    assert!(
        seen_cancelled > 0 && seen_finished > 0,
        "cancelled {seen_cancelled}, finished {seen_finished}"
    );
    // Once cancelled, nothing in a later group is dispatched: from the first
    // barrier after the first abort on, every call ended before dispatch
    // (or failed its declaration).
    let first_abort = batch
        .outcomes
        .iter()
        .position(|o| code(o) == Some("ABORTED_BEFORE_DISPATCH"))
        .unwrap();
    let next_group = (first_abort + 1..batch.modes.len())
        .find(|&j| batch.modes[j] == tether_tools::ToolExecutionMode::Exclusive)
        .unwrap_or(batch.modes.len());
    for outcome in &batch.outcomes[next_group..] {
        let declare_failed = sink.fail_declared.iter().any(|f| f == outcome.call_id());
        let expected = if declare_failed {
            "TOOL_ERROR"
        } else {
            "ABORTED_BEFORE_DISPATCH"
        };
        assert_eq!(
            code(outcome),
            Some(expected),
            "{} was dispatched after the cancel",
            outcome.call_id()
        );
    }
}
