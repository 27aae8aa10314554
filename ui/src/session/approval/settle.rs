//! A request's last answer, made the engine's: recorded in the call's
//! trail, said on every screen, and told to the notify command.

use std::sync::Arc;
use std::time::Instant;

use tether_tools::{ApprovalAnswer, ToolExecution};
use tokio::sync::oneshot;

use super::closing::CloseOnDrop;
use super::{describe, outcome_word};
use crate::session::events::{Answered, AppEvent, PromptReply, Stage};
use crate::session::provenance::{DecisionLog, TrailEntry};

/// The engine's answer for the reply the request's slot received (or lost:
/// the slot was dropped unanswered).
pub(super) fn settle(
    reply: Result<Answered, oneshot::error::RecvError>,
    execution: &ToolExecution,
    log: &DecisionLog,
    guard: &mut CloseOnDrop,
    asked: Instant,
) -> ApprovalAnswer {
    let Ok(Answered { reply, by, group }) = reply else {
        log.record(execution, TrailEntry::NoAnswerer);
        return ApprovalAnswer::Unavailable {
            reason: "approval unavailable: the prompt was closed".to_owned(),
        };
    };
    let said = describe(&reply);
    if let Some(of) = group {
        log.record(execution, TrailEntry::AnsweredInGroup { of });
    }
    guard.ended = Some((outcome_word(&reply), Arc::clone(&by)));
    let human = |approved, reason| TrailEntry::Human {
        approved,
        reason,
        by: Arc::clone(&by),
        waited: asked.elapsed(),
    };
    let to_guards = |guard: &CloseOnDrop| {
        guard.events.send(AppEvent::Stage {
            execution: execution.clone(),
            stage: Stage::Guards,
            at: Instant::now(),
        });
    };
    let answer = match reply {
        PromptReply::Approve | PromptReply::ApproveAlways { .. } => {
            to_guards(guard);
            log.record(execution, human(true, None));
            // A human who answered by adding a rule: both are the record.
            if let PromptReply::ApproveAlways { rule } = reply {
                log.record(execution, TrailEntry::AlwaysRule { rule });
            }
            ApprovalAnswer::Approved
        }
        PromptReply::ApproveEdited { arguments } => {
            to_guards(guard);
            log.record(execution, human(true, None));
            log.record(
                execution,
                TrailEntry::Edited {
                    from: Arc::new(execution.arguments().clone()),
                    to: Arc::new(arguments.clone()),
                    by: Arc::clone(&by),
                },
            );
            ApprovalAnswer::ApprovedWithEdits { arguments }
        }
        PromptReply::Reject { reason } => {
            log.record(execution, human(false, reason.clone()));
            ApprovalAnswer::Rejected { reason }
        }
        PromptReply::Unavailable { reason } => {
            log.record(execution, TrailEntry::NoAnswerer);
            ApprovalAnswer::Unavailable { reason }
        }
    };
    guard.events.send(AppEvent::ApprovalAnswered {
        id: guard.id,
        by,
        answer: said,
    });
    answer
}
