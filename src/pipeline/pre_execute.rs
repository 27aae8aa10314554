//! The pre-execute waterfall (`tools/pre-execute`, SPEC §7 step 2).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Listeners, next_applicable};
use crate::callback;
use crate::error::BoxError;
use crate::execution::ToolExecution;

/// What pre-execute policy decided (SPEC §8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolPreDecision {
    /// Go on to the guards.
    Allow,
    /// Refuse; the reason is returned to the model.
    Deny(String),
    /// Ask the approval capability, with an optional reason shown to the human.
    Ask(Option<String>),
}

/// A pre-execute listener. It must call `next.run()` to let later listeners
/// (and the terminal `Allow`) decide; not calling it short-circuits them.
///
/// Implemented for every `Fn(ToolExecution, PreExecuteNext) -> impl Future`.
pub trait PreExecuteListener: Send + Sync + 'static {
    /// Decides, or defers to `next`.
    fn on_pre_execute(
        &self,
        execution: ToolExecution,
        next: PreExecuteNext,
    ) -> BoxFuture<'static, Result<ToolPreDecision, BoxError>>;
}

impl<F, Fut> PreExecuteListener for F
where
    F: Fn(ToolExecution, PreExecuteNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolPreDecision, BoxError>> + Send + 'static,
{
    fn on_pre_execute(
        &self,
        execution: ToolExecution,
        next: PreExecuteNext,
    ) -> BoxFuture<'static, Result<ToolPreDecision, BoxError>> {
        Box::pin(self(execution, next))
    }
}

/// The rest of the pre-execute waterfall. Consumed by [`PreExecuteNext::run`],
/// so it runs at most once.
pub struct PreExecuteNext {
    pub(crate) listeners: Arc<Listeners>,
    pub(crate) index: usize,
    pub(crate) execution: ToolExecution,
}

impl PreExecuteNext {
    /// Runs the later listeners, then the terminal `Allow`.
    ///
    /// # Errors
    /// A later listener's failure or panic.
    pub async fn run(self) -> Result<ToolPreDecision, BoxError> {
        let found = next_applicable(&self.listeners.pre_execute, self.index, self.execution.scope())
            .map(|(i, l)| (i, Arc::clone(l)));
        let Some((index, listener)) = found else {
            return Ok(ToolPreDecision::Allow);
        };
        let next = PreExecuteNext {
            listeners: Arc::clone(&self.listeners),
            index: index + 1,
            execution: self.execution.clone(),
        };
        callback::run_fallible(|| listener.on_pre_execute(self.execution, next)).await
    }
}
