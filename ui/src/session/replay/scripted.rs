//! The answer an approval script gives in place of a human (headless replay
//! and headless serve), recorded in the decision trail as a human's would be.

use std::sync::Arc;
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
    recorded_answer(request, script, timeout, log, &[]).await
}

/// The answer a script gives for a call a journal recorded: a recorded
/// approval by as many people as the call needs now (`recorded`, each
/// answerer as the journal's `approvers` names it, `human@main`) stands
/// for all of them, as a replay has nobody to ask.
pub async fn recorded_answer(
    request: &ApprovalRequest,
    script: ApprovalScript,
    timeout: Duration,
    log: &DecisionLog,
    recorded: &[Arc<str>],
) -> ApprovalAnswer {
    let execution = request.execution();
    // As the console does for its human: a call whose arguments fail its
    // schema fails `INVALID_ARGS` at the argument check whatever the answer,
    // so the script is not asked and nothing records an answer.
    if request.argument_check().is_err() {
        log.record(execution, TrailEntry::NotAskedInvalidArgs);
        return ApprovalAnswer::Approved;
    }
    let several = several(request, log);
    if let Some(needed) = several {
        log.record(execution, TrailEntry::NeedsApprovals { of: needed });
    }
    match script {
        ApprovalScript::Named(NamedAnswer::Approve)
            if several.is_some_and(|needed| recorded.len() >= usize::from(needed)) =>
        {
            for approver in recorded {
                let by = approver.strip_prefix("human@").unwrap_or(approver);
                log.record(
                    execution,
                    TrailEntry::Human {
                        approved: true,
                        reason: None,
                        by: by.into(),
                        waited: Duration::ZERO,
                    },
                );
            }
            ApprovalAnswer::Approved
        }
        ApprovalScript::Named(NamedAnswer::Approve) if let Some(needed) = several => {
            // The two-person rule: a script is one answerer at most, and
            // nobody else answers a scripted console. Its approval is
            // recorded as one; the call is not approved.
            log.record(
                execution,
                TrailEntry::Human {
                    approved: true,
                    reason: None,
                    by: SCRIPTED.into(),
                    waited: Duration::ZERO,
                },
            );
            log.record(execution, TrailEntry::NoAnswerer);
            ApprovalAnswer::Unavailable {
                reason: format!(
                    "approval unavailable: this call needs {needed} approvals from distinct answerers, and a scripted answer counts as one at most"
                ),
            }
        }
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
            // The script's wait, exactly: a replay records the same every time.
            log.record(execution, TrailEntry::ApprovalTimedOut { waited: timeout });
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

/// How many distinct answerers must approve the call, when more than one
/// (the rule that asked it says so: an ask's `"approvals"`).
fn several(request: &ApprovalRequest, log: &DecisionLog) -> Option<u8> {
    let execution = request.execution();
    let asker = log.with_trail(
        &crate::session::provenance::CallKey::of(execution),
        crate::session::provenance::asker,
    );
    let needed = log.standing().approvals(execution, asker.as_deref()).get();
    (needed > 1).then_some(needed)
}
