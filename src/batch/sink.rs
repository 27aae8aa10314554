//! What a batch tells its sink (SPEC §10): each call before anything
//! happens to it, each final outcome in declared order.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;

use crate::call::ToolCall;
use crate::callback;
use crate::error::BoxError;
use crate::execution::{ExecutionId, ToolExecution};
use crate::outcome::ToolExecutionOutcome;
use crate::scope::AgentPipelineScope;
use crate::view::ToolExecutionMode;

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
pub(super) async fn run_sink<'a>(make: impl FnOnce() -> SinkFuture<'a>) -> Result<(), BoxError> {
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
