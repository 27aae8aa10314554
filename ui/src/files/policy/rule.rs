//! Rules: what they match and what they do.

use std::sync::Arc;

use globset::GlobMatcher;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use tether_tools::{AgentPipelineScope, ToolExecution};

/// What happens to a call no pre-execute rule decides (a policy's
/// top-level `"default"`): asked unless the policy says otherwise.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Unmatched {
    Allow,
    #[default]
    Ask,
    Deny,
}

impl Unmatched {
    pub fn as_str(self) -> &'static str {
        match self {
            Unmatched::Allow => "allow",
            Unmatched::Ask => "ask",
            Unmatched::Deny => "deny",
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
            Stage::PreExecute => &["allow", "deny", "ask"],
            Stage::Guard => &["veto"],
            Stage::Execute => &["timeout"],
            Stage::PostExecute => &["accept", "replace", "block"],
        }
    }
}

/// A rule's `match`, besides `tool` and `args`, which are read one by one
/// so that each is checked even when the other has the wrong shape.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct MatchSpec {
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub annotations: serde_json::Map<String, Value>,
}

/// A predicate on a JSON value: at `pointer`, `exists`, `equals` or `regex`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ValueMatchSpec {
    #[serde(default)]
    pub pointer: Option<String>,
    #[serde(default)]
    pub exists: Option<bool>,
    #[serde(default, deserialize_with = "crate::files::source::present")]
    pub equals: Option<Value>,
    #[serde(default)]
    pub regex: Option<String>,
}

/// What a rule does when it matches.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    Allow,
    Deny { reason: String },
    Ask { reason: Option<String> },
    Veto { reason: String },
    Timeout { ms: u64 },
    Accept,
    Replace { value: Value },
    Block { reason: String },
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny { .. } => "deny",
            Action::Ask { .. } => "ask",
            Action::Veto { .. } => "veto",
            Action::Timeout { .. } => "timeout",
            Action::Accept => "accept",
            Action::Replace { .. } => "replace",
            Action::Block { .. } => "block",
        }
    }
}

/// A compiled value predicate.
#[derive(Clone, Debug)]
pub enum Predicate {
    Exists { pointer: String, exists: bool },
    Equals { pointer: String, value: Value },
    Regex { pointer: String, regex: Regex },
}

impl Predicate {
    /// The predicate as written in a policy, for messages.
    pub fn describe(&self) -> String {
        match self {
            Predicate::Exists { pointer, exists } => format!("{{\"pointer\": {pointer:?}, \"exists\": {exists}}}"),
            Predicate::Equals { pointer, value } => format!("{{\"pointer\": {pointer:?}, \"equals\": {value}}}"),
            Predicate::Regex { pointer, regex } => {
                format!("{{\"pointer\": {pointer:?}, \"regex\": {:?}}}", regex.as_str())
            }
        }
    }

    pub fn holds(&self, value: &Value) -> bool {
        match self {
            Predicate::Exists { pointer, exists } => value.pointer(pointer).is_some() == *exists,
            Predicate::Equals {
                pointer,
                value: expected,
            } => value.pointer(pointer) == Some(expected),
            Predicate::Regex { pointer, regex } => match value.pointer(pointer) {
                Some(Value::String(s)) => regex.is_match(s),
                Some(other) => regex.is_match(&other.to_string()),
                None => false,
            },
        }
    }
}

/// A compiled match.
#[derive(Clone, Debug, Default)]
pub struct Matcher {
    pub tool: Option<GlobMatcher>,
    pub scope: Option<String>,
    pub owner: Option<String>,
    pub args: Vec<Predicate>,
    /// On the tool's registration metadata (MCP annotations, pinning).
    pub metadata: Vec<Predicate>,
}

impl Matcher {
    pub fn matches(&self, execution: &ToolExecution) -> bool {
        self.mismatch(execution).is_none()
    }

    /// The first condition a call fails, in words; `None` when it matches.
    pub fn mismatch(&self, execution: &ToolExecution) -> Option<String> {
        if let Some(p) = self.metadata.iter().find(|p| !p.holds(execution.metadata())) {
            return Some(format!("its tool's metadata fails {}", p.describe()));
        }
        if let Some(glob) = self.tool.as_ref().filter(|g| !g.is_match(execution.name())) {
            return Some(format!("tool {:?} is not {:?}", execution.name(), glob.glob().glob()));
        }
        if let Some(owner) = self.owner.as_deref().filter(|o| execution.owner() != Some(*o)) {
            return Some(format!("its owner is not {owner:?}"));
        }
        if let Some(scope) = self.scope.as_deref().filter(|s| !in_scope(execution.scope(), s)) {
            return Some(format!("it is not in scope {scope:?}"));
        }
        self.args
            .iter()
            .find(|p| !p.holds(execution.arguments()))
            .map(|p| format!("its arguments fail {}", p.describe()))
    }
}

/// A rule naming scope S applies to calls in S or below it, S found by label.
fn in_scope(scope: Option<&AgentPipelineScope>, label: &str) -> bool {
    scope.is_some_and(|s| s.chain().any(|s| s.label() == Some(label)))
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
