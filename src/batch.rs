//! Batches (SPEC §10): classification, ordering barriers, bounded overlap,
//! declared-order outcomes and the durable hand-off to a sink.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, join_all};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::call::ToolCall;
use crate::callback;
use crate::error::BoxError;
use crate::execution::{ExecutionId, ToolExecution};
use crate::outcome::{ToolExecutionOutcome, ToolFailureCode};
use crate::pipeline::{end_early, run_call};
use crate::registry::ToolRegistry;
use crate::scope::AgentPipelineScope;
use crate::view::{SealedToolCatalogView, ToolExecutionMode, classify};

/// One call of a batch as the sink is told of it, before anything happens to it.
#[derive(Clone, Copy, Debug)]
pub struct DeclaredCall<'a> {
    /// A registry-unique id of the batch.
    pub batch_id: u64,
    /// The call's position in the batch.
    pub index: usize,
    /// How many calls the batch holds.
    pub total: usize,
    /// The call as the model declared it.
    pub call: &'a ToolCall,
    /// The execution it becomes ([`ToolExecution::id`], and its outcome's
    /// [`ToolExecutionOutcome::execution_id`]): unique, also when calls share
    /// a call id.
    pub execution: ExecutionId,
    /// How it was classified when the batch started.
    pub mode: ToolExecutionMode,
    /// The scope of the view the batch runs against.
    pub scope: Option<&'a AgentPipelineScope>,
}

/// One final outcome as the sink receives it, in declared order.
#[derive(Clone, Copy, Debug)]
pub struct ReadyOutcome<'a> {
    /// The batch id, as in [`DeclaredCall::batch_id`].
    pub batch_id: u64,
    /// The call's position in the batch.
    pub index: usize,
    /// The outcome.
    pub outcome: &'a ToolExecutionOutcome,
}

/// A call whose execute stage is beginning, as [`ToolBatchSink::call_started`]
/// is told of it.
#[derive(Clone, Copy, Debug)]
pub struct StartedCall<'a> {
    /// The batch id, as in [`DeclaredCall::batch_id`].
    pub batch_id: u64,
    /// The call's position in the batch.
    pub index: usize,
    /// The prepared execution about to enter the execute wrappers.
    pub execution: &'a ToolExecution,
}

/// What a sink callback returns: its result when it finished without
/// waiting (a write to a buffered file, a message to a screen), or a future
/// for the engine to await. The engine awaits both the same way; a finished
/// one costs it no allocation and no future of its own.
pub enum SinkFuture<'a> {
    /// Finished already (taken when polled).
    Done(Option<Result<(), BoxError>>),
    /// Still to be awaited.
    Pending(BoxFuture<'a, Result<(), BoxError>>),
}

impl<'a> SinkFuture<'a> {
    /// A callback that finished without waiting.
    pub fn done(result: Result<(), BoxError>) -> Self {
        Self::Done(Some(result))
    }

    /// A callback that has to wait.
    pub fn pending(future: impl Future<Output = Result<(), BoxError>> + Send + 'a) -> Self {
        Self::Pending(Box::pin(future))
    }
}

impl<'a> From<BoxFuture<'a, Result<(), BoxError>>> for SinkFuture<'a> {
    fn from(future: BoxFuture<'a, Result<(), BoxError>>) -> Self {
        Self::Pending(future)
    }
}

impl Future for SinkFuture<'_> {
    type Output = Result<(), BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            // Polled again after it finished: nothing more to report.
            Self::Done(result) => Poll::Ready(result.take().unwrap_or(Ok(()))),
            Self::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

impl fmt::Debug for SinkFuture<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Done(result) => f.debug_tuple("Done").field(result).finish(),
            Self::Pending(_) => f.write_str("Pending"),
        }
    }
}

/// Runs a sink callback, catching a panic while it makes its future or while
/// that future runs; a finished one is not wrapped again.
async fn run_sink<'a>(make: impl FnOnce() -> SinkFuture<'a>) -> Result<(), BoxError> {
    match callback::run_sync(make) {
        Ok(SinkFuture::Done(result)) => result.unwrap_or(Ok(())),
        Ok(pending) => callback::finish(pending)
            .await
            .unwrap_or_else(|panicked| Err(format!("panicked: {panicked}").into())),
        Err(panicked) => Err(format!("panicked: {panicked}").into()),
    }
}

/// The durable hand-off of a batch (SPEC §10): the `tool/call` and
/// `tool/result` events of a session log.
pub trait ToolBatchSink: Send + Sync {
    /// Awaited for every call, in declared order, before anything else happens
    /// to it. An error means the call's body never runs: it fails `TOOL_ERROR`.
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> SinkFuture<'a>;

    /// Called exactly once per call, in declared order, with its final outcome.
    /// An error is reported in [`BatchOutcome::sink_errors`]; the outcome is kept.
    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> SinkFuture<'a>;

    /// Progress, not record: called when a call's execute stage begins —
    /// after its approval, guards and argument check, once it holds its
    /// parallel slot — right before the execute wrappers and the body. Not
    /// called for a call that ends before that. Synchronous and not awaited,
    /// so a screen can show which calls are running for the cost of a plain
    /// function call, without an execute wrapper of its own around every
    /// body. A panic is logged and the call goes on. Default: nothing.
    fn call_started(&self, started: StartedCall<'_>) {
        let _ = started;
    }
}

/// Which sink callback failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SinkStage {
    /// `call_declared` (the call then failed `TOOL_ERROR`).
    CallDeclared,
    /// `outcome_ready` (the in-memory outcome is kept).
    OutcomeReady,
}

/// A sink failure, reported rather than swallowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkError {
    /// The call's position in the batch.
    pub index: usize,
    /// The call's id.
    pub call_id: String,
    /// Which callback failed.
    pub stage: SinkStage,
    /// What it said.
    pub message: String,
}

impl fmt::Display for SinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stage = match self.stage {
            SinkStage::CallDeclared => "call_declared",
            SinkStage::OutcomeReady => "outcome_ready",
        };
        write!(
            f,
            "sink {stage} failed for call {:?} (#{}): {}",
            self.call_id, self.index, self.message
        )
    }
}

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
        let gate = Semaphore::new(max_parallelism.get());
        let (ready_tx, ready_rx) = mpsc::unbounded_channel::<(usize, ToolExecutionOutcome)>();
        let run = Runner {
            registry: self,
            calls: &calls,
            modes: &modes,
            view,
            sink,
            cancellation,
            batch_id,
            first_execution,
            gate: &gate,
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
    gate: &'r Semaphore,
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
                let gate = parallel.then_some(self.gate);
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
            let index = outcomes.len();
            if let Some(sink) = sink {
                let ready = ReadyOutcome {
                    batch_id,
                    index,
                    outcome: &outcome,
                };
                if let Err(error) = run_sink(|| sink.outcome_ready(ready)).await {
                    tracing::error!(call_id = outcome.call_id(), %error, "sink outcome_ready failed; outcome kept");
                    errors.push(SinkError {
                        index,
                        call_id: outcome.call_id().to_owned(),
                        stage: SinkStage::OutcomeReady,
                        message: error.to_string(),
                    });
                }
            }
            outcomes.push(outcome);
        }
    }
    (outcomes, errors)
}
