//! Tests of the parent module.

use std::sync::Arc;

use tether_tools::{AgentPipelineScope, ToolCall};

use super::*;

fn waiting(scope: Option<AgentPipelineScope>, cancellation: &CancellationToken) -> ToolExecution {
    ToolExecution::new(&ToolCall::new("c1", "poke", "{}"), scope, cancellation.clone())
}

#[test]
fn a_prompt_closed_unanswered_says_why() {
    let connection = CancellationToken::new();
    let session = AgentPipelineScope::builder()
        .label("agent0")
        .session(Arc::new(AgentConnection {
            closed: connection.clone(),
        }))
        .build_root();
    let batch = connection.child_token();
    let call = waiting(Some(session.child()), &batch);
    assert_eq!(
        why_dropped(&call),
        "the call stopped waiting (the answerer was replaced)"
    );
    batch.cancel();
    assert_eq!(why_dropped(&call), "its batch was cancelled");
    connection.cancel();
    assert_eq!(
        why_dropped(&call),
        "agent agent0 disconnected",
        "seen from a child scope too"
    );
    let replayed = CancellationToken::new();
    replayed.cancel();
    assert_eq!(why_dropped(&waiting(None, &replayed)), "its batch was cancelled");
}

#[test]
fn a_timeout_is_said_in_seconds_or_milliseconds() {
    assert_eq!(span(Duration::from_secs(60)), "60 s");
    assert_eq!(span(Duration::from_millis(250)), "250 ms");
    assert_eq!(span(Duration::from_millis(1500)), "1500 ms");
}

/// A notify command's `approval/closed` says what the journal says: an
/// approval of edited arguments is not a plain approval.
#[test]
fn an_edited_approval_closes_as_approved_with_edits() {
    let edited = PromptReply::ApproveEdited {
        arguments: serde_json::json!({"command": "ls"}),
    };
    assert_eq!(outcome_word(&edited), "approved with edits");
    assert_eq!(outcome_word(&PromptReply::Approve), "approved");
}
