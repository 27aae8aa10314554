//! How an answer and a wait are said: in the events pane, to a notify
//! command, and in a timeout's reason.

use std::time::Duration;

use crate::session::events::PromptReply;

/// How an answer is said in the events pane and to a notify command.
pub fn describe(reply: &PromptReply) -> String {
    match reply {
        PromptReply::Approve => "approved".to_owned(),
        PromptReply::ApproveEdited { .. } => "approved with edits".to_owned(),
        PromptReply::ApproveAlways { rule } => format!("approved by the always-rule {}", rule.describe()),
        PromptReply::Reject { reason: Some(r) } => format!("rejected ({r})"),
        PromptReply::Reject { reason: None } => "rejected".to_owned(),
        PromptReply::Unavailable { reason } => format!("closed ({reason})"),
    }
}

/// How the notify command's `approval/closed` says an answer.
pub(super) fn outcome_word(reply: &PromptReply) -> &'static str {
    match reply {
        PromptReply::Approve | PromptReply::ApproveAlways { .. } => "approved",
        // What runs is not what the model asked: the journal says the same.
        PromptReply::ApproveEdited { .. } => "approved with edits",
        PromptReply::Reject { .. } => "rejected",
        PromptReply::Unavailable { .. } => "closed",
    }
}

/// "60 s", or "250 ms" under a second.
pub(super) fn span(timeout: Duration) -> String {
    if timeout >= Duration::from_secs(1) && timeout.subsec_millis() == 0 {
        format!("{} s", timeout.as_secs())
    } else {
        format!("{} ms", timeout.as_millis())
    }
}
