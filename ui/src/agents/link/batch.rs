//! `batch/execute` for an agent: the batch through the pipeline, with every
//! call and result told to the agent, the journal and the screen.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Value, json};
use tether_tools::{
    BatchOutcome, DeclaredCall, ReadyOutcome, SealedToolCatalogView, SinkFuture, StartedCall, ToolBatchSink, ToolCall,
};
use tokio_util::sync::CancellationToken;

use super::conn::{Conn, Reply, lock};
use super::protocol::{self, ExecuteBatch};
use super::state::Link;
use crate::session::events::{AppEvent, CallList};
use crate::session::observer::UiSink;
use crate::session::progress::BatchProgress;
use crate::session::provenance::{approvals_needed, decided_by};

/// Tells the agent, the journal and the screen about every call and result.
struct LinkSink<'a> {
    /// The agent to notify; hooks have no one listening.
    conn: Option<&'a Conn>,
    link: &'a Link,
    batch_id: &'a str,
    ui: Option<UiSink>,
    early: Option<super::EarlyOutcome<'a>>,
}

// Every step here finishes without waiting (the journal writes to a
// buffered file it flushes, the agent's frames go into its outbox, the screen
// only queues), so both callbacks answer `SinkFuture::done`: no future per
// call for the engine to box and await.
impl ToolBatchSink for LinkSink<'_> {
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> SinkFuture<'a> {
        if let Some(journal) = &self.link.journal {
            if let Err(error) = journal.record_call(&call) {
                return SinkFuture::done(Err(error));
            }
        }
        if let Some(conn) = self.conn {
            conn.write(|out| {
                protocol::call_notification(
                    out,
                    self.batch_id,
                    call.index,
                    &call.call.call_id,
                    &call.call.name,
                    call.mode.as_str(),
                );
            });
        }
        match &self.ui {
            Some(ui) => ui.call_declared(call),
            None => SinkFuture::done(Ok(())),
        }
    }

    fn call_started(&self, started: StartedCall<'_>) {
        if let Some(ui) = &self.ui {
            ui.call_started(started);
        }
    }

    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> SinkFuture<'a> {
        // The agent and the screen hear of the outcome even when the
        // journal fails.
        if let Some(conn) = self.conn {
            conn.write(|out| protocol::result_notification(out, self.batch_id, ready.index, ready.outcome));
        }
        let recorded = match &self.link.journal {
            Some(journal) => journal.record_result(&ready),
            None => Ok(()),
        };
        // Only once recorded: an agent never acts on a result the journal
        // does not hold. Before the screen is told: the call's answer waits
        // for the record, not for the screen's copy of the outcome.
        if let (Ok(()), Some(early)) = (&recorded, self.early) {
            early(ready.outcome);
        }
        if let Some(ui) = &self.ui {
            ui.report_outcome(&ready);
            if let (Ok(()), Some(journal)) = (&recorded, &self.link.journal) {
                ui.journaled(journal, ready.batch_id);
            }
        }
        SinkFuture::done(recorded)
    }
}

/// Runs an agent's batch and writes its response (or its error) to `id`.
pub(super) async fn execute_batch(link: &Link, conn: &Conn, id: &Value, params: ExecuteBatch) {
    match run_for_agent(link, conn, params).await {
        Ok(response) => conn.write(|out| response(out, id)),
        Err((code, message)) => conn.send(protocol::error(id, code, message)),
    }
}

/// The batch through the pipeline; its response is written straight from
/// the outcomes (no JSON tree: a remote call's response is most of the
/// link's own serialization work).
async fn run_for_agent(link: &Link, conn: &Conn, params: ExecuteBatch) -> Reply<impl FnOnce(&mut Vec<u8>, &Value)> {
    let (batch_id, result, decided) = run_batch(link, conn, params, None).await?;
    Ok(move |out: &mut Vec<u8>, id: &Value| {
        let outcomes = result.outcomes.iter().zip(decided.iter().map(String::as_str));
        protocol::batch_response(out, id, &batch_id, outcomes);
    })
}

/// An agent's batch through the pipeline: its id, its outcomes and what
/// decided each; `early` told each outcome once the journal holds it.
pub(super) async fn run_batch(
    link: &Link,
    conn: &Conn,
    params: ExecuteBatch,
    early: Option<super::EarlyOutcome<'_>>,
) -> Reply<(String, BatchOutcome, Vec<String>)> {
    let scope = conn.scope_named(params.scope.as_deref())?;
    let _ids = link
        .in_flight
        .claim(scope.id(), params.calls.iter().map(|c| c.id.as_str()))
        .map_err(|why| (protocol::INVALID_PARAMS, why))?;
    let batch_id = params
        .batch_id
        .unwrap_or_else(|| format!("batch-{}", link.next_batch_id.fetch_add(1, Ordering::Relaxed)));
    let token = conn.cancel.child_token();
    lock(&conn.batches).insert(batch_id.clone(), token.clone());
    let (session_cwd, notifications) = lock(&conn.session)
        .as_ref()
        .map_or((None, true), |s| (s.cwd.clone(), s.notifications));
    let cwd = params.cwd.or(session_cwd);
    let calls: Vec<ToolCall> = params
        .calls
        .into_iter()
        .map(|c| {
            let mut call = ToolCall::new(c.id, c.name, c.arguments);
            call.invocation_context = cwd.as_ref().map(|cwd| serde_json::json!({ "cwd": cwd }));
            if let Some(kind) = c.agent_type.filter(|k| !k.is_empty()) {
                let subagent = crate::subagent::Subagent { kind, id: c.agent_id };
                subagent.add_to(&mut call.invocation_context);
            }
            call
        })
        .collect();
    let view = conn.view(&link.registry, &link.tools_changed, &scope);
    let parallelism = params
        .max_parallelism
        .and_then(NonZeroUsize::new)
        .unwrap_or(NonZeroUsize::MIN.saturating_add(3));
    let started = Instant::now();
    let label = || format!("{} · {batch_id}", scope.label().unwrap_or("agent"));
    let notified = notifications.then_some(conn);
    let reported = Reported {
        conn: notified,
        batch_id: &batch_id,
        cancel: &token,
        early,
    };
    let (result, decided) = run_reported(link, &view, calls, parallelism, label, reported).await;
    let decided: Vec<String> = decided.into_iter().map(|d| d.by).collect();
    lock(&conn.batches).remove(&batch_id);
    if let Some(printer) = &link.outcomes {
        for (o, decided_by) in result.outcomes.iter().zip(&decided) {
            let _ = printer.send(json!({
                "call_id": o.call_id(), "name": o.name(), "code": o.code().map(|c| c.as_str()),
                "value": o.value(), "is_error": o.is_error(), "decided_by": decided_by,
                "agent": scope.session_id(), "batch_id": batch_id,
            }));
        }
    }
    // Debug, not info: at info every batch of an all-day session would
    // write a line to the console's log.
    tracing::debug!(batch = %batch_id, calls = result.outcomes.len(), elapsed = ?started.elapsed(), "agent batch finished");
    Ok((batch_id, result, decided))
}

/// Who hears of a batch's calls besides the journal and the screen.
pub(super) struct Reported<'a> {
    /// The agent to send `tool/call` and `tool/result` (none for a hook, or
    /// a session that asked for none).
    pub conn: Option<&'a Conn>,
    pub batch_id: &'a str,
    pub cancel: &'a CancellationToken,
    /// Told each outcome once the journal holds it.
    pub early: Option<super::EarlyOutcome<'a>>,
}

/// What decided one call of a batch, read from its trail before the trail
/// goes to the screen.
pub(super) struct Decided {
    /// `decided_by`, as the journal and every printed line name it.
    pub by: String,
    /// How many distinct answerers the rule that asked needs, when more than
    /// one (the two-person rule).
    pub approvals_needed: Option<u8>,
}

/// Runs a batch for an agent or a hook: the screen sees it start, every call
/// and result reaches the journal, the screen and (when there is one) the
/// agent, and the screen sees it end. Returns the outcomes and what decided
/// each; the decision trails are taken from the log and handed to the screen.
pub(super) async fn run_reported(
    link: &Link,
    view: &SealedToolCatalogView,
    calls: Vec<ToolCall>,
    parallelism: NonZeroUsize,
    label: impl FnOnce() -> String,
    reported: Reported<'_>,
) -> (BatchOutcome, Vec<Decided>) {
    let Reported {
        conn,
        batch_id,
        cancel,
        early,
    } = reported;
    let ui_batch = link.next_batch.fetch_add(1, Ordering::Relaxed);
    if let Some(journal) = &link.journal {
        // Every result line says what decided its call (kept after the first).
        journal.record_decisions_from(&link.log);
    }
    let progress = link
        .events
        .as_ref()
        .map(|_| Arc::new(BatchProgress::new(calls.len(), Instant::now())));
    if let Some(events) = &link.events {
        let scope = view.scope();
        events.send(AppEvent::BatchStarted {
            batch: ui_batch,
            label: label(),
            scope: scope.map(|s| s.id()),
            scope_label: scope.and_then(|s| s.label()).unwrap_or("agent").to_owned(),
            // Copied here, classified (which parses each call's arguments)
            // on the console's thread, against the view the batch runs in.
            calls: {
                let (view, calls) = (view.clone(), calls.clone());
                CallList::Later {
                    len: calls.len(),
                    bytes: calls
                        .iter()
                        .map(|c| std::mem::size_of::<ToolCall>() + c.call_id.len() + c.name.len() + c.arguments.len())
                        .sum(),
                    // Called below `len` only.
                    call_at: std::sync::Arc::new(move |i| {
                        let call = calls[i].clone();
                        let mode = view.classify(&call);
                        (call, mode)
                    }),
                }
            },
            progress: progress.clone(),
            max_parallelism: parallelism.get(),
        });
    }
    let sink = LinkSink {
        conn,
        link,
        batch_id,
        ui: link
            .events
            .clone()
            .zip(progress)
            .map(|(events, progress)| UiSink::new(ui_batch, progress, events, None)),
        early,
    };
    let result = link
        .registry
        .execute_batch(calls, view, parallelism, Some(&sink), cancel)
        .await;
    let trails: Vec<_> = result.outcomes.iter().map(|o| link.log.take_of(o)).collect();
    let decided = result
        .outcomes
        .iter()
        .zip(&trails)
        .map(|(o, t)| Decided {
            by: decided_by(o, t),
            approvals_needed: approvals_needed(t),
        })
        .collect();
    link.send(AppEvent::Trails {
        batch: ui_batch,
        trails: trails.into_iter().collect(),
    });
    link.send(AppEvent::BatchFinished { batch: ui_batch });
    (result, decided)
}
