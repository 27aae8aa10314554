//! SPEC §7 steps 7 and 8: post-execute listeners and result notification;
//! what a call carries through the pipeline; `review_result`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use serde_json::json;
use tether_tools::{
    AgentPipelineScope, BoxError, ExecutedResult, ListenerOrder, PostExecuteNext, PreExecuteNext, ToolExecution,
    ToolExecutionOutcome, ToolPostDecision, ToolPreDecision, ToolRegistry,
};
use tokio_util::sync::CancellationToken;

fn post_decides(decision: ToolPostDecision) -> impl tether_tools::PostExecuteListener {
    move |_e, _r, _n: PostExecuteNext| futures::future::ready(Ok::<_, BoxError>(decision.clone()))
}

#[tokio::test]
async fn step7_replace_swaps_a_successful_value() {
    let registry = registry_with(returning("t", json!("secret")));
    registry
        .register_post_execute(
            None,
            ListenerOrder::Append,
            post_decides(ToolPostDecision::Replace(json!("[redacted]"))),
        )
        .keep();
    assert_eq!(run_t(&registry).await.value(), &json!("[redacted]"));
}

#[tokio::test]
async fn step7_replace_is_ignored_on_a_failure() {
    let registry = registry_with(failing_tool("f", false));
    registry
        .register_post_execute(
            None,
            ListenerOrder::Append,
            post_decides(ToolPostDecision::Replace(json!("fine"))),
        )
        .keep();
    let outcome = run(&registry, None, call("c", "f", "{}")).await;
    assert_eq!(code(&outcome), Some("TOOL_ERROR"));
    assert_eq!(message(&outcome), "disk full");
}

#[tokio::test]
async fn step7_block_fails_blocked_with_the_reason() {
    let registry = registry_with(returning("t", json!("AKIA-secret")));
    registry
        .register_post_execute(
            None,
            ListenerOrder::Append,
            |_e, r: ExecutedResult, next: PostExecuteNext| async move {
                if r.as_ref().as_ref().is_ok_and(|v| v.to_string().contains("AKIA")) {
                    return Ok(ToolPostDecision::Block("result contains a secret".into()));
                }
                next.run().await
            },
        )
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("BLOCKED"));
    assert_eq!(outcome.value(), &json!({"message": "result contains a secret"}));
}

#[tokio::test]
async fn step7_post_execute_does_not_run_when_step6_did_not() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Prepend,
            pre_decides(ToolPreDecision::Deny("no".into())),
        )
        .keep();
    run_t(&registry).await;
    assert!(!trail.entries().contains(&"post".to_owned()));
}

#[tokio::test]
async fn step7_a_failing_or_panicking_post_listener_is_a_tool_error() {
    for panics in [false, true] {
        let registry = registry_with(returning("t", json!(1)));
        registry
            .register_post_execute(
                None,
                ListenerOrder::Append,
                move |_e, _r, _n: PostExecuteNext| async move {
                    if panics {
                        panic!("post bug");
                    }
                    Err::<ToolPostDecision, BoxError>("post store down".into())
                },
            )
            .keep();
        let outcome = run_t(&registry).await;
        assert_eq!(code(&outcome), Some("TOOL_ERROR"));
        assert!(message(&outcome).starts_with("post-execute listener failed"));
    }
}

#[tokio::test]
async fn step8_result_listeners_see_every_outcome_and_their_failures_are_contained() {
    let registry = registry_with(returning("t", json!("value")));
    registry
        .register_result(None, ListenerOrder::Append, |_e, _o: Arc<ToolExecutionOutcome>| async {
            Err::<(), BoxError>("log store down".into())
        })
        .keep();
    registry
        .register_result(
            None,
            ListenerOrder::Append,
            |_e: ToolExecution, _o: Arc<ToolExecutionOutcome>| async {
                panic!("result bug");
                #[allow(unreachable_code)]
                Ok(())
            },
        )
        .keep();
    let seen = Trail::default();
    hears_results(&registry, &seen, |e, o| format!("{}={}", e.call_id(), o.value()));
    let outcome = run_t(&registry).await;
    assert_eq!(outcome.value(), &json!("value"), "failing observers change nothing");
    let unknown = run(&registry, None, call("u", "nope", "{}")).await;
    assert!(unknown.is_error());
    assert_eq!(
        seen.entries(),
        [
            "c=\"value\"",
            "u={\"message\":\"unknown tool \\\"nope\\\": no tool of that name is visible here\"}"
        ]
    );
}

#[tokio::test]
async fn the_execution_fixes_identity_and_context_before_dispatch() {
    let registry = ToolRegistry::new();
    let scope = AgentPipelineScope::builder()
        .session_id("s-1")
        .owner("alice")
        .build()
        .unwrap();
    register(&registry, returning("t", json!(1)), Some(&scope)).keep();
    let seen = Trail::default();
    let s = seen.clone();
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, next: PreExecuteNext| {
                s.push(format!(
                    "{} {} {:?} {:?} {:?} {:?} {}",
                    e.call_id(),
                    e.name(),
                    e.owner(),
                    e.session_id(),
                    e.parent_call_id(),
                    e.invocation_context(),
                    e.scope().is_some()
                ));
                next.run()
            },
        )
        .keep();
    let mut c = call("c-9", "t", "{}");
    c.parent_call_id = Some("p-1".into());
    c.invocation_context = Some(json!({"turn": 3}));
    run(&registry, Some(&scope), c).await;
    assert_eq!(
        seen.entries(),
        ["c-9 t Some(\"alice\") Some(\"s-1\") Some(\"p-1\") Some(Object {\"turn\": Number(3)}) true"]
    );
}

#[tokio::test]
async fn review_result_runs_only_post_execute_and_result_notification() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    registry
        .register_post_execute(
            None,
            ListenerOrder::Append,
            |_e, r: ExecutedResult, next: PostExecuteNext| async move {
                if r.as_ref().as_ref().is_ok_and(|v| v.to_string().contains("secret")) {
                    return Ok(ToolPostDecision::Block("no secrets".into()));
                }
                next.run().await
            },
        )
        .keep();
    let view = registry.seal(None);
    let cancel = CancellationToken::new();
    let kept = registry
        .review_result(call("a", "t", "{}"), &view, Ok(json!("fine")), &cancel)
        .await;
    assert_eq!(kept.value(), &json!("fine"));
    let blocked = registry
        .review_result(call("b", "t", "{}"), &view, Ok(json!("a secret")), &cancel)
        .await;
    assert_eq!(code(&blocked), Some("BLOCKED"));
    let failed = registry
        .review_result(call("c", "t", "{}"), &view, Err("exit 1".into()), &cancel)
        .await;
    assert_eq!((code(&failed), message(&failed)), (Some("TOOL_ERROR"), "exit 1"));
    let unknown = registry
        .review_result(call("d", "ghost", "{}"), &view, Ok(json!(1)), &cancel)
        .await;
    assert_eq!(code(&unknown), Some("UNKNOWN_TOOL"));
    assert_eq!(
        trail.entries(),
        [
            "post",
            "result:ok",
            "post",
            "result:BLOCKED",
            "post",
            "result:TOOL_ERROR",
            "result:UNKNOWN_TOOL"
        ],
        "no pre-execute, guard, execute or body"
    );
}
