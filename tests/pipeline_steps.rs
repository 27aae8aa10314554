//! SPEC §7: one call through the pipeline, one test (at least) per row of the
//! step table, plus failures and panics in every listener kind: steps 0–5
//! here, the dispatch (step 6) in `pipeline_dispatch.rs`, post-execute and
//! the result (steps 7–8) in `pipeline_results.rs`, callbacks that panic
//! before their future in `pipeline_early_panics.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tether_tools::{
    AgentPipelineScope, ApprovalAnswer, BoxError, ListenerOrder, PreExecuteNext, ToolExecution, ToolPreDecision,
    ToolRegistry,
};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn an_allowed_call_passes_every_stage_in_order() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    let outcome = run(&registry, None, call("c", "t", r#"{"x":1}"#)).await;
    assert_eq!(outcome.value(), &json!({"x": 1}));
    assert_eq!(
        trail.entries(),
        ["pre", "guard", "execute", "body", "post", "result:ok"]
    );
}

#[tokio::test]
async fn step0_a_caller_already_cancelled_ends_before_dispatch_and_still_notifies() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let outcome = registry
        .execute(call("c", "t", "{}"), &registry.seal(None), &cancel)
        .await;
    assert_eq!(code(&outcome), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(trail.entries(), ["result:ABORTED_BEFORE_DISPATCH"]);
}

#[tokio::test]
async fn step1_an_unknown_name_skips_steps_2_to_6() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    let outcome = run(&registry, None, call("c", "nope", "{}")).await;
    assert_eq!(code(&outcome), Some("UNKNOWN_TOOL"));
    assert!(message(&outcome).contains("nope"));
    assert_eq!(trail.entries(), ["result:UNKNOWN_TOOL"]);
}

#[tokio::test]
async fn step2_deny_fails_denied_with_the_reason_and_runs_nothing_further() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Prepend,
            pre_decides(ToolPreDecision::Deny("not today".into())),
        )
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("DENIED"));
    assert_eq!(outcome.value(), &json!({"message": "not today"}));
    assert_eq!(
        trail.entries(),
        ["result:DENIED"],
        "a listener that does not call next short-circuits"
    );
}

#[tokio::test]
async fn step2_ask_goes_to_the_answerer_and_approval_continues_with_guards() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    registry
        .register_pre_execute(None, ListenerOrder::Append, pre_decides(ToolPreDecision::Ask(None)))
        .keep();
    let t = trail.clone();
    registry
        .set_approval_answerer(move |_r| {
            t.push("asked");
            futures::future::ready(Ok(ApprovalAnswer::Approved))
        })
        .keep();
    let outcome = run_t(&registry).await;
    assert!(!outcome.is_error());
    assert_eq!(
        trail.entries(),
        ["pre", "asked", "guard", "execute", "body", "post", "result:ok"]
    );
}

#[tokio::test]
async fn step2_a_failing_pre_listener_is_a_tool_error() {
    let registry = registry_with(returning("t", json!(1)));
    registry
        .register_pre_execute(None, ListenerOrder::Append, |_e, _n| async {
            Err::<ToolPreDecision, BoxError>("policy store down".into())
        })
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("TOOL_ERROR"));
    assert!(message(&outcome).contains("policy store down"), "{}", message(&outcome));
}

#[tokio::test]
async fn step2_a_panicking_pre_listener_is_a_tool_error() {
    let registry = registry_with(returning("t", json!(1)));
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            |_e: ToolExecution, _n: PreExecuteNext| async {
                panic!("pre bug");
                #[allow(unreachable_code)]
                Ok(ToolPreDecision::Allow)
            },
        )
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("TOOL_ERROR"));
    assert!(message(&outcome).contains("pre bug"));
}

#[tokio::test]
async fn step2_listeners_run_in_registration_order_and_prepend_goes_first() {
    let registry = registry_with(returning("t", json!(1)));
    let trail = Trail::default();
    for (label, order) in [
        ("a", ListenerOrder::Append),
        ("b", ListenerOrder::Append),
        ("first", ListenerOrder::Prepend),
    ] {
        let t = trail.clone();
        registry
            .register_pre_execute(None, order, move |_e: ToolExecution, next: PreExecuteNext| {
                let t = t.clone();
                async move {
                    t.push(label);
                    next.run().await
                }
            })
            .keep();
    }
    run_t(&registry).await;
    assert_eq!(trail.entries(), ["first", "a", "b"]);
}

#[tokio::test]
async fn an_outer_listener_can_override_what_later_listeners_decided() {
    let registry = registry_with(returning("t", json!(1)));
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            |_e: ToolExecution, next: PreExecuteNext| async move {
                match next.run().await? {
                    ToolPreDecision::Allow => Ok(ToolPreDecision::Deny("outer says no".into())),
                    other => Ok(other),
                }
            },
        )
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(message(&outcome), "outer says no");
}

#[tokio::test]
async fn scoped_listeners_apply_to_their_scope_and_descendants_only() {
    let registry = ToolRegistry::new();
    let root = AgentPipelineScope::root();
    let inside = root.child().child();
    let outside = AgentPipelineScope::root();
    register(&registry, returning("t", json!(1)), None).keep();
    registry
        .register_pre_execute(
            Some(&root),
            ListenerOrder::Append,
            pre_decides(ToolPreDecision::Deny("scoped".into())),
        )
        .keep();
    assert_eq!(
        code(&run(&registry, Some(&inside), call("1", "t", "{}")).await),
        Some("DENIED")
    );
    assert_eq!(code(&run(&registry, Some(&outside), call("2", "t", "{}")).await), None);
    assert_eq!(code(&run(&registry, None, call("3", "t", "{}")).await), None);
}

#[tokio::test]
async fn disposing_a_listener_removes_it_from_later_calls() {
    let registry = registry_with(returning("t", json!(1)));
    let deny = registry.register_pre_execute(
        None,
        ListenerOrder::Append,
        pre_decides(ToolPreDecision::Deny("x".into())),
    );
    assert_eq!(code(&run(&registry, None, call("1", "t", "{}")).await), Some("DENIED"));
    deny.dispose();
    assert_eq!(code(&run(&registry, None, call("2", "t", "{}")).await), None);
    assert_eq!(registry.listener_count(), 0);
}

#[tokio::test]
async fn step3_the_first_veto_denies_with_its_reason() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    registry
        .register_guard(None, ListenerOrder::Append, |_e| async {
            Ok(Some("first veto".to_owned()))
        })
        .keep();
    registry
        .register_guard(None, ListenerOrder::Append, |_e| async {
            Ok(Some("second veto".to_owned()))
        })
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("DENIED"));
    assert_eq!(message(&outcome), "first veto");
    assert!(!trail.entries().contains(&"body".to_owned()));
}

#[tokio::test]
async fn step3_guards_run_after_an_allow_and_can_veto_it() {
    let registry = registry_with(returning("t", json!(1)));
    registry
        .register_pre_execute(None, ListenerOrder::Append, pre_decides(ToolPreDecision::Allow))
        .keep();
    registry
        .register_guard(None, ListenerOrder::Append, |e: ToolExecution| async move {
            Ok((e.owner() != Some("root")).then(|| "only root may call t".to_owned()))
        })
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(message(&outcome), "only root may call t");
}

#[tokio::test]
async fn step3_a_failing_or_panicking_guard_is_a_tool_error() {
    for panics in [false, true] {
        let registry = registry_with(returning("t", json!(1)));
        registry
            .register_guard(None, ListenerOrder::Append, move |_e: ToolExecution| async move {
                if panics {
                    panic!("guard bug");
                }
                Err::<Option<String>, BoxError>("guard store down".into())
            })
            .keep();
        let outcome = run_t(&registry).await;
        assert_eq!(code(&outcome), Some("TOOL_ERROR"), "panics={panics}");
        assert!(message(&outcome).starts_with("guard failed"));
    }
}

#[tokio::test]
async fn step3_a_veto_wins_over_a_failing_guard_whatever_the_order() {
    let registry = registry_with(returning("t", json!(1)));
    registry
        .register_guard(None, ListenerOrder::Append, |_e| async {
            Err::<Option<String>, BoxError>("boom".into())
        })
        .keep();
    registry
        .register_guard(None, ListenerOrder::Append, |_e| async { Ok(Some("veto".to_owned())) })
        .keep();
    assert_eq!(code(&run_t(&registry).await), Some("DENIED"));
}

#[tokio::test]
async fn step4_a_caller_cancelled_during_the_guards_ends_before_dispatch() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    registry
        .register_guard(None, ListenerOrder::Append, move |_e: ToolExecution| {
            let c = c.clone();
            async move {
                c.cancel();
                Ok(None)
            }
        })
        .keep();
    let outcome = registry
        .execute(call("c", "t", "{}"), &registry.seal(None), &cancel)
        .await;
    assert_eq!(code(&outcome), Some("ABORTED_BEFORE_DISPATCH"));
    assert!(!trail.entries().contains(&"body".to_owned()));
}

#[tokio::test]
async fn step5_unparsable_arguments_are_invalid_and_listeners_saw_the_raw_text() {
    let registry = registry_with(echo("t", object_schema()));
    let seen = Trail::default();
    let s = seen.clone();
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, next: PreExecuteNext| {
                s.push(e.arguments().to_string());
                next.run()
            },
        )
        .keep();
    let outcome = run(&registry, None, call("c", "t", "{\"path\": ")).await;
    assert_eq!(code(&outcome), Some("INVALID_ARGS"));
    assert!(message(&outcome).starts_with("arguments are not valid JSON"));
    assert_eq!(seen.entries(), [json!("{\"path\": ").to_string()]);
}

#[tokio::test]
async fn step5_arguments_that_are_not_an_object_are_invalid() {
    let registry = registry_with(echo("t", object_schema()));
    let outcome = run(&registry, None, call("c", "t", "[1]")).await;
    assert_eq!(code(&outcome), Some("INVALID_ARGS"));
    assert_eq!(message(&outcome), "arguments must be a JSON object, found an array");
}

#[tokio::test]
async fn step5_schema_violations_name_every_failing_instance_path() {
    let registry = registry_with(echo("read", path_schema()));
    let outcome = run(&registry, None, call("c", "read", r#"{"path": 7, "limit": 0}"#)).await;
    assert_eq!(code(&outcome), Some("INVALID_ARGS"));
    let text = message(&outcome);
    assert!(text.contains("at /path"), "{text}");
    assert!(text.contains("at /limit"), "{text}");
    let missing = run(&registry, None, call("d", "read", r#"{"extra": true}"#)).await;
    assert!(message(&missing).contains("at /:"), "{}", message(&missing));
}

#[tokio::test]
async fn step5_runs_after_the_guards_so_policy_sees_invalid_calls_first() {
    let registry = registry_with(echo("read", path_schema()));
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            pre_decides(ToolPreDecision::Deny("policy first".into())),
        )
        .keep();
    assert_eq!(
        code(&run(&registry, None, call("c", "read", "{}")).await),
        Some("DENIED")
    );
}
