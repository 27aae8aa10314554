//! SPEC §7 step 6: the dispatch — execute wrappers around the body, the
//! body's failures, and the caller's cancellation before and during it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tether_tools::{
    BoxError, ExecuteError, ExecuteNext, ListenerOrder, Tool, ToolContext, ToolDispatch, ToolExecution,
    ToolExecutionOutcome, ToolRegistry, timeout_wrapper,
};
use tokio_util::sync::CancellationToken;

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

#[tokio::test]
async fn step6_cancelling_the_caller_while_the_body_runs_is_aborted() {
    let registry = registry_with(waits_for_cancellation("w"));
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
    let outcome = cancelled_once_started(&registry, started_rx).await;
    assert_eq!(code(&outcome), Some("ABORTED"));
}

#[tokio::test(start_paused = true)]
async fn step6_a_wrapper_may_replace_the_token_with_a_deadline() {
    let registry = registry_with(waits_for_cancellation("w"));
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
    let outcome = cancelled_once_started(&registry, started_rx).await;
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
    let outcome = run_t(&registry).await;
    assert_eq!(outcome.value(), &json!("cached"));
    assert!(!trail.entries().contains(&"body".to_owned()));
    assert!(!trail.entries().contains(&"execute".to_owned()));
}

#[tokio::test]
async fn step6_a_failing_or_panicking_wrapper_is_a_tool_error() {
    for panics in [false, true] {
        let registry = registry_with(returning("t", json!(1)));
        registry
            .register_execute(None, ListenerOrder::Append, move |_e, _d, _n: ExecuteNext| async move {
                if panics {
                    panic!("wrapper bug");
                }
                Err::<Value, ExecuteError>(ExecuteError::failed("wrapper refused"))
            })
            .keep();
        let outcome = run_t(&registry).await;
        assert_eq!(code(&outcome), Some("TOOL_ERROR"));
        let expected = if panics { "wrapper bug" } else { "wrapper refused" };
        assert!(message(&outcome).contains(expected), "{}", message(&outcome));
    }
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
    let (outcome, ()) = run_alongside(&registry, call("c", "t", "{}"), &cancel, async {
        waiting_rx.await.unwrap();
        cancel.cancel();
        go_tx.send(()).unwrap();
    })
    .await;
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
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("ABORTED_BEFORE_DISPATCH"));
    assert!(!trail.entries().contains(&"body".to_owned()));
}

/// Call `c` to tool `w`, its caller cancelled once `started` fires.
async fn cancelled_once_started(
    registry: &ToolRegistry,
    started: tokio::sync::oneshot::Receiver<()>,
) -> ToolExecutionOutcome {
    let cancel = CancellationToken::new();
    let (outcome, ()) = run_alongside(registry, call("c", "w", "{}"), &cancel, async {
        started.await.unwrap();
        cancel.cancel();
    })
    .await;
    outcome
}
