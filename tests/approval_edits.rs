//! SPEC §8, approved with edits: the approver's arguments replace the
//! model's and go through the whole pre-execute stage again (docs/engine.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::{Value, json};
use tether_tools::{
    ApprovalAnswer, BoxError, ListenerOrder, PreExecuteNext, ToolExecution, ToolPreDecision, ToolRegistry,
};

fn command_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
        "additionalProperties": false
    })
}

/// A registry whose one tool `sh` echoes its arguments, behind a rule that
/// denies any command containing `rm`, allows `ls` and asks for the rest.
fn ruled_registry(trail: &Trail) -> ToolRegistry {
    let registry = registry_with(echo("sh", command_schema()));
    let t = trail.clone();
    registry
        .register_pre_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, _n: PreExecuteNext| {
                let command = e.arguments()["command"].as_str().unwrap_or_default().to_owned();
                t.push(format!("pre {command}"));
                let decision = if command.contains("rm") {
                    ToolPreDecision::Deny(format!("no rm: {command}"))
                } else if command == "ls" {
                    ToolPreDecision::Allow
                } else {
                    ToolPreDecision::Ask(None)
                };
                futures::future::ready(Ok::<_, BoxError>(decision))
            },
        )
        .keep();
    registry
}

fn edit_to(arguments: Value) -> ApprovalAnswer {
    ApprovalAnswer::ApprovedWithEdits { arguments }
}

#[tokio::test]
async fn the_body_runs_the_edited_arguments() {
    let trail = Trail::default();
    let registry = ruled_registry(&trail);
    registry
        .set_approval_answerer(answering(edit_to(json!({"command": "echo safe"}))))
        .keep();
    let outcome = run(&registry, None, call("c", "sh", r#"{"command":"echo risky"}"#)).await;
    assert_eq!(outcome.value(), &json!({"command": "echo safe"}));
    // Asked once on the model's arguments; the re-run's Ask is the one answered.
    assert_eq!(trail.entries(), ["pre echo risky", "pre echo safe"]);
}

#[tokio::test]
async fn a_deny_rule_still_denies_the_edited_arguments() {
    let trail = Trail::default();
    let registry = ruled_registry(&trail);
    registry
        .set_approval_answerer(answering(edit_to(json!({"command": "rm -rf /"}))))
        .keep();
    let outcome = run(&registry, None, call("c", "sh", r#"{"command":"echo hi"}"#)).await;
    assert_eq!(code(&outcome), Some("DENIED"));
    assert_eq!(message(&outcome), "the edited arguments were denied: no rm: rm -rf /");
}

#[tokio::test]
async fn an_edit_that_a_rule_allows_runs() {
    let trail = Trail::default();
    let registry = ruled_registry(&trail);
    registry
        .set_approval_answerer(answering(edit_to(json!({"command": "ls"}))))
        .keep();
    let outcome = run(&registry, None, call("c", "sh", r#"{"command":"echo hi"}"#)).await;
    assert_eq!(outcome.value(), &json!({"command": "ls"}));
}

#[tokio::test]
async fn a_guard_sees_and_can_veto_the_edited_arguments() {
    let trail = Trail::default();
    let registry = ruled_registry(&trail);
    let t = trail.clone();
    registry
        .register_guard(None, ListenerOrder::Append, move |e: ToolExecution| {
            t.push(format!("guard {} from {:?}", e.arguments(), e.edited_from()));
            let veto = (e.arguments()["command"] == "echo vetoed").then(|| "guard says no".to_owned());
            async move { Ok::<_, BoxError>(veto) }
        })
        .keep();
    registry
        .set_approval_answerer(answering(edit_to(json!({"command": "echo vetoed"}))))
        .keep();
    let outcome = run(&registry, None, call("c", "sh", r#"{"command":"echo hi"}"#)).await;
    assert_eq!(code(&outcome), Some("DENIED"));
    assert_eq!(message(&outcome), "guard says no");
    assert_eq!(
        trail.entries().last().unwrap(),
        r#"guard {"command":"echo vetoed"} from Some(Object {"command": String("echo hi")})"#
    );
}

#[tokio::test]
async fn edited_arguments_that_fail_the_schema_fail_invalid_args() {
    let trail = Trail::default();
    let registry = ruled_registry(&trail);
    registry
        .set_approval_answerer(answering(edit_to(json!({"command": "echo x", "extra": 1}))))
        .keep();
    let outcome = run(&registry, None, call("c", "sh", r#"{"command":"echo hi"}"#)).await;
    assert_eq!(code(&outcome), Some("INVALID_ARGS"));
}

#[tokio::test]
async fn a_plain_approval_leaves_the_arguments_unedited() {
    let trail = Trail::default();
    let registry = ruled_registry(&trail);
    let t = trail.clone();
    registry
        .register_guard(None, ListenerOrder::Append, move |e: ToolExecution| {
            t.push(format!("edited {:?}", e.edited_from()));
            async move { Ok::<_, BoxError>(None) }
        })
        .keep();
    registry
        .set_approval_answerer(answering(ApprovalAnswer::Approved))
        .keep();
    let outcome = run(&registry, None, call("c", "sh", r#"{"command":"echo hi"}"#)).await;
    assert_eq!(outcome.value(), &json!({"command": "echo hi"}));
    assert_eq!(trail.entries(), ["pre echo hi", "edited None"]);
}
