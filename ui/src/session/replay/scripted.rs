//! The answer an approval script gives in place of a human (headless replay
//! and headless serve), recorded in the decision trail as a human's would be.

use std::time::Duration;

use tether_tools::{ApprovalAnswer, ApprovalRequest};

use crate::files::scenario::{ApprovalScript, NamedAnswer};
use crate::session::provenance::{DecisionLog, SCRIPTED, TrailEntry};

/// The answer a script gives (headless replay and headless serve).
pub async fn scripted_answer(
    request: &ApprovalRequest,
    script: ApprovalScript,
    timeout: Duration,
    log: &DecisionLog,
) -> ApprovalAnswer {
    let execution = request.execution();
    // As the console does for its human: a call whose arguments fail its
    // schema fails `INVALID_ARGS` at the argument check whatever the answer,
    // so the script is not asked and nothing records an answer.
    if request.argument_check().is_err() {
        log.record(execution, TrailEntry::NotAskedInvalidArgs);
        return ApprovalAnswer::Approved;
    }
    match script {
        ApprovalScript::Named(NamedAnswer::Approve) => {
            log.record(
                execution,
                TrailEntry::Human {
                    approved: true,
                    reason: None,
                    by: SCRIPTED.into(),
                    waited: Duration::ZERO,
                },
            );
            ApprovalAnswer::Approved
        }
        ApprovalScript::Named(NamedAnswer::Reject) => {
            log.record(
                execution,
                TrailEntry::Human {
                    approved: false,
                    reason: None,
                    by: SCRIPTED.into(),
                    waited: Duration::ZERO,
                },
            );
            ApprovalAnswer::Rejected { reason: None }
        }
        ApprovalScript::Reject { reject } => {
            log.record(
                execution,
                TrailEntry::Human {
                    approved: false,
                    reason: Some(reject.clone()),
                    by: SCRIPTED.into(),
                    waited: Duration::ZERO,
                },
            );
            ApprovalAnswer::Rejected { reason: Some(reject) }
        }
        ApprovalScript::Named(NamedAnswer::Timeout) => {
            tokio::time::sleep(timeout).await;
            log.record(execution, TrailEntry::ApprovalTimedOut);
            ApprovalAnswer::Unavailable {
                reason: "approval timed out".to_owned(),
            }
        }
        ApprovalScript::Named(NamedAnswer::None) => {
            log.record(execution, TrailEntry::NoAnswerer);
            ApprovalAnswer::Unavailable {
                reason: "approval unavailable: nobody is there to answer".to_owned(),
            }
        }
    }
}
