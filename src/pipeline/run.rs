//! One call through every step of SPEC §7, in order.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::approval::ApprovalOutcome;
use super::execute::{ExecuteError, ExecuteNext, Refusal, ToolDispatch};
use super::guard::{GuardVerdict, run_guards};
use super::post_execute::{PostExecuteNext, ToolPostDecision};
use super::pre_execute::{PreExecuteNext, ToolPreDecision};
use super::{Host, Listeners, result};
use crate::call::ToolCall;
use crate::callback;
use crate::execution::{ExecutionId, ToolExecution};
use crate::outcome::{ToolExecutionOutcome, ToolFailure, ToolFailureCode};
use crate::view::{RegisteredTool, SealedToolCatalogView};

/// Bounds how many bodies run at once; a batch hands one to its parallel groups.
pub(crate) type DispatchGate<'a> = Option<&'a Semaphore>;

/// Told when a call's execute stage begins (a batch's sink, through
/// [`crate::ToolBatchSink::call_started`]).
pub(crate) type OnStarted<'a> = Option<&'a (dyn Fn(&ToolExecution) + Sync)>;

/// Runs one call through the pipeline and returns its outcome, after the
/// result listeners have seen it.
pub(crate) async fn run_call(
    host: Host<'_>,
    id: ExecutionId,
    call: &ToolCall,
    view: &SealedToolCatalogView,
    caller: &CancellationToken,
    gate: DispatchGate<'_>,
    started: OnStarted<'_>,
) -> ToolExecutionOutcome {
    let (tool, execution) = prepare(id, call, view, caller);
    let listeners = host.state.listeners();
    // Every callback is contained where it is called; this catches whatever
    // still unwinds (a user future that panics while being dropped), so the
    // call keeps its one outcome and its result notification.
    let outcome = callback::run(|| decide(host, &listeners, &execution, tool, gate, started))
        .await
        .unwrap_or_else(|panicked| {
            tracing::error!(call_id = execution.call_id(), %panicked, "a panic escaped the pipeline's stages");
            ToolExecutionOutcome::failed(
                &execution,
                ToolFailureCode::ToolError,
                format!("the call failed: panicked: {panicked}"),
            )
        });
    result::notify(&listeners, &execution, outcome).await
}

/// Resolves the call in the view and prepares its execution, with the
/// resolved tool's metadata, the same way for every path a call can take.
fn prepare(
    id: ExecutionId,
    call: &ToolCall,
    view: &SealedToolCatalogView,
    caller: &CancellationToken,
) -> (Option<Arc<RegisteredTool>>, ToolExecution) {
    let tool = view.resolve(&call.name).map(Arc::clone);
    let metadata = tool.as_ref().and_then(|t| t.metadata.clone());
    let execution = ToolExecution::prepare(id, call, view.scope().cloned(), caller.clone(), metadata);
    (tool, execution)
}

/// Steps 7 and 8 only, for a result produced outside the pipeline.
pub(crate) async fn review_result(
    host: Host<'_>,
    id: ExecutionId,
    call: &ToolCall,
    view: &SealedToolCatalogView,
    caller: &CancellationToken,
    result: Result<Value, String>,
) -> ToolExecutionOutcome {
    let (tool, execution) = prepare(id, call, view, caller);
    let listeners = host.state.listeners();
    let outcome = if tool.is_none() {
        ToolExecutionOutcome::failed(
            &execution,
            ToolFailureCode::UnknownTool,
            format!(
                "unknown tool {:?}: no tool of that name is visible here",
                execution.name()
            ),
        )
    } else {
        let executed = result.map_err(|message| ToolFailure {
            code: ToolFailureCode::ToolError,
            message,
        });
        post_execute(&listeners, &execution, executed).await
    };
    result::notify(&listeners, &execution, outcome).await
}

/// The outcome of a call that ends before anything runs (a failed
/// `call_declared`, a cancelled batch), after the result listeners saw it.
pub(crate) async fn end_early(
    host: Host<'_>,
    id: ExecutionId,
    call: &ToolCall,
    view: &SealedToolCatalogView,
    caller: &CancellationToken,
    code: ToolFailureCode,
    message: String,
) -> ToolExecutionOutcome {
    let (_, execution) = prepare(id, call, view, caller);
    let listeners = host.state.listeners();
    let outcome = ToolExecutionOutcome::failed(&execution, code, message);
    result::notify(&listeners, &execution, outcome).await
}

fn pre_failed(error: &impl std::fmt::Display) -> String {
    format!("pre-execute listener failed: {error}")
}

fn before_dispatch(execution: &ToolExecution) -> ToolExecutionOutcome {
    ToolExecutionOutcome::failed(
        execution,
        ToolFailureCode::AbortedBeforeDispatch,
        "cancelled before the tool was dispatched",
    )
}

/// A refused dispatch (SPEC §7 step 6, the token checked as the body would
/// start): no body ran, whatever the wrappers made of the refusal.
fn refused(execution: &ToolExecution, executed: Result<Value, ExecuteError>) -> ToolExecutionOutcome {
    match executed {
        Err(ExecuteError::Aborted { reason }) => {
            ToolExecutionOutcome::failed(execution, ToolFailureCode::AbortedBeforeDispatch, reason)
        }
        _ => before_dispatch(execution),
    }
}

async fn decide(
    host: Host<'_>,
    listeners: &Arc<Listeners>,
    execution: &ToolExecution,
    tool: Option<Arc<RegisteredTool>>,
    gate: DispatchGate<'_>,
    started: OnStarted<'_>,
) -> ToolExecutionOutcome {
    let fail = |code, message: String| ToolExecutionOutcome::failed(execution, code, message);
    let caller = execution.cancellation();

    // 0. Caller already cancelled.
    if caller.is_cancelled() {
        return before_dispatch(execution);
    }
    // 1. Resolve the name in the view.
    let Some(tool) = tool else {
        return fail(
            ToolFailureCode::UnknownTool,
            format!(
                "unknown tool {:?}: no tool of that name is visible here",
                execution.name()
            ),
        );
    };
    // 2. Pre-execute waterfall.
    let pre = PreExecuteNext {
        listeners: Arc::clone(listeners),
        index: 0,
        execution: execution.clone(),
    };
    let edited = match pre.run().await {
        Ok(ToolPreDecision::Allow) => None,
        Ok(ToolPreDecision::Deny(reason)) => return fail(ToolFailureCode::Denied, reason),
        // Boxed: an asked call waits on a person, while the approval's
        // wait would otherwise make every call's future that much larger
        // (copied whole wherever the call's task is spawned or moved).
        Ok(ToolPreDecision::Ask(reason)) => match Box::pin(host.state.approval.ask(
            host.ids,
            execution,
            reason,
            tool.check_arguments(execution),
        ))
        .await
        {
            ApprovalOutcome::Approved => None,
            ApprovalOutcome::Edited(arguments) => Some(execution.with_edited_arguments(arguments)),
            ApprovalOutcome::Rejected(message) => return fail(ToolFailureCode::Denied, message),
            ApprovalOutcome::Unavailable(message) => return fail(ToolFailureCode::Unavailable, message),
            ApprovalOutcome::Cancelled => return before_dispatch(execution),
        },
        Err(error) => return fail(ToolFailureCode::ToolError, pre_failed(&error)),
    };
    // 2b. Approved with edits: the whole pre-execute stage again, on the
    // approver's arguments. A `Deny` denies; an `Ask` is the question the
    // approver just answered, so it is not asked twice.
    let execution = match &edited {
        None => execution,
        Some(edited) => {
            let again = PreExecuteNext {
                listeners: Arc::clone(listeners),
                index: 0,
                execution: edited.clone(),
            };
            match again.run().await {
                Ok(ToolPreDecision::Allow | ToolPreDecision::Ask(_)) => edited,
                Ok(ToolPreDecision::Deny(reason)) => {
                    return ToolExecutionOutcome::failed(
                        edited,
                        ToolFailureCode::Denied,
                        format!("the edited arguments were denied: {reason}"),
                    );
                }
                Err(error) => {
                    return ToolExecutionOutcome::failed(edited, ToolFailureCode::ToolError, pre_failed(&error));
                }
            }
        }
    };
    let fail = |code, message: String| ToolExecutionOutcome::failed(execution, code, message);
    // 3. Monotonic guards.
    match run_guards(listeners, execution).await {
        GuardVerdict::Pass => {}
        GuardVerdict::Veto(reason) => return fail(ToolFailureCode::Denied, reason),
        GuardVerdict::Failed(message) => return fail(ToolFailureCode::ToolError, message),
    }
    // 4. Caller cancelled meanwhile.
    if caller.is_cancelled() {
        return before_dispatch(execution);
    }
    // 5. Argument check.
    if let Err(message) = tool.check_arguments(execution) {
        return fail(ToolFailureCode::InvalidArgs, message);
    }
    // 6. Execute waterfall around the body, within the batch's overlap cap.
    let _permit = match gate {
        Some(gate) => tokio::select! {
            biased;
            () = caller.cancelled() => return before_dispatch(execution),
            permit = gate.acquire() => match permit {
                Ok(permit) => Some(permit),
                Err(_) => return before_dispatch(execution),
            },
        },
        None => None,
    };
    if caller.is_cancelled() {
        return before_dispatch(execution);
    }
    if let Some(started) = started {
        // Progress only: a panic is logged and the call goes on.
        if let Err(panicked) = callback::run_sync(|| started(execution)) {
            tracing::error!(call_id = execution.call_id(), %panicked, "sink call_started panicked; ignored");
        }
    }
    let refusal = Refusal::default();
    let next = ExecuteNext {
        listeners: Arc::clone(listeners),
        index: 0,
        execution: execution.clone(),
        body: Arc::clone(&tool.body),
        arguments: execution.arguments().clone(),
        refusal: refusal.clone(),
    };
    let executed = next.run(ToolDispatch::new(caller.clone())).await;
    drop(_permit);
    if refusal.happened() {
        // Like step 4: nothing ran, so there is no result for post-execute.
        return refused(execution, executed);
    }
    let executed: Result<Value, ToolFailure> = match executed {
        Ok(value) => Ok(value),
        Err(ExecuteError::Aborted { reason }) => Err(ToolFailure {
            code: ToolFailureCode::Aborted,
            message: reason,
        }),
        Err(ExecuteError::Failed(error)) => Err(ToolFailure {
            code: ToolFailureCode::ToolError,
            message: error.to_string(),
        }),
    };
    // 7. Post-execute waterfall.
    post_execute(listeners, execution, executed).await
}

async fn post_execute(
    listeners: &Arc<Listeners>,
    execution: &ToolExecution,
    executed: Result<Value, ToolFailure>,
) -> ToolExecutionOutcome {
    let executed = Arc::new(executed);
    let post = PostExecuteNext {
        listeners: Arc::clone(listeners),
        index: 0,
        execution: execution.clone(),
        result: Arc::clone(&executed),
    };
    let decision = post.run().await;
    let executed = Arc::try_unwrap(executed).unwrap_or_else(|shared| (*shared).clone());
    let outcome_of = |executed: Result<Value, ToolFailure>| match executed {
        Ok(value) => ToolExecutionOutcome::success(execution, value),
        Err(failure) => ToolExecutionOutcome::failed(execution, failure.code, failure.message),
    };
    match (decision, executed) {
        (Ok(ToolPostDecision::Accept), executed) => outcome_of(executed),
        (Ok(ToolPostDecision::Replace(value)), Ok(_)) => ToolExecutionOutcome::success(execution, value),
        (Ok(ToolPostDecision::Replace(_)), Err(failure)) => {
            tracing::info!(call_id = execution.call_id(), code = %failure.code, "post-execute Replace ignored on a failed call");
            outcome_of(Err(failure))
        }
        (Ok(ToolPostDecision::Block(reason)), Err(failure)) if failure.code == ToolFailureCode::Aborted => {
            // An aborted call has no result to withhold, and its code tells the
            // caller a side effect may need compensating: keep it.
            tracing::info!(call_id = execution.call_id(), %reason, "post-execute Block ignored on an aborted call");
            outcome_of(Err(failure))
        }
        (Ok(ToolPostDecision::Block(reason)), _) => {
            ToolExecutionOutcome::failed(execution, ToolFailureCode::Blocked, reason)
        }
        (Err(error), _) => ToolExecutionOutcome::failed(
            execution,
            ToolFailureCode::ToolError,
            format!("post-execute listener failed: {error}"),
        ),
    }
}
