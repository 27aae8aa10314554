//! The execute waterfall around the tool body (`tools/execute`, SPEC §7 step 6).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use super::{Listeners, next_applicable};
use crate::callback;
use crate::error::BoxError;
use crate::execution::ToolExecution;
use crate::tool::{ToolBody, ToolContext};

/// The only mutable state of the execute stage: the dispatch cancellation
/// token. A wrapper may replace it before calling `next`, and cannot touch it
/// afterwards, because [`ExecuteNext::run`] takes the dispatch by value.
#[derive(Debug)]
pub struct ToolDispatch {
    cancellation: CancellationToken,
}

impl ToolDispatch {
    pub(crate) fn new(cancellation: CancellationToken) -> Self {
        Self { cancellation }
    }

    /// The token the body will get.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// The same dispatch with another token. The caller's token still cancels
    /// the body whatever a wrapper puts here: replacing the token can only add
    /// reasons to stop, never remove one.
    #[must_use]
    pub fn with_cancellation(self, cancellation: CancellationToken) -> Self {
        Self { cancellation }
    }
}

/// Why the execute stage produced no value.
#[derive(Debug, Error)]
pub enum ExecuteError {
    /// The dispatch token fired while the body ran (`ABORTED`).
    #[error("{reason}")]
    Aborted {
        /// What cancelled it, for the model.
        reason: String,
    },
    /// The body or a wrapper failed (`TOOL_ERROR`).
    #[error("{0}")]
    Failed(BoxError),
}

impl ExecuteError {
    /// A failure with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into().into())
    }
}

/// An execute wrapper: it gets the dispatch by value and hands it on to
/// `next.run(dispatch)`; not calling `next` short-circuits the later wrappers
/// and the body.
///
/// Implemented for every `Fn(ToolExecution, ToolDispatch, ExecuteNext) -> impl Future`.
pub trait ExecuteListener: Send + Sync + 'static {
    /// Wraps the rest of the stage.
    fn on_execute(
        &self,
        execution: ToolExecution,
        dispatch: ToolDispatch,
        next: ExecuteNext,
    ) -> BoxFuture<'static, Result<Value, ExecuteError>>;
}

impl<F, Fut> ExecuteListener for F
where
    F: Fn(ToolExecution, ToolDispatch, ExecuteNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ExecuteError>> + Send + 'static,
{
    fn on_execute(
        &self,
        execution: ToolExecution,
        dispatch: ToolDispatch,
        next: ExecuteNext,
    ) -> BoxFuture<'static, Result<Value, ExecuteError>> {
        Box::pin(self(execution, dispatch, next))
    }
}

/// The rest of the execute waterfall, ending in the tool body.
pub struct ExecuteNext {
    pub(crate) listeners: Arc<Listeners>,
    pub(crate) index: usize,
    pub(crate) execution: ToolExecution,
    pub(crate) body: Arc<dyn ToolBody>,
    pub(crate) arguments: Value,
    pub(crate) refusal: Refusal,
}

/// Set when the body was not started because its dispatch token (or the
/// caller's) had already fired. Shared along one call's chain so the pipeline
/// knows, whatever the wrappers made of the refusal, that no body ran.
#[derive(Clone, Default)]
pub(crate) struct Refusal(Arc<AtomicBool>);

impl Refusal {
    pub(crate) fn happened(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    fn record(&self) {
        self.0.store(true, Ordering::Release);
    }
}

impl ExecuteNext {
    /// Runs the later wrappers, then the body with `dispatch`'s token. The
    /// body does not start when that token (or the caller's) has already
    /// fired: the call then ends `ABORTED_BEFORE_DISPATCH`.
    ///
    /// # Errors
    /// [`ExecuteError::Aborted`] when the token (or the caller's) fires first;
    /// [`ExecuteError::Failed`] when the body or a wrapper fails or panics.
    pub async fn run(self, dispatch: ToolDispatch) -> Result<Value, ExecuteError> {
        let found = next_applicable(&self.listeners.execute, self.index, self.execution.scope())
            .map(|(i, l)| (i, Arc::clone(l)));
        let Some((index, listener)) = found else {
            return run_body(self.execution, self.body, self.arguments, dispatch, &self.refusal).await;
        };
        let next = ExecuteNext {
            listeners: Arc::clone(&self.listeners),
            index: index + 1,
            execution: self.execution.clone(),
            body: self.body,
            arguments: self.arguments,
            refusal: self.refusal,
        };
        callback::run(|| listener.on_execute(self.execution, dispatch, next))
            .await
            .unwrap_or_else(|panicked| Err(ExecuteError::failed(format!("execute wrapper panicked: {panicked}"))))
    }
}

async fn run_body(
    execution: ToolExecution,
    body: Arc<dyn ToolBody>,
    arguments: Value,
    dispatch: ToolDispatch,
    refusal: &Refusal,
) -> Result<Value, ExecuteError> {
    let caller = execution.cancellation().clone();
    let token = dispatch.cancellation;
    // The last moment before the body, whatever the wrappers awaited before:
    // nothing yields between this check and the call that starts the body.
    if token.is_cancelled() || caller.is_cancelled() {
        refusal.record();
        return Err(ExecuteError::Aborted {
            reason: "cancelled before the tool was dispatched".to_owned(),
        });
    }
    let context = ToolContext {
        execution,
        cancellation: token.clone(),
    };
    let panicked = |panicked| ExecuteError::failed(format!("tool panicked: {panicked}"));
    let work = callback::finish(callback::run_sync(|| body.invoke(arguments, context)).map_err(panicked)?);
    tokio::select! {
        biased;
        result = work => match result {
            Ok(Ok(value)) => Ok(value),
            // A body that fails after its token fired most likely failed because of it.
            Ok(Err(_)) | Err(_) if token.is_cancelled() || caller.is_cancelled() => Err(aborted()),
            Ok(Err(error)) => Err(ExecuteError::Failed(error)),
            Err(error) => Err(panicked(error)),
        },
        () = token.cancelled() => Err(aborted()),
        () = caller.cancelled() => Err(aborted()),
    }
}

fn aborted() -> ExecuteError {
    ExecuteError::Aborted {
        reason: "cancelled while running".to_owned(),
    }
}

/// An execute wrapper that gives the body at most `limit`: it replaces the
/// dispatch token with a child that also fires on the deadline, and reports
/// an abort caused by the deadline as "timed out after …".
pub fn timeout_wrapper(limit: Duration) -> impl ExecuteListener {
    move |_execution: ToolExecution, dispatch: ToolDispatch, next: ExecuteNext| async move {
        let token = dispatch.cancellation().child_token();
        let run = next.run(dispatch.with_cancellation(token.clone()));
        tokio::pin!(run);
        tokio::select! {
            result = &mut run => result,
            () = tokio::time::sleep(limit) => {
                token.cancel();
                match run.await {
                    Err(ExecuteError::Aborted { .. }) => Err(ExecuteError::Aborted {
                        reason: format!("timed out after {} ms", limit.as_millis()),
                    }),
                    other => other,
                }
            }
        }
    }
}
