//! "Approve always" rules the human adds at the approval prompt: shared by
//! the answerer (which applies them) and the screen (which offers and lists them).

use std::sync::{Arc, Mutex};

use crate::session::events::ApprovalPrompt;

/// The session's always-rules, in the order they were added.
pub type AlwaysRules = Arc<Mutex<Vec<AlwaysRule>>>;

/// An "approve always" rule: this tool, in this scope, for this session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlwaysRule {
    pub tool: String,
    pub scope_id: Option<u64>,
    pub scope_label: String,
}

impl AlwaysRule {
    pub fn for_prompt(prompt: &ApprovalPrompt) -> Self {
        Self {
            tool: prompt.tool.clone(),
            scope_id: prompt.scope_id,
            scope_label: prompt.scope_label.clone(),
        }
    }

    pub fn matches(&self, tool: &str, scope_id: Option<u64>) -> bool {
        self.tool == tool && self.scope_id == scope_id
    }

    /// The exact rule, as the prompt and the trail show it.
    pub fn describe(&self) -> String {
        format!(
            "allow tool {:?} in scope {:?} without asking, until this console exits",
            self.tool, self.scope_label
        )
    }
}
