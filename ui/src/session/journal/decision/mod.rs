//! What decided each call, as its `tool/result` line records it
//! (docs/journal.md, "`tool/result`"), worked out from the call's trail.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tether_tools::{ToolExecutionOutcome, ToolFailureCode};

use crate::files::policy::{HELD_DENIED, UNPINNED_ASKS};
use crate::session::provenance::{ReviewVerdict, TrailEntry, reviewer_decider};

/// Who decided a call and how, as its `tool/result` line records it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The decider: `rule:<id>`, `guard:<id>`, `always-rule: <rule>`,
    /// `human@<console>`, `script`, `timeout`, `no-answerer`, `schema`,
    /// `registry`, `body`, `policy` or `cancelled`.
    pub decided_by: String,
    /// The stage that decided: `pre-execute`, `approval`, `guard`,
    /// `execute`, `post-execute`, `arguments`, `registry` or `batch`.
    pub stage: String,
    /// The id of the policy rule that decided (pre-execute, guard, execute
    /// deadline, post-execute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The id of the pre-execute rule that asked for a human.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// Whether `rule` or `asked_by` is one of Tether's implicit MCP rules
    /// rather than a rule of the policy file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub implicit_rule: bool,
    /// The always-rule that answered the approval (or that the human added
    /// while answering it), in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_rule: Option<String>,
    /// The console whose human answered (`main`, `attach 2 (pts/5)`;
    /// `script` for a scripted answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// The human's answer, `approved` or `rejected`, even when a later stage
    /// decided the outcome (a guard vetoing an approved call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The arguments the human approved in place of the model's (`answer`
    /// is then `approved with edits`); the `tool/call` line keeps the
    /// model's, so the journal holds both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_arguments: Option<Value>,
    /// The reason the human typed when rejecting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long the call waited for its approval, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    /// The reviewer a `review` rule sent the call to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// What it made of the call: `allow`, `deny`, `ask` (the human was
    /// asked) or `failed` (the human was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// The reviewer's reason, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_reason: Option<String>,
    /// How long the review took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_ms: Option<u64>,
    /// How many distinct answerers the rule that asked said must approve
    /// (an ask's `"approvals"`), when more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals_needed: Option<u8>,
    /// Every answerer who approved a call that needed several approvals,
    /// in order (`human@main`, `human@web:phone`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvers: Vec<String>,
    /// How many calls of its batch the human's one answer was for, when
    /// they were answered at once (`Y` / `N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_of: Option<usize>,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Decision {
    /// What decided `outcome`, from its trail.
    pub fn of(outcome: &ToolExecutionOutcome, trail: &[TrailEntry]) -> Self {
        let mut decision = Decision::default();
        let mut human = None;
        let mut always = None;
        let mut routed = None;
        let mut reviewed = None;
        for entry in trail {
            match entry {
                TrailEntry::PreRule { id, action: "ask" } => decision.asked_by = Some(id.to_string()),
                TrailEntry::PreRule { id, action: "review" } => routed = Some(id.to_string()),
                TrailEntry::Reviewed {
                    reviewer,
                    verdict,
                    reason,
                    elapsed,
                } => {
                    decision.reviewer = Some(reviewer.to_string());
                    decision.review = Some(verdict.as_str().to_owned());
                    decision.review_reason = Some(reason.clone());
                    decision.review_ms = Some(millis(*elapsed));
                    reviewed = Some((reviewer_decider(reviewer), *verdict));
                }
                TrailEntry::Human {
                    approved,
                    reason,
                    by,
                    waited,
                } => {
                    decision.answered_by = Some(by.to_string());
                    decision.answer = Some(if *approved { "approved" } else { "rejected" }.to_owned());
                    decision.reason.clone_from(reason);
                    decision.waited_ms = Some(millis(*waited));
                    human = Some(crate::session::provenance::answered_at(by));
                    if *approved && decision.approvals_needed.is_some() {
                        decision.approvers.push(crate::session::provenance::answered_at(by));
                    }
                }
                // The whole wait, the rule's own or the console's: after
                // any approvals that counted on the way (the two-person rule).
                TrailEntry::ApprovalTimedOut { waited } => decision.waited_ms = Some(millis(*waited)),
                TrailEntry::NeedsApprovals { of } => decision.approvals_needed = Some(*of),
                TrailEntry::AnsweredInGroup { of } => decision.group_of = Some(*of),
                TrailEntry::Edited { to, .. } => {
                    decision.answer = Some("approved with edits".to_owned());
                    decision.edited_arguments = Some(Value::clone(to));
                }
                TrailEntry::AlwaysRule { rule } => {
                    decision.always_rule = Some(rule.describe());
                    decision.answer = Some("approved".to_owned());
                    // A rule the human added while answering: the wait was the human's.
                    decision.waited_ms.get_or_insert(0);
                    always = Some(format!("always-rule: {}", rule.short()));
                }
                _ => {}
            }
        }
        // Fewer approvals than needed are not the call's approval: it was
        // rejected, or nobody else approved in time.
        if let Some(needed) = decision.approvals_needed
            && decision.answer.as_deref() == Some("approved")
            && decision.approvers.len() < usize::from(needed)
        {
            decision.answer = Some(format!("{} of {needed} approvals", decision.approvers.len()));
        }
        let find = |pick: &dyn Fn(&TrailEntry) -> Option<String>| trail.iter().find_map(pick);
        let pre = |wanted: &'static str| {
            find(&move |e| match e {
                TrailEntry::PreRule { id, action } if *action == wanted => Some(id.to_string()),
                _ => None,
            })
        };
        let post = |wanted: &'static str| {
            find(&move |e| match e {
                TrailEntry::PostRule { id, action } if *action == wanted => Some(id.to_string()),
                _ => None,
            })
        };
        let answered = human.or(always);
        // A reviewer that sent the call on: the rule that routed it asked.
        if matches!(reviewed, Some((_, ReviewVerdict::Ask | ReviewVerdict::Failed))) {
            decision.asked_by.clone_from(&routed);
        }
        let reviewer = |wanted: ReviewVerdict| {
            reviewed
                .clone()
                .filter(|(_, verdict)| *verdict == wanted)
                .map(|(by, _)| (by, "review".to_owned(), routed.clone()))
        };
        let by_rule = |stage: &str, id: String| (format!("rule:{id}"), stage.to_owned(), Some(id));
        let plain = |by: &str, stage: &str| (by.to_owned(), stage.to_owned(), None);
        let (decided_by, stage, rule) = match outcome.code() {
            None => match (post("replace"), answered, pre("allow")) {
                (Some(id), _, _) => by_rule("post-execute", id),
                (None, Some(by), _) => (by, "approval".to_owned(), None),
                (None, None, allowed) => match (reviewer(ReviewVerdict::Allow), allowed) {
                    (Some(by), _) => by,
                    (None, Some(id)) => by_rule("pre-execute", id),
                    (None, None) => plain("body", "execute"),
                },
            },
            Some(ToolFailureCode::Denied) => {
                let guard = find(&|e| match e {
                    TrailEntry::GuardVeto { id, .. } => Some(id.to_string()),
                    _ => None,
                });
                match (pre("deny"), guard, reviewer(ReviewVerdict::Deny), answered) {
                    (Some(id), ..) => by_rule("pre-execute", id),
                    (None, Some(id), ..) => (format!("guard:{id}"), "guard".to_owned(), Some(id)),
                    (None, None, Some(by), _) => by,
                    (None, None, None, Some(by)) => (by, "approval".to_owned(), None),
                    (None, None, None, None) => plain("policy", "pre-execute"),
                }
            }
            Some(ToolFailureCode::Unavailable)
                if trail.iter().any(|e| matches!(e, TrailEntry::ApprovalTimedOut { .. })) =>
            {
                plain("timeout", "approval")
            }
            Some(ToolFailureCode::Unavailable) => plain("no-answerer", "approval"),
            Some(ToolFailureCode::InvalidArgs) => plain("schema", "arguments"),
            Some(ToolFailureCode::UnknownTool) => plain("registry", "registry"),
            Some(ToolFailureCode::ToolError) => plain("body", "execute"),
            Some(ToolFailureCode::Blocked) => match post("block") {
                Some(id) => by_rule("post-execute", id),
                None => plain("policy", "post-execute"),
            },
            Some(ToolFailureCode::Aborted) => match find(&|e| match e {
                TrailEntry::Deadline { id, fired: true, .. } => Some(id.to_string()),
                _ => None,
            }) {
                Some(id) => by_rule("execute", id),
                None => plain("cancelled", "execute"),
            },
            Some(ToolFailureCode::AbortedBeforeDispatch) => plain("cancelled", "batch"),
        };
        decision.implicit_rule = [&rule, &decision.asked_by]
            .into_iter()
            .flatten()
            .any(|id| id == HELD_DENIED || id == UNPINNED_ASKS);
        decision.decided_by = decided_by;
        decision.stage = stage;
        decision.rule = rule;
        decision
    }

    /// The decision a `tool/result` line recorded, read from the fields it
    /// holds beyond the engine's; `None` for a journal written before
    /// decisions were recorded.
    pub fn recorded(fields: &Map<String, Value>) -> Option<Self> {
        fields.get("decided_by")?;
        serde_json::from_value(Value::Object(fields.clone())).ok()
    }

    /// Who decided, as a replay shows it: every approver of a call that
    /// needed several (`human@main + human@web:phone`), else `decided_by`.
    pub fn deciders(&self) -> String {
        match self.approvers.len() {
            0 | 1 => self.decided_by.clone(),
            _ if self.answer.as_deref() == Some("approved") => self.approvers.join(" + "),
            _ => self.decided_by.clone(),
        }
    }

    /// Whether `filter` names this decider: the whole of it (`rule:ask-all`)
    /// or its kind (`human`, `rule`, `guard`, `always-rule`), case-insensitively.
    pub fn decider_matches(decided_by: &str, filter: &str) -> bool {
        let decider = decided_by.to_ascii_lowercase();
        let filter = filter.to_ascii_lowercase();
        decider == filter
            || decider
                .strip_prefix(&filter)
                .is_some_and(|rest| rest.starts_with(['@', ':']))
    }
}

#[cfg(test)]
mod tests;
