//! SPEC §7: a callback can panic before it returns its future (work done in
//! a plain `Fn` before `async`). Each kind is contained exactly as a panic
//! inside the future would be, and the registry keeps working for the next
//! call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use tether_tools::{
    BoxError, ExecuteNext, ExecutedResult, ListenerOrder, PostExecuteNext, PreExecuteNext, Registration, Tool,
    ToolContext, ToolDispatch, ToolExecution, ToolExecutionOutcome, ToolRegistry,
};

/// A registry with tool `t` (returning "ran") and the listener `add`
/// registers, which panics before its future for call `boom`: that call is
/// a tool error saying `expected`, and the next call runs.
async fn panics_before_its_future(add: impl FnOnce(&ToolRegistry) -> Registration, expected: &str) {
    let registry = registry_with(returning("t", json!("ran")));
    add(&registry).keep();
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(code(&boom), Some("TOOL_ERROR"));
    assert_eq!(message(&boom), expected);
    assert_eq!(fine.value(), &json!("ran"));
}

#[tokio::test]
async fn step2_a_pre_listener_that_panics_before_its_future_is_a_tool_error() {
    panics_before_its_future(
        |registry| {
            registry.register_pre_execute(None, ListenerOrder::Append, |e: ToolExecution, next: PreExecuteNext| {
                panic_now_if_boom(&e, "pre listener");
                next.run()
            })
        },
        "pre-execute listener failed: panicked: pre listener panicked before returning its future",
    )
    .await;
}

#[tokio::test]
async fn step3_a_guard_that_panics_before_its_future_is_a_tool_error() {
    panics_before_its_future(
        |registry| {
            registry.register_guard(None, ListenerOrder::Append, |e: ToolExecution| {
                panic_now_if_boom(&e, "guard");
                async { Ok(None) }
            })
        },
        "guard failed: panicked: guard panicked before returning its future",
    )
    .await;
}

#[tokio::test]
async fn step6_a_wrapper_that_panics_before_its_future_is_a_tool_error() {
    panics_before_its_future(
        |registry| {
            registry.register_execute(
                None,
                ListenerOrder::Append,
                |e: ToolExecution, d: ToolDispatch, next: ExecuteNext| {
                    panic_now_if_boom(&e, "wrapper");
                    next.run(d)
                },
            )
        },
        "execute wrapper panicked: wrapper panicked before returning its future",
    )
    .await;
}

#[tokio::test]
async fn step6_a_body_that_panics_before_its_future_is_a_tool_error_and_post_still_runs() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    let body = Tool::new("t", "panics early", object_schema(), |args: Value, ctx: ToolContext| {
        panic_now_if_boom(ctx.execution(), "body");
        async move { Ok::<_, BoxError>(args) }
    });
    register(&registry, body, None).keep();
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(code(&boom), Some("TOOL_ERROR"));
    assert_eq!(
        message(&boom),
        "tool panicked: body panicked before returning its future"
    );
    assert_eq!(fine.value(), &json!({}));
    assert_eq!(
        trail.entries(),
        [
            "pre",
            "guard",
            "execute",
            "post",
            "result:TOOL_ERROR",
            "pre",
            "guard",
            "execute",
            "post",
            "result:ok"
        ]
    );
}

#[tokio::test]
async fn step7_a_post_listener_that_panics_before_its_future_is_a_tool_error() {
    panics_before_its_future(
        |registry| {
            registry.register_post_execute(
                None,
                ListenerOrder::Append,
                |e: ToolExecution, _r: ExecutedResult, next: PostExecuteNext| {
                    panic_now_if_boom(&e, "post listener");
                    next.run()
                },
            )
        },
        "post-execute listener failed: panicked: post listener panicked before returning its future",
    )
    .await;
}

#[tokio::test]
async fn step8_a_result_listener_that_panics_before_its_future_is_contained_and_later_ones_still_hear() {
    let registry = registry_with(returning("t", json!("ran")));
    registry
        .register_result(
            None,
            ListenerOrder::Append,
            |e: ToolExecution, _o: Arc<ToolExecutionOutcome>| {
                panic_now_if_boom(&e, "result listener");
                async { Ok(()) }
            },
        )
        .keep();
    let seen = Trail::default();
    hears_results(&registry, &seen, |e, o| format!("{}={}", e.call_id(), o.value()));
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(boom.value(), &json!("ran"), "observers change nothing");
    assert_eq!(fine.value(), &json!("ran"));
    assert_eq!(seen.entries(), ["boom=\"ran\"", "fine=\"ran\""]);
}
