//! Result notification (`tools/result`, SPEC §7 step 8).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Listeners, applicable};
use crate::callback;
use crate::error::BoxError;
use crate::execution::ToolExecution;
use crate::outcome::ToolExecutionOutcome;

/// Observes every final outcome; cannot change it. Failures and panics are
/// contained and logged.
///
/// Implemented for every `Fn(ToolExecution, Arc<ToolExecutionOutcome>) -> impl Future`.
pub trait ResultListener: Send + Sync + 'static {
    /// Observes one outcome.
    fn on_result(
        &self,
        execution: ToolExecution,
        outcome: Arc<ToolExecutionOutcome>,
    ) -> BoxFuture<'static, Result<(), BoxError>>;
}

impl<F, Fut> ResultListener for F
where
    F: Fn(ToolExecution, Arc<ToolExecutionOutcome>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    fn on_result(
        &self,
        execution: ToolExecution,
        outcome: Arc<ToolExecutionOutcome>,
    ) -> BoxFuture<'static, Result<(), BoxError>> {
        Box::pin(self(execution, outcome))
    }
}

pub(crate) async fn notify(
    listeners: &Listeners,
    execution: &ToolExecution,
    outcome: ToolExecutionOutcome,
) -> ToolExecutionOutcome {
    let mut entries = applicable(&listeners.result, execution.scope()).peekable();
    if entries.peek().is_none() {
        return outcome;
    }
    let shared = Arc::new(outcome);
    for listener in entries {
        let observed = callback::run_fallible(|| listener.on_result(execution.clone(), Arc::clone(&shared))).await;
        if let Err(error) = observed {
            tracing::warn!(call_id = execution.call_id(), %error, "result listener failed; outcome unchanged");
        }
    }
    Arc::try_unwrap(shared).unwrap_or_else(|shared| (*shared).clone())
}
