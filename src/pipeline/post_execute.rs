//! The post-execute waterfall (`tools/post-execute`, SPEC §7 step 7).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{Listeners, next_applicable};
use crate::callback;
use crate::error::BoxError;
use crate::execution::ToolExecution;
use crate::outcome::ToolFailure;

/// What post-execute policy decided about a finished result (SPEC §8).
#[derive(Clone, Debug, PartialEq)]
pub enum ToolPostDecision {
    /// Keep the result.
    Accept,
    /// Swap a success's value (ignored, and traced, on a failure).
    Replace(Value),
    /// Withhold the result; the call fails `BLOCKED` with this reason.
    Block(String),
}

/// The result of the execute stage, as post-execute listeners see it.
pub type ExecutedResult = Arc<Result<Value, ToolFailure>>;

/// A post-execute listener. It must call `next.run()` to let later listeners
/// (and the terminal `Accept`) decide.
///
/// Implemented for every `Fn(ToolExecution, ExecutedResult, PostExecuteNext) -> impl Future`.
pub trait PostExecuteListener: Send + Sync + 'static {
    /// Decides, or defers to `next`.
    fn on_post_execute(
        &self,
        execution: ToolExecution,
        result: ExecutedResult,
        next: PostExecuteNext,
    ) -> BoxFuture<'static, Result<ToolPostDecision, BoxError>>;
}

impl<F, Fut> PostExecuteListener for F
where
    F: Fn(ToolExecution, ExecutedResult, PostExecuteNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolPostDecision, BoxError>> + Send + 'static,
{
    fn on_post_execute(
        &self,
        execution: ToolExecution,
        result: ExecutedResult,
        next: PostExecuteNext,
    ) -> BoxFuture<'static, Result<ToolPostDecision, BoxError>> {
        Box::pin(self(execution, result, next))
    }
}

/// The rest of the post-execute waterfall.
pub struct PostExecuteNext {
    pub(crate) listeners: Arc<Listeners>,
    pub(crate) index: usize,
    pub(crate) execution: ToolExecution,
    pub(crate) result: ExecutedResult,
}

impl PostExecuteNext {
    /// Runs the later listeners, then the terminal `Accept`.
    ///
    /// # Errors
    /// A later listener's failure or panic.
    pub async fn run(self) -> Result<ToolPostDecision, BoxError> {
        let found = next_applicable(&self.listeners.post_execute, self.index, self.execution.scope())
            .map(|(i, l)| (i, Arc::clone(l)));
        let Some((index, listener)) = found else {
            return Ok(ToolPostDecision::Accept);
        };
        let next = PostExecuteNext {
            listeners: Arc::clone(&self.listeners),
            index: index + 1,
            execution: self.execution.clone(),
            result: Arc::clone(&self.result),
        };
        callback::run_fallible(|| listener.on_post_execute(self.execution, self.result, next)).await
    }
}
