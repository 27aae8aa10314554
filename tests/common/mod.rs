//! Helpers shared by the integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tether_tools::{
    AgentPipelineScope, ApprovalAnswer, ApprovalRequest, BoxError, ExecuteNext, ExecutedResult, ListenerOrder,
    PostExecuteNext, PreExecuteNext, Registration, Tool, ToolCall, ToolContext, ToolDispatch, ToolExecution,
    ToolExecutionOutcome, ToolFailureCode, ToolPreDecision, ToolRegistrationOptions, ToolRegistry,
};
use tokio_util::sync::CancellationToken;

pub fn object_schema() -> Value {
    json!({"type": "object"})
}

pub fn path_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
        "required": ["path"],
        "additionalProperties": false
    })
}

/// A tool that returns `value` whatever its arguments.
pub fn returning(name: &str, value: Value) -> Tool {
    Tool::new(
        name,
        format!("returns {value}"),
        object_schema(),
        move |_args: Value, _ctx: ToolContext| {
            let value = value.clone();
            async move { Ok::<_, BoxError>(value) }
        },
    )
}

/// A tool that echoes its arguments.
pub fn echo(name: &str, schema: Value) -> Tool {
    Tool::new(
        name,
        "echoes its arguments",
        schema,
        |args: Value, _ctx: ToolContext| async move { Ok::<_, BoxError>(args) },
    )
}

pub fn register(registry: &ToolRegistry, tool: Tool, scope: Option<&AgentPipelineScope>) -> Registration {
    registry
        .register(tool, scope, ToolRegistrationOptions::default())
        .unwrap()
}

/// A registry with `tool` registered in the global scope.
pub fn registry_with(tool: Tool) -> ToolRegistry {
    let registry = ToolRegistry::new();
    register(&registry, tool, None).keep();
    registry
}

pub fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

pub async fn run(registry: &ToolRegistry, scope: Option<&AgentPipelineScope>, call: ToolCall) -> ToolExecutionOutcome {
    let view = registry.seal(scope);
    registry.execute(call, &view, &CancellationToken::new()).await
}

/// Runs `call` in the global scope, the caller's token `cancel`, while
/// `alongside` runs (an answerer, a canceller …); both results.
pub async fn run_alongside<T>(
    registry: &ToolRegistry,
    call: ToolCall,
    cancel: &CancellationToken,
    alongside: impl std::future::Future<Output = T>,
) -> (ToolExecutionOutcome, T) {
    let view = registry.seal(None);
    tokio::join!(registry.execute(call, &view, cancel), alongside)
}

/// Call `c` to tool `t`, no arguments, in the global scope.
pub async fn run_t(registry: &ToolRegistry) -> ToolExecutionOutcome {
    run(registry, None, call("c", "t", "{}")).await
}

pub fn code(outcome: &ToolExecutionOutcome) -> Option<&'static str> {
    outcome.code().map(ToolFailureCode::as_str)
}

pub fn message(outcome: &ToolExecutionOutcome) -> &str {
    outcome.failure().map_or("", |f| f.message.as_str())
}

/// A pre-execute listener that always decides `decision`.
pub fn pre_decides(
    decision: ToolPreDecision,
) -> impl Fn(ToolExecution, PreExecuteNext) -> futures::future::Ready<Result<ToolPreDecision, BoxError>> + Send + Sync {
    move |_e, _n| futures::future::ready(Ok(decision.clone()))
}

/// A shared log of what happened, in order.
#[derive(Clone, Default)]
pub struct Trail(Arc<Mutex<Vec<String>>>);

impl Trail {
    pub fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    pub fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// An answerer that always gives `answer`.
pub fn answering(
    answer: ApprovalAnswer,
) -> impl Fn(ApprovalRequest) -> futures::future::Ready<Result<ApprovalAnswer, BoxError>> + Send + Sync {
    move |_r| futures::future::ready(Ok(answer.clone()))
}

/// Runs call `boom` and then call `fine` to tool `t` in the global scope: a
/// callback that misbehaves only for `boom` shows what happens to that call,
/// and `fine` shows that the registry keeps working afterwards.
pub async fn boom_then_fine(registry: &ToolRegistry) -> (ToolExecutionOutcome, ToolExecutionOutcome) {
    let boom = run(registry, None, call("boom", "t", "{}")).await;
    let fine = run(registry, None, call("fine", "t", "{}")).await;
    (boom, fine)
}

/// Panics when `execution` is the `boom` call of [`boom_then_fine`]; called
/// by a callback before it builds its future.
pub fn panic_now_if_boom(execution: &ToolExecution, what: &str) {
    if execution.call_id() == "boom" {
        panic!("{what} panicked before returning its future");
    }
}

/// A registry whose every stage writes into `trail`, with one tool `t` whose
/// body records that it ran.
pub fn traced_registry(trail: &Trail) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let body_trail = trail.clone();
    registry
        .register(
            Tool::new("t", "traced", object_schema(), move |args: Value, _ctx: ToolContext| {
                let trail = body_trail.clone();
                async move {
                    trail.push("body");
                    Ok::<_, BoxError>(args)
                }
            }),
            None,
            Default::default(),
        )
        .unwrap()
        .keep();
    let t = trail.clone();
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            move |_e: ToolExecution, next: PreExecuteNext| {
                let t = t.clone();
                async move {
                    t.push("pre");
                    next.run().await
                }
            },
        )
        .keep();
    let t = trail.clone();
    registry
        .register_guard(None, ListenerOrder::Append, move |_e: ToolExecution| {
            let t = t.clone();
            async move {
                t.push("guard");
                Ok(None)
            }
        })
        .keep();
    let t = trail.clone();
    registry
        .register_execute(
            None,
            ListenerOrder::Append,
            move |_e: ToolExecution, d: ToolDispatch, next: ExecuteNext| {
                let t = t.clone();
                async move {
                    t.push("execute");
                    next.run(d).await
                }
            },
        )
        .keep();
    let t = trail.clone();
    registry
        .register_post_execute(
            None,
            ListenerOrder::Append,
            move |_e: ToolExecution, _r: ExecutedResult, next: PostExecuteNext| {
                let t = t.clone();
                async move {
                    t.push("post");
                    next.run().await
                }
            },
        )
        .keep();
    let t = trail.clone();
    registry
        .register_result(
            None,
            ListenerOrder::Append,
            move |_e: ToolExecution, o: Arc<ToolExecutionOutcome>| {
                let t = t.clone();
                async move {
                    t.push(format!("result:{}", o.code().map_or("ok", |c| c.as_str())));
                    Ok(())
                }
            },
        )
        .keep();
    registry
}

/// A tool whose body fails ("disk full") or panics ("body bug").
pub fn failing_tool(name: &str, panics: bool) -> Tool {
    Tool::new(
        name,
        "fails",
        object_schema(),
        move |_a: Value, _c: ToolContext| async move {
            if panics {
                panic!("body bug");
            }
            Err::<Value, BoxError>("disk full".into())
        },
    )
}

/// A tool whose body waits for its token, then fails ("stopped").
pub fn waits_for_cancellation(name: &str) -> Tool {
    Tool::new(
        name,
        "waits",
        object_schema(),
        |_a: Value, ctx: ToolContext| async move {
            ctx.cancellation().cancelled().await;
            Err::<Value, BoxError>("stopped".into())
        },
    )
}

/// A result listener (appended) that writes `entry` of each execution and
/// its outcome into `trail`.
pub fn hears_results(
    registry: &ToolRegistry,
    trail: &Trail,
    entry: impl Fn(&ToolExecution, &ToolExecutionOutcome) -> String + Send + Sync + 'static,
) {
    let trail = trail.clone();
    registry
        .register_result(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, o: Arc<ToolExecutionOutcome>| {
                trail.push(entry(&e, &o));
                async { Ok(()) }
            },
        )
        .keep();
}
