//! The console watches the engine like any client: listeners that report
//! each call's stage, a `tools/change` listener, and a batch sink that
//! journals every call and result and reports them. Sends never block, so
//! the engine never waits for the screen.

use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use tether_tools::{
    BoxError, DeclaredCall, ExecuteNext, ListenerOrder, ReadyOutcome, Registration, ToolBatchSink, ToolDispatch,
    ToolExecution, ToolRegistry, ToolsChangeKind,
};

use crate::session::events::{AppEvent, AppEventSender, Stage};
use crate::session::journal::JournalWriter;
use crate::session::provenance::DecisionLog;

/// Registers the stage listeners (first in every stage) and the change
/// listener. Dropping the handles detaches the console.
pub fn attach(registry: &ToolRegistry, events: &AppEventSender) -> Vec<Registration> {
    let stage = |events: &AppEventSender, e: &ToolExecution, stage: Stage| {
        events.send(AppEvent::Stage {
            execution: e.clone(),
            stage,
            at: Instant::now(),
        });
    };
    // Stages are reported where a call can stay a while: waiting for a
    // human (the answerer reports it) and running its body. Pre-execute,
    // guards and post-execute are synchronous rules that take microseconds,
    // so a listener on each, on every call, would cost the engine a send
    // per stage for states no frame could show: a row goes from declared to
    // awaiting approval or running, then to its outcome.
    //
    // The body's start is reported on the way in, and nothing on the way
    // out: post-execute takes microseconds and the outcome follows at once,
    // so a row goes from running to its outcome. Not wrapping the rest of
    // the stage in a future of our own keeps the cost per call to one send.
    // Guards take microseconds too (the answerer reports what follows a
    // human's answer).
    let tx = events.clone();
    let execute = registry.register_execute(
        None,
        ListenerOrder::Prepend,
        move |e: ToolExecution, d: ToolDispatch, next: ExecuteNext| {
            stage(&tx, &e, Stage::Running);
            next.run(d)
        },
    );
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
    vec![execute, changes]
}

/// A decision log whose every entry also goes to the screen, so the detail
/// pane's trail grows live.
pub fn live_decision_log(events: &AppEventSender) -> DecisionLog {
    let events = events.clone();
    DecisionLog::observed(move |key, entry| {
        events.send(AppEvent::Trail {
            key: key.clone(),
            entry: entry.clone(),
        });
    })
}

/// The sink of one batch as the console runs it: the journal first (a call
/// whose record fails does not run), then the screen.
pub struct UiSink {
    pub batch: usize,
    pub events: AppEventSender,
    pub journal: Option<Arc<JournalWriter>>,
}

impl UiSink {
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
}

impl ToolBatchSink for UiSink {
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(async move {
            if let Some(journal) = &self.journal {
                journal.call_declared(call).await?;
            }
            self.events.send(AppEvent::Declared {
                batch: self.batch,
                index: call.index,
            });
            Ok(())
        })
    }

    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(async move {
            // The screen hears of the outcome even when the journal fails.
            self.events.send(AppEvent::Outcome {
                batch: self.batch,
                index: ready.index,
                outcome: ready.outcome.clone(),
                at: Instant::now(),
            });
            if let Some(journal) = &self.journal {
                journal.outcome_ready(ready).await?;
                self.journaled(journal, ready.batch_id);
            }
            Ok(())
        })
    }
}
