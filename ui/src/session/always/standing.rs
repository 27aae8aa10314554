//! Where an always-rule stands among the policy's rules: just before the
//! rule that asked the call it was made from (after the file's own rules
//! when the policy's default asked). A rule kept in the file is written
//! there, and a rule kept for the session only is consulted there: for a
//! call that a rule before it asks, it is never reached, as in the file.

use std::sync::{Arc, Mutex, PoisonError};

use tether_tools::ToolExecution;

use crate::files::policy::{
    Action, Approvals, HELD_DENIED, Rule, UNMATCHED_ASKS, UNMATCHED_DENIED, UNMATCHED_REVIEWED, UNPINNED_ASKS,
};

/// The pre-execute rules in force, in the order they run (the implicit
/// ones included), shared by the policy's listener, which puts them in
/// force, and the answerer, which places always-rules among them.
#[derive(Clone, Debug, Default)]
pub struct Standing(Arc<Mutex<Arc<[Rule]>>>);

impl Standing {
    /// Puts `rules` in force (a policy was installed or reloaded).
    pub fn put_in_force(&self, rules: Arc<[Rule]>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = rules;
    }

    fn rules(&self) -> Arc<[Rule]> {
        Arc::clone(&self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The rule a new always-rule for a call asked by `asker` stands just
    /// before. An MCP tool not pinned yet is asked before any rule of the
    /// file is read: its always-rule stands before the rule that would have
    /// decided the call were it pinned (the default, when none of the file's).
    pub fn anchor_for(&self, execution: &ToolExecution, asker: Option<&str>) -> Option<Arc<str>> {
        let asker = asker?;
        let rules = self.rules();
        if asker != UNPINNED_ASKS {
            return rules.iter().find(|r| &*r.id == asker).map(|r| Arc::clone(&r.id));
        }
        let after = rules.iter().position(|r| &*r.id == UNPINNED_ASKS)? + 1;
        rules[after..]
            .iter()
            .find(|r| r.matcher.matches(execution))
            .map(|r| Arc::clone(&r.id))
    }

    /// How long a call `asker` asked waits for a human, when that rule
    /// says (an ask's `"timeout"`).
    pub fn ask_timeout(&self, asker: Option<&str>) -> Option<std::time::Duration> {
        let asker = asker?;
        self.rules()
            .iter()
            .find(|r| &*r.id == asker)
            .and_then(|r| match &r.action {
                Action::Ask { timeout, .. } => *timeout,
                _ => None,
            })
    }

    /// How many distinct answerers must approve a call `asker` asked (an
    /// ask's `"approvals"`; one unless it says more). An MCP tool not pinned
    /// yet needs as many as the rule that decides it once pinned: approving
    /// it pins it, and one person must not pass a two-person rule that way.
    pub fn approvals(&self, execution: &ToolExecution, asker: Option<&str>) -> Approvals {
        let Some(asker) = asker else {
            return Approvals::ONE;
        };
        let rules = self.rules();
        let needs = |id: &str| {
            rules
                .iter()
                .find(|r| &*r.id == id)
                .and_then(|r| match &r.action {
                    Action::Ask { approvals, .. } => *approvals,
                    _ => None,
                })
                .unwrap_or(Approvals::ONE)
        };
        let pinned = match asker {
            UNPINNED_ASKS => self.anchor_for(execution, Some(asker)).map(|id| needs(&id)),
            _ => None,
        };
        needs(asker).max(pinned.unwrap_or(Approvals::ONE))
    }

    /// Whether an always-rule standing just before `anchor` is reached by
    /// a call `asker` asked: the anchor is the asker, or runs before it.
    /// With no policy in force neither is known, and the rule is reached.
    pub fn reaches(&self, anchor: Option<&str>, execution: &ToolExecution, asker: Option<&str>) -> bool {
        match (anchor, asker) {
            (None, None) => self.rules().is_empty(),
            (Some(anchor), Some(_)) => {
                let Some(asker) = self.anchor_for(execution, asker) else {
                    return false;
                };
                let rules = self.rules();
                let at = |id: &str| rules.iter().position(|r| &*r.id == id);
                matches!((at(anchor), at(&asker)), (Some(a), Some(b)) if a <= b)
            }
            _ => false,
        }
    }

    /// The file's rules that a rule allowing every call of `tool`, standing
    /// just before `anchor`, would keep from deciding: those that ask,
    /// deny or send a call of the tool to a reviewer, from the anchor on.
    pub fn passed_over(&self, tool: &str, anchor: Option<&str>) -> Vec<Arc<str>> {
        let rules = self.rules();
        let from = anchor.and_then(|a| rules.iter().position(|r| &*r.id == a)).unwrap_or(0);
        rules[from..]
            .iter()
            .filter(|r| is_the_files(&r.id))
            .filter(|r| {
                matches!(
                    r.action,
                    Action::Ask { .. } | Action::Deny { .. } | Action::Review { .. }
                )
            })
            .filter(|r| r.matcher.tool.as_ref().is_none_or(|glob| glob.is_match(tool)))
            .map(|r| Arc::clone(&r.id))
            .collect()
    }
}

/// Whether a rule is the policy file's own, not one every policy runs.
pub fn is_the_files(id: &str) -> bool {
    ![
        HELD_DENIED,
        UNPINNED_ASKS,
        UNMATCHED_ASKS,
        UNMATCHED_DENIED,
        UNMATCHED_REVIEWED,
    ]
    .contains(&id)
}

#[cfg(test)]
mod tests {
    use tether_tools::ToolCall;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::files::policy::{Policy, Stage};

    fn call(tool: &str) -> ToolExecution {
        ToolExecution::new(&ToolCall::new("c1", tool, "{}"), None, CancellationToken::new())
    }

    /// Approving an MCP tool not pinned yet pins it: one person must not
    /// pass a two-person rule that way.
    #[test]
    fn an_unpinned_tool_needs_as_many_approvals_as_the_rule_that_decides_it_once_pinned() {
        let text = serde_json::json!({"rules": [{"id": "two", "stage": "pre-execute", "match": {"tool": "poke"},
            "action": {"type": "ask", "approvals": 2}}]});
        let document = crate::files::source::Document::parse("p.json".into(), text.to_string())
            .unwrap_or_else(|e| panic!("{e:?}"));
        let policy = Policy::from_document(&document).unwrap_or_else(|e| panic!("{e:?}"));
        let standing = Standing::default();
        standing.put_in_force(
            policy
                .all_rules()
                .filter(|r| r.stage == Stage::PreExecute)
                .cloned()
                .collect(),
        );
        let needs = |tool: &str, asker: Option<&str>| standing.approvals(&call(tool), asker).get();
        assert_eq!(needs("poke", Some("two")), 2);
        assert_eq!(needs("poke", Some(UNPINNED_ASKS)), 2);
        assert_eq!(needs("other", Some(UNPINNED_ASKS)), 1);
        assert_eq!(needs("other", Some(UNMATCHED_ASKS)), 1);
        assert_eq!(needs("poke", None), 1, "no rule asked: one answerer");
    }
}
