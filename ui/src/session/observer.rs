//! The console watches the engine like any client: a `tools/change`
//! listener, and a batch sink that journals every call and result and
//! reports each call's progress. Sends never block, so
//! the engine never waits for the screen.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use tether_tools::{
    DeclaredCall, ReadyOutcome, Registration, SinkFuture, StartedCall, ToolBatchSink, ToolRegistry, ToolsChangeKind,
};

use crate::session::events::{AppEvent, AppEventSender};
use crate::session::journal::JournalWriter;
use crate::session::progress::BatchProgress;

/// Registers the change listener. Dropping the handles detaches the console.
///
/// A call's stages reach the screen without listeners of their own: the
/// batch sink ([`UiSink`]) reports when a call is declared, when its body
/// starts (`call_started`) and its outcome, and the answerer reports a
/// call waiting for a human. Pre-execute, guards and post-execute are
/// synchronous rules that take microseconds, so reporting them would cost
/// the engine work for states no frame could show. (Before, an execute
/// wrapper around every body reported its start: a layer of boxed future
/// per call, most of what the screen cost the engine.)
pub fn attach(registry: &ToolRegistry, events: &AppEventSender) -> Vec<Registration> {
    let tx = events.clone();
    let changes = registry.on_tools_change(move |event| {
        let verb = match event.kind {
            ToolsChangeKind::Registered => "registered",
            ToolsChangeKind::Disposed => "disposed",
        };
        let scope = event.scope.as_ref().map_or_else(
            || "global".to_owned(),
            |s| s.label().map_or_else(|| format!("scope {}", s.id()), str::to_owned),
        );
        tx.send(AppEvent::ToolsChanged {
            description: format!("tools/change: {} {verb} in {scope}", event.name),
        });
    });
    vec![changes]
}

/// The sink of one batch as the console runs it: the journal first (a call
/// whose record fails does not run), then the screen.
///
/// A body starting and an outcome are written into the call's slot of the
/// batch's [`BatchProgress`], which the screen reads when it draws; the
/// screen is woken by one `Progress` event until it next looks. Calls are
/// declared in order, so the screen needs only how many are declared, and
/// only when something else about the batch changes (a body starts, an
/// outcome comes): every declared call is followed by one or the other, or
/// by a prompt, which shows its own row. So reporting a call costs the
/// engine a store or two, and the screen nothing per call.
pub struct UiSink {
    batch: usize,
    progress: Arc<BatchProgress>,
    events: AppEventSender,
    journal: Option<Arc<JournalWriter>>,
    declared: AtomicUsize,
    told: AtomicUsize,
}

impl UiSink {
    /// The sink of the screen's batch number `batch`, whose `BatchStarted`
    /// carried `progress`.
    pub fn new(
        batch: usize,
        progress: Arc<BatchProgress>,
        events: AppEventSender,
        journal: Option<Arc<JournalWriter>>,
    ) -> Self {
        Self {
            batch,
            progress,
            events,
            journal,
            declared: AtomicUsize::new(0),
            told: AtomicUsize::new(0),
        }
    }

    /// Tells the screen where the journal put this batch, once its last
    /// record is written, so an evicted batch can be read back.
    pub fn journaled(&self, journal: &JournalWriter, batch_id: u64) {
        if let Some(span) = journal.take_span(batch_id) {
            self.events.send(AppEvent::BatchJournaled {
                batch: self.batch,
                span,
            });
        }
    }

    /// Shows an outcome (and the declarations before it) on the screen.
    pub fn report_outcome(&self, ready: &ReadyOutcome<'_>) {
        self.progress.finish(ready.index, ready.outcome.clone(), Instant::now());
        self.wake();
    }

    /// Wakes the screen, unless it was woken already and has not looked;
    /// how many calls are declared goes with the wake. Never per call:
    /// exclusive calls are declared one by one, and a `Declared` sent for
    /// each woke whatever reads the events unpaced (the screen hub, with
    /// `--web` or `--attach`) once a call. A declaration made while the
    /// screen has not looked is told at the next wake; rows that started
    /// or ended read that from the slots, so only a declared row still
    /// waiting shows `queued` a frame longer.
    fn wake(&self) {
        if self.progress.mark() {
            self.tell_declared();
            self.events.send(AppEvent::Progress { batch: self.batch });
        }
    }

    /// Sends how many calls are declared, if the screen does not know yet.
    fn tell_declared(&self) {
        let declared = self.declared.load(Ordering::Acquire);
        if self.told.load(Ordering::Acquire) < declared && self.told.fetch_max(declared, Ordering::AcqRel) < declared {
            self.events.send(AppEvent::Declared {
                batch: self.batch,
                upto: declared,
            });
        }
    }
}

impl ToolBatchSink for UiSink {
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> SinkFuture<'a> {
        // The journal writes synchronously (to a buffered file it flushes),
        // so neither step needs a future of its own.
        if let Some(journal) = &self.journal {
            if let Err(error) = journal.record_call(&call) {
                return SinkFuture::done(Err(error));
            }
        }
        self.progress.declare(call.index, call.execution);
        self.declared.fetch_max(call.index + 1, Ordering::AcqRel);
        SinkFuture::done(Ok(()))
    }

    fn call_started(&self, started: StartedCall<'_>) {
        self.progress.start(started.index, Instant::now());
        self.wake();
    }

    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> SinkFuture<'a> {
        // The screen hears of the outcome even when the journal fails.
        self.report_outcome(&ready);
        if let Some(journal) = &self.journal {
            if let Err(error) = journal.record_result(&ready) {
                return SinkFuture::done(Err(error));
            }
            self.journaled(journal, ready.batch_id);
        }
        SinkFuture::done(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use serde_json::{Value, json};
    use tether_tools::{BoxError, Tool, ToolCall, ToolContext, ToolRegistrationOptions};
    use tokio_util::sync::CancellationToken;

    use super::*;

    /// A batch of exclusive calls (declared one by one) sends the screen a
    /// handful of events, not one a call: whatever reads them unpaced (the
    /// screen hub) would be woken once a call.
    #[tokio::test]
    async fn a_batch_of_exclusive_calls_sends_no_event_per_call() {
        let registry = ToolRegistry::new();
        let tool = Tool::new(
            "noop",
            "",
            json!({"type": "object"}),
            |_: Value, _: ToolContext| async move { Ok::<_, BoxError>(json!(1)) },
        );
        let exclusive = ToolRegistrationOptions::default().with_concurrency(|_| false);
        let _registration = registry
            .register(tool, None, exclusive)
            .unwrap_or_else(|e| panic!("{e}"));
        let calls: Vec<ToolCall> = (0..200).map(|i| ToolCall::new(format!("c{i}"), "noop", "{}")).collect();
        let (events, mut receiver) = AppEventSender::new();
        let sink = UiSink::new(
            0,
            Arc::new(BatchProgress::new(calls.len(), Instant::now())),
            events,
            None,
        );
        let view = registry.seal(None);
        let outcome = registry
            .execute_batch(calls, &view, NonZeroUsize::MIN, Some(&sink), &CancellationToken::new())
            .await;
        assert_eq!(outcome.outcomes.len(), 200);
        // Nobody looked: one wake, and what was declared by then.
        let sent = receiver.try_recv_many();
        assert!(sent.len() <= 2, "{} events for 200 calls", sent.len());
    }
}
