//! SPEC §8: decisions and the approval capability.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use tether_tools::{
    ApprovalAnswer, ApprovalRequest, BoxError, ListenerOrder, PendingApproval, ToolPreDecision, ToolRegistry,
};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

fn asking_registry(reason: Option<&str>) -> ToolRegistry {
    let registry = registry_with(returning("t", json!("ran")));
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            pre_decides(ToolPreDecision::Ask(reason.map(str::to_owned))),
        )
        .keep();
    registry
}

/// The approval channel's receiving end, `registry`'s answerer: the test
/// answers (or drops, or ignores) each request.
fn answered_by_the_test(registry: &ToolRegistry) -> UnboundedReceiver<PendingApproval> {
    let (answerer, requests) = tether_tools::pipeline::approval::channel();
    registry.set_approval_answerer(answerer).keep();
    requests
}

#[tokio::test]
async fn approved_continues_to_dispatch() {
    let registry = asking_registry(None);
    registry
        .set_approval_answerer(answering(ApprovalAnswer::Approved))
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(outcome.value(), &json!("ran"));
}

#[tokio::test]
async fn the_answerer_sees_the_call_and_the_ask_reason() {
    let registry = asking_registry(Some("writes outside the workspace"));
    let seen = Trail::default();
    let s = seen.clone();
    registry
        .set_approval_answerer(move |r: ApprovalRequest| {
            s.push(format!(
                "{} {} {:?}",
                r.execution().call_id(),
                r.execution().name(),
                r.reason()
            ));
            futures::future::ready(Ok::<_, BoxError>(ApprovalAnswer::Approved))
        })
        .keep();
    run(&registry, None, call("c-1", "t", "{}")).await;
    assert_eq!(seen.entries(), ["c-1 t Some(\"writes outside the workspace\")"]);
}

#[tokio::test]
async fn the_answerer_sees_the_argument_check_step_5_will_make() {
    let registry = registry_with(echo("read", path_schema()));
    registry
        .register_pre_execute(None, ListenerOrder::Append, pre_decides(ToolPreDecision::Ask(None)))
        .keep();
    let seen = Trail::default();
    let s = seen.clone();
    registry
        .set_approval_answerer(move |r: ApprovalRequest| {
            let check = match r.argument_check() {
                Ok(()) => "ok".to_owned(),
                Err(message) => format!("invalid: {message}"),
            };
            s.push(format!("{} {check}", r.execution().call_id()));
            futures::future::ready(Ok::<_, BoxError>(ApprovalAnswer::Approved))
        })
        .keep();
    let good = run(&registry, None, call("good", "read", r#"{"path": "a"}"#)).await;
    assert_eq!(good.value(), &json!({"path": "a"}));
    let bad = run(&registry, None, call("bad", "read", r#"{"limit": 0}"#)).await;
    assert_eq!(code(&bad), Some("INVALID_ARGS"));
    let entries = seen.entries();
    assert_eq!(
        entries,
        ["good ok".to_owned(), format!("bad invalid: {}", message(&bad))],
        "the answerer saw the message the call then fails with"
    );
}

#[tokio::test]
async fn rejected_is_denied_and_carries_the_humans_reason() {
    let registry = asking_registry(None);
    registry
        .set_approval_answerer(answering(ApprovalAnswer::Rejected {
            reason: Some("use the staging bucket".into()),
        }))
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("DENIED"));
    assert_eq!(message(&outcome), "rejected by the approver: use the staging bucket");
}

#[tokio::test]
async fn rejected_without_a_reason_is_denied() {
    let registry = asking_registry(None);
    registry
        .set_approval_answerer(answering(ApprovalAnswer::Rejected { reason: None }))
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("DENIED"));
    assert_eq!(message(&outcome), "rejected by the approver");
}

#[tokio::test]
async fn no_answerer_installed_is_unavailable_never_denied() {
    let registry = asking_registry(None);
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("UNAVAILABLE"));
    assert!(message(&outcome).contains("no approval answerer"));
    assert!(!message(&outcome).contains("reject"));
}

#[tokio::test]
async fn an_answerer_that_fails_or_panics_is_unavailable() {
    for panics in [false, true] {
        let registry = asking_registry(None);
        registry
            .set_approval_answerer(move |_r: ApprovalRequest| async move {
                if panics {
                    panic!("answerer bug");
                }
                Err::<ApprovalAnswer, BoxError>("prompt crashed".into())
            })
            .keep();
        let outcome = run_t(&registry).await;
        assert_eq!(code(&outcome), Some("UNAVAILABLE"), "panics={panics}");
        assert!(message(&outcome).contains("the answerer failed"));
    }
}

#[tokio::test]
async fn an_answerer_that_says_unavailable_is_unavailable_with_its_reason() {
    let registry = asking_registry(None);
    registry
        .set_approval_answerer(answering(ApprovalAnswer::Unavailable {
            reason: "approval timed out".into(),
        }))
        .keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("UNAVAILABLE"));
    assert_eq!(message(&outcome), "approval timed out");
}

#[tokio::test]
async fn a_request_dropped_unanswered_is_unavailable() {
    let registry = asking_registry(None);
    let mut requests = answered_by_the_test(&registry);
    let cancel = CancellationToken::new();
    let (outcome, ()) = run_alongside(&registry, call("c", "t", "{}"), &cancel, async {
        let pending = requests.recv().await.unwrap();
        drop(pending);
    })
    .await;
    assert_eq!(code(&outcome), Some("UNAVAILABLE"));
    assert!(message(&outcome).contains("dropped unanswered"));
}

#[tokio::test]
async fn a_closed_approval_channel_is_unavailable() {
    let registry = asking_registry(None);
    let (answerer, requests) = tether_tools::pipeline::approval::channel();
    drop(requests);
    registry.set_approval_answerer(answerer).keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("UNAVAILABLE"));
}

#[tokio::test]
async fn unloading_the_answerer_while_a_call_waits_is_unavailable() {
    let registry = asking_registry(None);
    let (answerer, mut requests) = tether_tools::pipeline::approval::channel();
    let installed = registry.set_approval_answerer(answerer);
    let cancel = CancellationToken::new();
    let (outcome, _pending) = run_alongside(&registry, call("c", "t", "{}"), &cancel, async {
        let pending = requests.recv().await.unwrap();
        installed.dispose();
        pending
    })
    .await;
    assert_eq!(code(&outcome), Some("UNAVAILABLE"));
    assert!(message(&outcome).contains("unloaded"));
    assert!(!registry.has_approval_answerer());
}

#[tokio::test]
async fn replacing_the_answerer_unloads_the_previous_one() {
    let registry = asking_registry(None);
    let mut requests = answered_by_the_test(&registry);
    let cancel = CancellationToken::new();
    let (outcome, _pending) = run_alongside(&registry, call("c", "t", "{}"), &cancel, async {
        let pending = requests.recv().await.unwrap();
        registry
            .set_approval_answerer(answering(ApprovalAnswer::Approved))
            .keep();
        pending
    })
    .await;
    assert_eq!(code(&outcome), Some("UNAVAILABLE"));
    // Later calls go to the new answerer.
    assert!(!run(&registry, None, call("d", "t", "{}")).await.is_error());
}

#[tokio::test(start_paused = true)]
async fn an_answerer_that_times_out_is_unavailable_with_approval_timed_out() {
    let registry = asking_registry(None);
    registry.set_approval_timeout(Some(Duration::from_secs(120)));
    let (answerer, _requests) = tether_tools::pipeline::approval::channel();
    registry.set_approval_answerer(answerer).keep();
    let outcome = run_t(&registry).await;
    assert_eq!(code(&outcome), Some("UNAVAILABLE"));
    assert_eq!(message(&outcome), "approval timed out after 120 s");
}

#[tokio::test]
async fn cancelling_the_caller_while_waiting_is_aborted_before_dispatch() {
    let registry = asking_registry(None);
    let mut requests = answered_by_the_test(&registry);
    let cancel = CancellationToken::new();
    let (outcome, _pending) = run_alongside(&registry, call("c", "t", "{}"), &cancel, async {
        let pending = requests.recv().await.unwrap();
        cancel.cancel();
        pending
    })
    .await;
    assert_eq!(code(&outcome), Some("ABORTED_BEFORE_DISPATCH"));
}

#[tokio::test]
async fn several_calls_may_wait_for_approval_at_once() {
    let registry = asking_registry(None);
    let mut requests = answered_by_the_test(&registry);
    let view = registry.seal(None);
    let cancel = CancellationToken::new();
    let calls =
        futures::future::join_all((0..3).map(|i| registry.execute(call(&format!("c{i}"), "t", "{}"), &view, &cancel)));
    let answers = async {
        let mut pending = Vec::new();
        for _ in 0..3 {
            pending.push(requests.recv().await.unwrap());
        }
        // All three are waiting at once; answer them in reverse.
        for (i, p) in pending.into_iter().rev().enumerate() {
            let answer = if i == 0 {
                ApprovalAnswer::Rejected { reason: None }
            } else {
                ApprovalAnswer::Approved
            };
            p.reply.send(answer).unwrap();
        }
    };
    let (outcomes, ()) = tokio::join!(calls, answers);
    let codes: Vec<_> = outcomes.iter().map(code).collect();
    assert_eq!(codes, [None, None, Some("DENIED")]);
}

#[tokio::test]
async fn an_answerer_that_panics_before_its_future_is_unavailable_and_the_next_call_is_asked() {
    let registry = asking_registry(None);
    registry
        .set_approval_answerer(|r: ApprovalRequest| {
            panic_now_if_boom(r.execution(), "answerer");
            futures::future::ready(Ok::<_, BoxError>(ApprovalAnswer::Approved))
        })
        .keep();
    let (boom, fine) = boom_then_fine(&registry).await;
    assert_eq!(code(&boom), Some("UNAVAILABLE"));
    assert_eq!(
        message(&boom),
        "approval unavailable: the answerer failed: panicked: answerer panicked before returning its future"
    );
    assert_eq!(fine.value(), &json!("ran"));
}
