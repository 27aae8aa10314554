//! Rules: what they match and what they do. A rule's stage and action and
//! the compiled rule are here; the match as written is in `spec`, compiled
//! in `matcher`; compound shell commands covered by several rules in
//! `compound`.

mod compound;
mod matcher;
mod spec;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

pub use self::compound::{allowed_by_segments, uncovered_commands};
pub use self::matcher::{CommandRule, Matcher, Predicate};
pub use self::spec::{MatchSpec, Roots, ValueMatchSpec};

/// What happens to a call no pre-execute rule decides (a policy's
/// top-level `"default"`): asked unless the policy says otherwise.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Unmatched {
    Allow,
    #[default]
    Ask,
    Deny,
    /// Sent to the policy's only reviewer.
    Review,
}

impl Unmatched {
    pub fn as_str(self) -> &'static str {
        match self {
            Unmatched::Allow => "allow",
            Unmatched::Ask => "ask",
            Unmatched::Deny => "deny",
            Unmatched::Review => "review",
        }
    }
}

/// The pipeline stage a rule acts in.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    PreExecute,
    Guard,
    Execute,
    PostExecute,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::PreExecute => "pre-execute",
            Stage::Guard => "guard",
            Stage::Execute => "execute",
            Stage::PostExecute => "post-execute",
        }
    }

    /// The actions that make sense in this stage.
    pub fn actions(self) -> &'static [&'static str] {
        match self {
            Stage::PreExecute => &["allow", "deny", "ask", "review"],
            Stage::Guard => &["veto"],
            Stage::Execute => &["timeout"],
            Stage::PostExecute => &["accept", "replace", "block"],
        }
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    Allow,
    Deny {
        reason: String,
    },
    Ask {
        reason: Option<String>,
    },
    /// Sends the call to the named reviewer of the policy, which allows,
    /// denies or asks the human (docs/policy.md, "Reviewers").
    Review {
        reviewer: String,
    },
    Veto {
        reason: String,
    },
    Timeout {
        ms: u64,
    },
    Accept,
    Replace {
        value: Value,
    },
    Block {
        reason: String,
    },
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny { .. } => "deny",
            Action::Ask { .. } => "ask",
            Action::Review { .. } => "review",
            Action::Veto { .. } => "veto",
            Action::Timeout { .. } => "timeout",
            Action::Accept => "accept",
            Action::Replace { .. } => "replace",
            Action::Block { .. } => "block",
        }
    }
}

/// A compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    pub id: Arc<str>,
    pub stage: Stage,
    pub matcher: Matcher,
    pub result: Option<Predicate>,
    pub action: Action,
}
