//! Batches (SPEC §10): classification, ordering barriers, bounded overlap,
//! declared-order outcomes and the durable hand-off to a sink.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use futures::future::join_all;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::call::ToolCall;
use crate::execution::{ExecutionId, ToolExecution};
use crate::outcome::{ToolExecutionOutcome, ToolFailureCode};
use crate::pipeline::{end_early, run_call};
use crate::registry::ToolRegistry;
use crate::view::{SealedToolCatalogView, ToolExecutionMode, classify};

mod sink;

use sink::run_sink;
pub use sink::{DeclaredCall, ReadyOutcome, SinkError, SinkFuture, SinkStage, StartedCall, ToolBatchSink};

/// Everything a batch produced.
#[derive(Clone, Debug)]
pub struct BatchOutcome {
    /// The batch id the sink saw.
    pub batch_id: u64,
    /// One outcome per call, in declared order.
    pub outcomes: Vec<ToolExecutionOutcome>,
    /// How each call was classified, in declared order.
    pub modes: Vec<ToolExecutionMode>,
    /// Sink failures, in the order they happened.
    pub sink_errors: Vec<SinkError>,
}

impl ToolRegistry {
    /// Runs a batch (SPEC §10). Exclusive calls are ordering barriers;
    /// consecutive parallel calls run together with at most `max_parallelism`
    /// bodies overlapping. Returns one outcome per call in declared order,
    /// always, also when the batch is cancelled.
    pub async fn execute_batch(
        &self,
        calls: Vec<ToolCall>,
        view: &SealedToolCatalogView,
        max_parallelism: NonZeroUsize,
        sink: Option<&dyn ToolBatchSink>,
        cancellation: &CancellationToken,
    ) -> BatchOutcome {
        let batch_id = self.next_id();
        let first_execution = ExecutionId::reserve(calls.len());
        let modes: Vec<ToolExecutionMode> = calls.iter().map(|c| classify(c, view)).collect();
        let run = Runner {
            registry: self,
            calls: &calls,
            modes: &modes,
            view,
            sink,
            cancellation,
            batch_id,
            first_execution,
            gate: None,
        };
        if calls.len() == 1 {
            // One call overlaps nothing and waits for nothing: no slots to
            // share, no outcomes to put in order (most agent batches, and
            // every call a gateway forwards).
            let mut sink_errors = Vec::new();
            let declared = run.declare(0, &mut sink_errors).await;
            let outcome = run.run_one(0, declared, false).await;
            if let Some(error) = hand_over(sink, batch_id, 0, &outcome).await {
                sink_errors.push(error);
            }
            return BatchOutcome {
                batch_id,
                outcomes: vec![outcome],
                modes,
                sink_errors,
            };
        }
        let gate = Semaphore::new(max_parallelism.get());
        let (ready_tx, ready_rx) = mpsc::unbounded_channel::<(usize, ToolExecutionOutcome)>();
        let run = Runner {
            gate: Some(&gate),
            ..run
        };
        let ((), (outcomes, mut ready_errors), declare_errors) = {
            let mut declare_errors = Vec::new();
            let (a, b) = tokio::join!(
                run.drive(ready_tx, &mut declare_errors),
                emit_in_order(ready_rx, calls.len(), sink, batch_id)
            );
            (a, b, declare_errors)
        };
        let mut sink_errors = declare_errors;
        sink_errors.append(&mut ready_errors);
        BatchOutcome {
            batch_id,
            outcomes,
            modes,
            sink_errors,
        }
    }
}

struct Runner<'r> {
    registry: &'r ToolRegistry,
    calls: &'r [ToolCall],
    modes: &'r [ToolExecutionMode],
    view: &'r SealedToolCatalogView,
    sink: Option<&'r dyn ToolBatchSink>,
    cancellation: &'r CancellationToken,
    batch_id: u64,
    first_execution: ExecutionId,
    /// The batch's parallel slots; none for a batch of one call.
    gate: Option<&'r Semaphore>,
}

impl Runner<'_> {
    /// Walks the batch group by group: an exclusive call alone, or a run of
    /// consecutive parallel calls together.
    async fn drive(&self, ready: mpsc::UnboundedSender<(usize, ToolExecutionOutcome)>, errors: &mut Vec<SinkError>) {
        let mut start = 0;
        while start < self.calls.len() {
            let end = if self.modes[start] == ToolExecutionMode::Exclusive {
                start + 1
            } else {
                self.modes[start..]
                    .iter()
                    .position(|m| *m == ToolExecutionMode::Exclusive)
                    .map_or(self.calls.len(), |p| start + p)
            };
            let mut declared = Vec::with_capacity(end - start);
            for index in start..end {
                declared.push(self.declare(index, errors).await);
            }
            let parallel = end - start > 1 || self.modes[start] == ToolExecutionMode::Parallel;
            let runs = (start..end).zip(declared).map(|(index, declared)| {
                let ready = ready.clone();
                async move {
                    let outcome = self.run_one(index, declared, parallel).await;
                    // The receiver lives until every sender is gone.
                    let _ = ready.send((index, outcome));
                }
            });
            join_all(runs).await;
            start = end;
        }
    }

    async fn declare(&self, index: usize, errors: &mut Vec<SinkError>) -> Result<(), String> {
        let Some(sink) = self.sink else { return Ok(()) };
        let call = &self.calls[index];
        let declared = DeclaredCall {
            batch_id: self.batch_id,
            index,
            total: self.calls.len(),
            call,
            execution: self.first_execution.nth(index),
            mode: self.modes[index],
            scope: self.view.scope(),
        };
        run_sink(|| sink.call_declared(declared)).await.map_err(|error| {
            let message = error.to_string();
            tracing::error!(call_id = %call.call_id, %message, "sink call_declared failed; the call will not run");
            errors.push(SinkError {
                index,
                call_id: call.call_id.clone(),
                stage: SinkStage::CallDeclared,
                message: message.clone(),
            });
            message
        })
    }

    async fn run_one(&self, index: usize, declared: Result<(), String>, parallel: bool) -> ToolExecutionOutcome {
        let call = &self.calls[index];
        let id = self.first_execution.nth(index);
        match declared {
            Ok(()) => {
                let gate = self.gate.filter(|_| parallel);
                let batch_id = self.batch_id;
                let started = self.sink.map(|sink| {
                    move |execution: &ToolExecution| {
                        sink.call_started(StartedCall {
                            batch_id,
                            index,
                            execution,
                        });
                    }
                });
                let started = started.as_ref().map(|f| f as &(dyn Fn(&ToolExecution) + Sync));
                run_call(
                    self.registry.host(),
                    id,
                    call,
                    self.view,
                    self.cancellation,
                    gate,
                    started,
                )
                .await
            }
            Err(message) => {
                end_early(
                    self.registry.host(),
                    id,
                    call,
                    self.view,
                    self.cancellation,
                    ToolFailureCode::ToolError,
                    format!("the call could not be recorded, so it was not run: {message}"),
                )
                .await
            }
        }
    }
}

/// Hands outcomes to the sink in declared order as soon as each and all
/// earlier ones are ready, and collects them.
async fn emit_in_order(
    mut ready: mpsc::UnboundedReceiver<(usize, ToolExecutionOutcome)>,
    total: usize,
    sink: Option<&dyn ToolBatchSink>,
    batch_id: u64,
) -> (Vec<ToolExecutionOutcome>, Vec<SinkError>) {
    let mut waiting = BTreeMap::new();
    let mut outcomes = Vec::with_capacity(total);
    let mut errors = Vec::new();
    while let Some((index, outcome)) = ready.recv().await {
        waiting.insert(index, outcome);
        while let Some(outcome) = waiting.remove(&outcomes.len()) {
            if let Some(error) = hand_over(sink, batch_id, outcomes.len(), &outcome).await {
                errors.push(error);
            }
            outcomes.push(outcome);
        }
    }
    (outcomes, errors)
}

/// Hands one final outcome to the sink; what it reports when it fails.
async fn hand_over(
    sink: Option<&dyn ToolBatchSink>,
    batch_id: u64,
    index: usize,
    outcome: &ToolExecutionOutcome,
) -> Option<SinkError> {
    let sink = sink?;
    let ready = ReadyOutcome {
        batch_id,
        index,
        outcome,
    };
    let error = run_sink(|| sink.outcome_ready(ready)).await.err()?;
    tracing::error!(call_id = outcome.call_id(), %error, "sink outcome_ready failed; outcome kept");
    Some(SinkError {
        index,
        call_id: outcome.call_id().to_owned(),
        stage: SinkStage::OutcomeReady,
        message: error.to_string(),
    })
}
