//! SPEC §7: one call through the pipeline, one test (at least) per row of the
//! step table, plus failures and panics in every listener kind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tether_tools::{
    AgentPipelineScope, ApprovalAnswer, BoxError, ExecuteError, ExecuteNext, ExecutedResult, ListenerOrder,
    PostExecuteNext, PreExecuteNext, Tool, ToolContext, ToolDispatch, ToolExecution, ToolExecutionOutcome,
    ToolPostDecision, ToolPreDecision, ToolRegistry, timeout_wrapper,
};
use tokio_util::sync::CancellationToken;

/// A registry whose every stage writes into `trail`, with one tool `t` whose
/// body records that it ran.
fn traced_registry(trail: &Trail) -> ToolRegistry {
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
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
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
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
    assert!(!outcome.is_error());
    assert_eq!(
        trail.entries(),
        ["pre", "asked", "guard", "execute", "body", "post", "result:ok"]
    );
}

#[tokio::test]
async fn step2_a_failing_pre_listener_is_a_tool_error() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!(1)), None).keep();
    registry
        .register_pre_execute(None, ListenerOrder::Append, |_e, _n| async {
            Err::<ToolPreDecision, BoxError>("policy store down".into())
        })
        .keep();
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
    assert_eq!(code(&outcome), Some("TOOL_ERROR"));
    assert!(message(&outcome).contains("policy store down"), "{}", message(&outcome));
}

#[tokio::test]
async fn step2_a_panicking_pre_listener_is_a_tool_error() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!(1)), None).keep();
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
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
    assert_eq!(code(&outcome), Some("TOOL_ERROR"));
    assert!(message(&outcome).contains("pre bug"));
}

#[tokio::test]
async fn step2_listeners_run_in_registration_order_and_prepend_goes_first() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!(1)), None).keep();
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
    run(&registry, None, call("c", "t", "{}")).await;
    assert_eq!(trail.entries(), ["first", "a", "b"]);
}

#[tokio::test]
async fn an_outer_listener_can_override_what_later_listeners_decided() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!(1)), None).keep();
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
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
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
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!(1)), None).keep();
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
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
    assert_eq!(code(&outcome), Some("DENIED"));
    assert_eq!(message(&outcome), "first veto");
    assert!(!trail.entries().contains(&"body".to_owned()));
}

#[tokio::test]
async fn step3_guards_run_after_an_allow_and_can_veto_it() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!(1)), None).keep();
    registry
        .register_pre_execute(None, ListenerOrder::Append, pre_decides(ToolPreDecision::Allow))
        .keep();
    registry
        .register_guard(None, ListenerOrder::Append, |e: ToolExecution| async move {
            Ok((e.owner() != Some("root")).then(|| "only root may call t".to_owned()))
        })
        .keep();
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
    assert_eq!(message(&outcome), "only root may call t");
}

#[tokio::test]
async fn step3_a_failing_or_panicking_guard_is_a_tool_error() {
    for panics in [false, true] {
        let registry = ToolRegistry::new();
        register(&registry, returning("t", json!(1)), None).keep();
        registry
            .register_guard(None, ListenerOrder::Append, move |_e: ToolExecution| async move {
                if panics {
                    panic!("guard bug");
                }
                Err::<Option<String>, BoxError>("guard store down".into())
            })
            .keep();
        let outcome = run(&registry, None, call("c", "t", "{}")).await;
        assert_eq!(code(&outcome), Some("TOOL_ERROR"), "panics={panics}");
        assert!(message(&outcome).starts_with("guard failed"));
    }
}

#[tokio::test]
async fn step3_a_veto_wins_over_a_failing_guard_whatever_the_order() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!(1)), None).keep();
    registry
        .register_guard(None, ListenerOrder::Append, |_e| async {
            Err::<Option<String>, BoxError>("boom".into())
        })
        .keep();
    registry
        .register_guard(None, ListenerOrder::Append, |_e| async { Ok(Some("veto".to_owned())) })
        .keep();
    assert_eq!(code(&run(&registry, None, call("c", "t", "{}")).await), Some("DENIED"));
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
    let registry = ToolRegistry::new();
    register(&registry, echo("t", object_schema()), None).keep();
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
    let registry = ToolRegistry::new();
    register(&registry, echo("t", object_schema()), None).keep();
    let outcome = run(&registry, None, call("c", "t", "[1]")).await;
    assert_eq!(code(&outcome), Some("INVALID_ARGS"));
    assert_eq!(message(&outcome), "arguments must be a JSON object, found an array");
}

#[tokio::test]
async fn step5_schema_violations_name_every_failing_instance_path() {
    let registry = ToolRegistry::new();
    register(&registry, echo("read", path_schema()), None).keep();
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
    let registry = ToolRegistry::new();
    register(&registry, echo("read", path_schema()), None).keep();
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

fn failing_tool(name: &str, panics: bool) -> Tool {
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

#[tokio::test]
async fn step6_a_body_error_or_panic_is_a_tool_error_and_post_still_runs() {
    for (panics, expected) in [(false, "disk full"), (true, "tool panicked: body bug")] {
        let trail = Trail::default();
        let registry = traced_registry(&trail);
        register(&registry, failing_tool("f", panics), None).keep();
        let outcome = run(&registry, None, call("c", "f", "{}")).await;
        assert_eq!(code(&outcome), Some("TOOL_ERROR"));
        assert_eq!(message(&outcome), expected);
        assert_eq!(outcome.value(), &json!({"message": expected}));
        assert_eq!(
            trail.entries(),
            ["pre", "guard", "execute", "post", "result:TOOL_ERROR"]
        );
    }
}

fn waits_for_cancellation(name: &str) -> Tool {
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

#[tokio::test]
async fn step6_cancelling_the_caller_while_the_body_runs_is_aborted() {
    let registry = ToolRegistry::new();
    register(&registry, waits_for_cancellation("w"), None).keep();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started = std::sync::Mutex::new(Some(started_tx));
    registry
        .register_execute(
            None,
            ListenerOrder::Append,
            move |_e, d: ToolDispatch, next: ExecuteNext| {
                if let Some(tx) = started.lock().unwrap().take() {
                    let _ = tx.send(());
                }
                next.run(d)
            },
        )
        .keep();
    let cancel = CancellationToken::new();
    let view = registry.seal(None);
    let running = registry.execute(call("c", "w", "{}"), &view, &cancel);
    let canceller = async {
        started_rx.await.unwrap();
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(running, canceller);
    assert_eq!(code(&outcome), Some("ABORTED"));
}

#[tokio::test(start_paused = true)]
async fn step6_a_wrapper_may_replace_the_token_with_a_deadline() {
    let registry = ToolRegistry::new();
    register(&registry, waits_for_cancellation("w"), None).keep();
    registry
        .register_execute(None, ListenerOrder::Append, timeout_wrapper(Duration::from_millis(250)))
        .keep();
    let outcome = run(&registry, None, call("c", "w", "{}")).await;
    assert_eq!(code(&outcome), Some("ABORTED"));
    assert_eq!(message(&outcome), "timed out after 250 ms");
}

#[tokio::test]
async fn step6_a_replaced_token_never_shields_the_body_from_the_caller() {
    let registry = ToolRegistry::new();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started = Arc::new(std::sync::Mutex::new(Some(started_tx)));
    let body = Tool::new("w", "waits", object_schema(), move |_a: Value, ctx: ToolContext| {
        let started = Arc::clone(&started);
        async move {
            if let Some(tx) = started.lock().unwrap().take() {
                let _ = tx.send(());
            }
            ctx.cancellation().cancelled().await;
            Ok::<Value, BoxError>(json!("finished"))
        }
    });
    register(&registry, body, None).keep();
    // A wrapper that swaps in a token nobody will ever cancel.
    registry
        .register_execute(None, ListenerOrder::Append, |_e, d: ToolDispatch, next: ExecuteNext| {
            next.run(d.with_cancellation(CancellationToken::new()))
        })
        .keep();
    let cancel = CancellationToken::new();
    let view = registry.seal(None);
    let running = registry.execute(call("c", "w", "{}"), &view, &cancel);
    let canceller = async {
        started_rx.await.unwrap();
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(running, canceller);
    assert_eq!(code(&outcome), Some("ABORTED"));
}

#[tokio::test]
async fn step6_a_wrapper_that_does_not_call_next_short_circuits_the_body() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    registry
        .register_execute(None, ListenerOrder::Prepend, |_e, _d, _n: ExecuteNext| async {
            Ok::<Value, ExecuteError>(json!("cached"))
        })
        .keep();
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
    assert_eq!(outcome.value(), &json!("cached"));
    assert!(!trail.entries().contains(&"body".to_owned()));
    assert!(!trail.entries().contains(&"execute".to_owned()));
}

#[tokio::test]
async fn step6_a_failing_or_panicking_wrapper_is_a_tool_error() {
    for panics in [false, true] {
        let registry = ToolRegistry::new();
        register(&registry, returning("t", json!(1)), None).keep();
        registry
            .register_execute(None, ListenerOrder::Append, move |_e, _d, _n: ExecuteNext| async move {
                if panics {
                    panic!("wrapper bug");
                }
                Err::<Value, ExecuteError>(ExecuteError::failed("wrapper refused"))
            })
            .keep();
        let outcome = run(&registry, None, call("c", "t", "{}")).await;
        assert_eq!(code(&outcome), Some("TOOL_ERROR"));
        let expected = if panics { "wrapper bug" } else { "wrapper refused" };
        assert!(message(&outcome).contains(expected), "{}", message(&outcome));
    }
}

fn post_decides(decision: ToolPostDecision) -> impl tether_tools::PostExecuteListener {
    move |_e, _r, _n: PostExecuteNext| futures::future::ready(Ok::<_, BoxError>(decision.clone()))
}

#[tokio::test]
async fn step7_replace_swaps_a_successful_value() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!("secret")), None).keep();
    registry
        .register_post_execute(
            None,
            ListenerOrder::Append,
            post_decides(ToolPostDecision::Replace(json!("[redacted]"))),
        )
        .keep();
    assert_eq!(
        run(&registry, None, call("c", "t", "{}")).await.value(),
        &json!("[redacted]")
    );
}

#[tokio::test]
async fn step7_replace_is_ignored_on_a_failure() {
    let registry = ToolRegistry::new();
    register(&registry, failing_tool("f", false), None).keep();
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
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!("AKIA-secret")), None).keep();
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
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
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
    run(&registry, None, call("c", "t", "{}")).await;
    assert!(!trail.entries().contains(&"post".to_owned()));
}

#[tokio::test]
async fn step7_a_failing_or_panicking_post_listener_is_a_tool_error() {
    for panics in [false, true] {
        let registry = ToolRegistry::new();
        register(&registry, returning("t", json!(1)), None).keep();
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
        let outcome = run(&registry, None, call("c", "t", "{}")).await;
        assert_eq!(code(&outcome), Some("TOOL_ERROR"));
        assert!(message(&outcome).starts_with("post-execute listener failed"));
    }
}

#[tokio::test]
async fn step8_result_listeners_see_every_outcome_and_their_failures_are_contained() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!("value")), None).keep();
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
    let s = seen.clone();
    registry
        .register_result(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, o: Arc<ToolExecutionOutcome>| {
                s.push(format!("{}={}", e.call_id(), o.value()));
                async { Ok(()) }
            },
        )
        .keep();
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
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

// A callback can panic before it returns its future (work done in a plain
// `Fn` before `async`). Each kind is contained exactly as a panic inside the
// future would be, and the registry keeps working for the next call.

#[tokio::test]
async fn step2_a_pre_listener_that_panics_before_its_future_is_a_tool_error() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!("ran")), None).keep();
    registry
        .register_pre_execute(None, ListenerOrder::Append, |e: ToolExecution, next: PreExecuteNext| {
            panic_now_if_boom(&e, "pre listener");
            next.run()
        })
        .keep();
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(code(&boom), Some("TOOL_ERROR"));
    assert_eq!(
        message(&boom),
        "pre-execute listener failed: panicked: pre listener panicked before returning its future"
    );
    assert_eq!(fine.value(), &json!("ran"));
}

#[tokio::test]
async fn step3_a_guard_that_panics_before_its_future_is_a_tool_error() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!("ran")), None).keep();
    registry
        .register_guard(None, ListenerOrder::Append, |e: ToolExecution| {
            panic_now_if_boom(&e, "guard");
            async { Ok(None) }
        })
        .keep();
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(code(&boom), Some("TOOL_ERROR"));
    assert_eq!(
        message(&boom),
        "guard failed: panicked: guard panicked before returning its future"
    );
    assert_eq!(fine.value(), &json!("ran"));
}

#[tokio::test]
async fn step6_a_wrapper_that_panics_before_its_future_is_a_tool_error() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!("ran")), None).keep();
    registry
        .register_execute(
            None,
            ListenerOrder::Append,
            |e: ToolExecution, d: ToolDispatch, next: ExecuteNext| {
                panic_now_if_boom(&e, "wrapper");
                next.run(d)
            },
        )
        .keep();
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(code(&boom), Some("TOOL_ERROR"));
    assert_eq!(
        message(&boom),
        "execute wrapper panicked: wrapper panicked before returning its future"
    );
    assert_eq!(fine.value(), &json!("ran"));
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
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!("ran")), None).keep();
    registry
        .register_post_execute(
            None,
            ListenerOrder::Append,
            |e: ToolExecution, _r: ExecutedResult, next: PostExecuteNext| {
                panic_now_if_boom(&e, "post listener");
                next.run()
            },
        )
        .keep();
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(code(&boom), Some("TOOL_ERROR"));
    assert_eq!(
        message(&boom),
        "post-execute listener failed: panicked: post listener panicked before returning its future"
    );
    assert_eq!(fine.value(), &json!("ran"));
}

#[tokio::test]
async fn step8_a_result_listener_that_panics_before_its_future_is_contained_and_later_ones_still_hear() {
    let registry = ToolRegistry::new();
    register(&registry, returning("t", json!("ran")), None).keep();
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
    let s = seen.clone();
    registry
        .register_result(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, o: Arc<ToolExecutionOutcome>| {
                s.push(format!("{}={}", e.call_id(), o.value()));
                async { Ok(()) }
            },
        )
        .keep();
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(boom.value(), &json!("ran"), "observers change nothing");
    assert_eq!(fine.value(), &json!("ran"));
    assert_eq!(seen.entries(), ["boom=\"ran\"", "fine=\"ran\""]);
}

/// A wrapper that, on the first call only, tells `waiting` it holds the call
/// and then waits for `go` before handing on: a rate limiter or a delay.
fn waiting_wrapper(
    waiting: tokio::sync::oneshot::Sender<()>,
    go: tokio::sync::oneshot::Receiver<()>,
) -> impl tether_tools::ExecuteListener {
    let first = std::sync::Mutex::new(Some((waiting, go)));
    move |_e: ToolExecution, d: ToolDispatch, next: ExecuteNext| {
        let first = first.lock().unwrap().take();
        async move {
            if let Some((waiting, go)) = first {
                let _ = waiting.send(());
                let _ = go.await;
            }
            next.run(d).await
        }
    }
}

#[tokio::test]
async fn step6_a_caller_cancelled_while_a_wrapper_waits_ends_before_dispatch_without_the_body() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    let (waiting_tx, waiting_rx) = tokio::sync::oneshot::channel();
    let (go_tx, go_rx) = tokio::sync::oneshot::channel();
    registry
        .register_execute(None, ListenerOrder::Prepend, waiting_wrapper(waiting_tx, go_rx))
        .keep();
    let cancel = CancellationToken::new();
    let view = registry.seal(None);
    let running = registry.execute(call("c", "t", "{}"), &view, &cancel);
    let canceller = async {
        waiting_rx.await.unwrap();
        cancel.cancel();
        go_tx.send(()).unwrap();
    };
    let (outcome, ()) = tokio::join!(running, canceller);
    assert_eq!(code(&outcome), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(
        trail.entries(),
        ["pre", "guard", "execute", "result:ABORTED_BEFORE_DISPATCH"],
        "no body, and no post-execute: there is no result to review"
    );
}

#[tokio::test]
async fn step6_a_wrapper_that_hands_on_a_token_already_cancelled_ends_before_dispatch() {
    let trail = Trail::default();
    let registry = traced_registry(&trail);
    registry
        .register_execute(
            None,
            ListenerOrder::Prepend,
            |_e: ToolExecution, d: ToolDispatch, next: ExecuteNext| {
                // A deadline that passed while earlier wrappers ran.
                let expired = d.cancellation().child_token();
                expired.cancel();
                next.run(d.with_cancellation(expired))
            },
        )
        .keep();
    let outcome = run(&registry, None, call("c", "t", "{}")).await;
    assert_eq!(code(&outcome), Some("ABORTED_BEFORE_DISPATCH"));
    assert!(!trail.entries().contains(&"body".to_owned()));
}
