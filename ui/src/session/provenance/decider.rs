//! Who decided a call, from its outcome and its trail, as `decided_by`
//! names it everywhere (the journal, the link, headless output, the screen).

use std::sync::Arc;

use tether_tools::{ToolExecutionOutcome, ToolFailureCode};

use super::{ReviewVerdict, TrailEntry};

/// The decider a reviewer is, as `decided_by` names it: `reviewer:NAME`.
pub fn reviewer_decider(name: &str) -> String {
    format!("reviewer:{name}")
}

/// The console a scripted answer comes from (`--answer`, a scenario's
/// `approval`): no person answered.
pub const SCRIPTED: &str = "script";

/// Who gave an answer, as `decided_by` names it everywhere (the journal,
/// headless output, the screen): `script` for a scripted answer, else
/// `human`.
pub fn answerer(by: &str) -> &'static str {
    if by == SCRIPTED { SCRIPTED } else { "human" }
}

/// Who answered and at which console, as the journal's `decided_by` says
/// it: `human@main`, `human@attach 2 (pts/4)`, or `script`.
pub fn answered_at(by: &str) -> String {
    if by == SCRIPTED {
        SCRIPTED.to_owned()
    } else {
        format!("human@{by}")
    }
}

/// The reviewer that answered a call with `wanted`, if one did.
pub fn reviewed(trail: &[TrailEntry], wanted: ReviewVerdict) -> Option<&str> {
    trail.iter().find_map(|e| match e {
        TrailEntry::Reviewed { reviewer, verdict, .. } if *verdict == wanted => Some(&**reviewer),
        _ => None,
    })
}

/// How many distinct answerers the rule that asked a call needs, when it
/// needs more than one (the two-person rule): such a call is never handed
/// to a one-person prompt, whatever became of it.
pub fn approvals_needed(trail: &[TrailEntry]) -> Option<u8> {
    trail.iter().find_map(|e| match e {
        TrailEntry::NeedsApprovals { of } if *of > 1 => Some(*of),
        _ => None,
    })
}

/// What decided an outcome, from its code and its trail.
pub fn decided_by(outcome: &ToolExecutionOutcome, trail: &[TrailEntry]) -> String {
    let pre_rule = |wanted: &str| {
        trail.iter().find_map(|e| match e {
            TrailEntry::PreRule { id, action } if *action == wanted => Some(format!("rule:{id}")),
            _ => None,
        })
    };
    let post_rule = |wanted: &str| {
        trail.iter().find_map(|e| match e {
            TrailEntry::PostRule { id, action } if *action == wanted => Some(format!("rule:{id}")),
            _ => None,
        })
    };
    // A kept always-rule names itself, and a scripted answer is `script`:
    // "human" would say a person let the call through when nobody looked
    // at it.
    let human = trail.iter().find_map(|e| match e {
        TrailEntry::Human { by, .. } => Some(answerer(by).to_owned()),
        TrailEntry::AlwaysRule { rule } => Some(format!("always-rule: {}", rule.short())),
        _ => None,
    });
    let reviewer = |wanted: ReviewVerdict| reviewed(trail, wanted).map(reviewer_decider);
    match outcome.code() {
        None => post_rule("replace")
            .or_else(|| human.clone())
            .or_else(|| reviewer(ReviewVerdict::Allow))
            .or_else(|| pre_rule("allow"))
            .unwrap_or_else(|| "body".to_owned()),
        Some(ToolFailureCode::Denied) => pre_rule("deny")
            .or_else(|| {
                trail.iter().find_map(|e| match e {
                    TrailEntry::GuardVeto { id, .. } => Some(format!("guard:{id}")),
                    _ => None,
                })
            })
            .or_else(|| reviewer(ReviewVerdict::Deny))
            .or(human)
            .unwrap_or_else(|| "policy".to_owned()),
        Some(ToolFailureCode::Unavailable) => {
            if trail.iter().any(|e| matches!(e, TrailEntry::ApprovalTimedOut { .. })) {
                "timeout".to_owned()
            } else {
                "no-answerer".to_owned()
            }
        }
        Some(ToolFailureCode::InvalidArgs) => "schema".to_owned(),
        Some(ToolFailureCode::UnknownTool) => "registry".to_owned(),
        Some(ToolFailureCode::ToolError) => "body".to_owned(),
        Some(ToolFailureCode::Blocked) => post_rule("block").unwrap_or_else(|| "policy".to_owned()),
        Some(ToolFailureCode::Aborted) => trail
            .iter()
            .find_map(|e| match e {
                TrailEntry::Deadline { id, fired: true, .. } => Some(format!("rule:{id}")),
                _ => None,
            })
            .unwrap_or_else(|| "cancelled".to_owned()),
        Some(ToolFailureCode::AbortedBeforeDispatch) => "cancelled".to_owned(),
    }
}

/// The rule that asked a call (or sent it to a reviewer, who asked), read
/// from its trail: the last pre-execute rule that did.
pub fn asker(trail: &[TrailEntry]) -> Option<Arc<str>> {
    trail.iter().rev().find_map(|entry| match entry {
        TrailEntry::PreRule {
            id,
            action: "ask" | "review",
        } => Some(Arc::clone(id)),
        _ => None,
    })
}
