//! Helpers shared by the integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tether_tools::{
    AgentPipelineScope, ApprovalAnswer, ApprovalRequest, BoxError, PreExecuteNext, Registration, Tool, ToolCall,
    ToolContext, ToolExecution, ToolExecutionOutcome, ToolFailureCode, ToolPreDecision, ToolRegistrationOptions,
    ToolRegistry,
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

pub fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

pub async fn run(registry: &ToolRegistry, scope: Option<&AgentPipelineScope>, call: ToolCall) -> ToolExecutionOutcome {
    let view = registry.seal(scope);
    registry.execute(call, &view, &CancellationToken::new()).await
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
