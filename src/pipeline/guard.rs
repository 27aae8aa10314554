//! Monotonic guards (SPEC §7 step 3).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Listeners, applicable};
use crate::callback;
use crate::error::BoxError;
use crate::execution::ToolExecution;

/// A guard: `Some(reason)` vetoes the call, `None` abstains. A guard can never
/// force an allow, so adding guards only ever makes policy stricter.
///
/// Implemented for every `Fn(ToolExecution) -> impl Future<Output = Result<Option<String>, BoxError>>`.
pub trait ToolGuard: Send + Sync + 'static {
    /// Vetoes with a reason, or abstains.
    fn check(&self, execution: ToolExecution) -> BoxFuture<'static, Result<Option<String>, BoxError>>;
}

impl<F, Fut> ToolGuard for F
where
    F: Fn(ToolExecution) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<String>, BoxError>> + Send + 'static,
{
    fn check(&self, execution: ToolExecution) -> BoxFuture<'static, Result<Option<String>, BoxError>> {
        Box::pin(self(execution))
    }
}

/// What the guards decided together.
pub(crate) enum GuardVerdict {
    Pass,
    Veto(String),
    Failed(String),
}

/// Runs every applicable guard in registration order. Every guard is asked,
/// even after a veto, so the verdict's kind does not depend on the order guards
/// were registered in: any veto denies; otherwise any failure fails the call.
/// The reason given is the first veto (or failure) in registration order.
pub(crate) async fn run_guards(listeners: &Arc<Listeners>, execution: &ToolExecution) -> GuardVerdict {
    let mut veto = None;
    let mut failure = None;
    for guard in applicable(&listeners.guards, execution.scope()) {
        match callback::run_fallible(|| guard.check(execution.clone())).await {
            Ok(None) => {}
            Ok(Some(reason)) => {
                veto.get_or_insert(reason);
            }
            Err(error) => {
                tracing::warn!(call_id = execution.call_id(), %error, "guard failed");
                failure.get_or_insert_with(|| format!("guard failed: {error}"));
            }
        }
    }
    match (veto, failure) {
        (Some(reason), _) => GuardVerdict::Veto(reason),
        (None, Some(message)) => GuardVerdict::Failed(message),
        (None, None) => GuardVerdict::Pass,
    }
}
