//! What the batch tests share: a tool that records when each body ran
//! (tokio's paused clock makes the instants exact) and a sink that records
//! what it is told.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tether_tools::{
    BatchOutcome, BoxError, DeclaredCall, ReadyOutcome, SinkFuture, SinkStage, StartedCall, Tool, ToolBatchSink,
    ToolCall, ToolContext, ToolRegistrationOptions, ToolRegistry,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::common::call;

#[derive(Clone, Debug)]
pub struct Span {
    pub id: String,
    pub start: Instant,
    pub end: Instant,
}

#[derive(Clone, Default)]
pub struct Clock {
    pub spans: Arc<Mutex<Vec<Span>>>,
    pub running: Arc<AtomicUsize>,
    pub peak: Arc<AtomicUsize>,
}

impl Clock {
    pub fn span(&self, id: &str) -> Span {
        self.spans.lock().unwrap().iter().find(|s| s.id == id).cloned().unwrap()
    }

    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    pub fn count(&self) -> usize {
        self.spans.lock().unwrap().len()
    }
}

/// A tool `work` that sleeps `ms` and records its span; parallel when `par` is true.
pub fn timed_registry(clock: &Clock) -> ToolRegistry {
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

pub fn work(id: &str, ms: u64, parallel: bool) -> ToolCall {
    call(id, "work", &json!({"ms": ms, "par": parallel}).to_string())
}

/// `calls` through the global view, four at a time, reported to `sink`.
pub async fn through_sink(registry: &ToolRegistry, calls: Vec<ToolCall>, sink: &dyn ToolBatchSink) -> BatchOutcome {
    through_sink_with(registry, calls, sink, 4, &CancellationToken::new()).await
}

/// `calls` through `sink`, at most `width` bodies at once, cancelled by `cancel`.
pub async fn through_sink_with(
    registry: &ToolRegistry,
    calls: Vec<ToolCall>,
    sink: &dyn ToolBatchSink,
    width: usize,
    cancel: &CancellationToken,
) -> BatchOutcome {
    registry
        .execute_batch(calls, &registry.seal(None), cap(width), Some(sink), cancel)
        .await
}

pub fn cap(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

/// A sink that records what it is told, and fails (or panics before
/// returning its future) where asked.
#[derive(Default)]
pub struct RecordingSink {
    pub events: Mutex<Vec<String>>,
    pub fail_declared: Vec<String>,
    pub fail_ready: Vec<String>,
    pub panic_declared: Vec<String>,
    pub panic_ready: Vec<String>,
    pub panic_started: Vec<String>,
    /// Answer `call_declared` at once (`SinkFuture::done`), as a sink that
    /// writes synchronously does, instead of with a future.
    pub synchronous: bool,
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
    pub fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }

    /// Where `event` stands among the events (the test fails if it is not there).
    pub fn position(&self, event: &str) -> usize {
        let events = self.events();
        events
            .iter()
            .position(|x| x == event)
            .unwrap_or_else(|| panic!("{event} missing: {events:?}"))
    }
}

/// A caller's token that is cancelled `after` from now (tokio's clock).
pub fn cancelled_after(after: Duration) -> CancellationToken {
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        c.cancel();
    });
    cancel
}

/// `work` calls `a` then `b`, one at a time, through `sink`, whose
/// `outcome_ready` goes wrong for `a`: `a`'s outcome is kept and the one
/// sink error is `a`'s, at that stage.
pub async fn a_then_b_with_a_ready_refused(sink: &RecordingSink) -> BatchOutcome {
    let clock = Clock::default();
    let registry = timed_registry(&clock);
    let batch = through_sink_with(
        &registry,
        vec![work("a", 10, false), work("b", 10, false)],
        sink,
        1,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(batch.outcomes[0].value(), &json!("a"));
    assert_eq!(batch.sink_errors.len(), 1);
    assert_eq!(
        (batch.sink_errors[0].stage, batch.sink_errors[0].call_id.as_str()),
        (SinkStage::OutcomeReady, "a")
    );
    batch
}
