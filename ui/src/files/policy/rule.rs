//! Rules: what they match and what they do.

use std::path::Path;
use std::sync::Arc;

use globset::GlobMatcher;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use tether_tools::{AgentPipelineScope, ToolExecution};

use super::ShellTool;
use crate::paths;
use crate::shell::{self, CommandMatch};

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
    #[serde(default)]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub command_except: Option<Vec<String>>,
    #[serde(default)]
    pub command_paths_within: Option<Roots>,
}

/// A predicate on a JSON value: at `pointer`, `exists`, `equals`, `regex`,
/// or (a path) `within` / `outside` directories.
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
    #[serde(default)]
    pub within: Option<Roots>,
    #[serde(default)]
    pub outside: Option<Roots>,
}

/// Directories as a rule names them: `"cwd"`, `"~/notes"`, `"/srv"`, one or
/// a list.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Roots {
    One(String),
    Many(Vec<String>),
}

impl Roots {
    pub fn into_vec(self) -> Vec<String> {
        match self {
            Roots::One(root) => vec![root],
            Roots::Many(roots) => roots,
        }
    }
}

/// What a rule does when it matches.
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

/// A compiled value predicate.
#[derive(Clone, Debug)]
pub enum Predicate {
    Exists {
        pointer: String,
        exists: bool,
    },
    Equals {
        pointer: String,
        value: Value,
    },
    Regex {
        pointer: String,
        regex: Regex,
    },
    /// A path argument inside one of `roots` (`outside`: inside none of
    /// them). A path that cannot be resolved is inside none.
    Within {
        pointer: String,
        roots: Vec<String>,
        outside: bool,
    },
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
            Predicate::Within {
                pointer,
                roots,
                outside,
            } => format!(
                "{{\"pointer\": {pointer:?}, \"{}\": {roots:?}}}",
                if *outside { "outside" } else { "within" }
            ),
        }
    }

    /// Whether the predicate holds of `value`, paths resolved from `cwd`.
    pub fn holds_in(&self, value: &Value, cwd: Option<&Path>) -> bool {
        match self {
            Predicate::Within {
                pointer,
                roots,
                outside,
            } => match value.pointer(pointer).and_then(Value::as_str) {
                Some(path) => paths::within_any(path, roots, cwd) != *outside,
                // No path to judge: not within, and not known to be outside.
                None => false,
            },
            _ => self.holds(value),
        }
    }

    /// Whether the predicate holds of `value` (a path predicate without a
    /// working directory: only absolute and `~` paths resolve).
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
            Predicate::Within { .. } => self.holds_in(value, None),
        }
    }
}

/// A rule's condition on the shell command a call runs, and where tools the
/// policy marks shell-like keep theirs.
#[derive(Clone, Debug)]
pub struct CommandRule {
    pub matcher: CommandMatch,
    pub shell_tools: Arc<[ShellTool]>,
}

impl CommandRule {
    /// The command the call runs: the agents' shell tools by name, the
    /// policy's marked tools at their pointer.
    pub fn script(&self, execution: &ToolExecution) -> Option<shell::Script> {
        let tool = execution.name();
        let arguments = execution.arguments();
        match self.shell_tools.iter().find(|s| s.tool == tool) {
            Some(marked) => shell::command_at(tool, arguments, &marked.command),
            None if shell::is_shell_tool(tool) => shell::command_of(arguments).map(|(_, script)| script),
            None => None,
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
    /// On the shell command the call runs (`command`).
    pub command: Option<CommandRule>,
}

impl Matcher {
    pub fn matches(&self, execution: &ToolExecution) -> bool {
        self.mismatch(execution).is_none()
    }

    /// The first condition a call fails, in words; `None` when it matches.
    pub fn mismatch(&self, execution: &ToolExecution) -> Option<String> {
        if let Some(why) = self.mismatch_besides_command(execution) {
            return Some(why);
        }
        let command = self.command.as_ref()?;
        let cwd = paths::cwd_of(execution);
        command
            .matcher
            .mismatch(command.script(execution).as_ref(), cwd.as_deref())
    }

    /// The first condition other than `command` a call fails.
    pub fn mismatch_besides_command(&self, execution: &ToolExecution) -> Option<String> {
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
        let cwd = paths::cwd_of(execution);
        if let Some(p) = self
            .args
            .iter()
            .find(|p| !p.holds_in(execution.arguments(), cwd.as_deref()))
        {
            return Some(format!("its arguments fail {}", p.describe()));
        }
        None
    }
}

/// The allow rules with a `command` condition whose other conditions hold
/// for the call, in order, and the call's command as they read it.
fn command_allows<'r>(
    rules: &'r [Rule],
    execution: &ToolExecution,
) -> Option<(Vec<(&'r Rule, &'r CommandRule)>, shell::Script)> {
    let candidates: Vec<(&Rule, &CommandRule)> = rules
        .iter()
        .filter(|r| matches!(r.action, Action::Allow | Action::Accept))
        .filter_map(|r| r.matcher.command.as_ref().map(|c| (r, c)))
        .filter(|(r, _)| r.matcher.mismatch_besides_command(execution).is_none())
        .collect();
    let script = candidates.first()?.1.script(execution)?;
    Some((candidates, script))
}

/// For each command of a plain script, the first allow rule in `rules`
/// that covers it (`None`: no rule covers it).
fn covering<'r>(rules: &'r [Rule], execution: &ToolExecution) -> Option<(Vec<&'r Rule>, Vec<Option<usize>>)> {
    let (candidates, script) = command_allows(rules, execution)?;
    let segments = script.segments.as_ref().ok().filter(|s| !s.is_empty())?;
    let cwd = paths::cwd_of(execution);
    let cover = segments
        .iter()
        .map(|segment| {
            candidates
                .iter()
                .position(|(_, c)| c.matcher.segment_mismatch(segment, cwd.as_deref()).is_none())
        })
        .collect();
    Some((candidates.into_iter().map(|(r, _)| r).collect(), cover))
}

/// The allow rule that decides a compound shell command whose commands
/// are each covered by some allow `command` rule, though by no one rule
/// alone (`ls && git status` under `ls *` and `git status *`): the first of
/// those rules, in `rules`' order. Each rule's other conditions must hold
/// for the call; a script that is not plain is covered by none.
pub fn allowed_by_segments<'r>(rules: &'r [Rule], execution: &ToolExecution) -> Option<&'r Rule> {
    let (candidates, cover) = covering(rules, execution)?;
    if candidates.len() < 2 {
        return None;
    }
    let first = cover.into_iter().collect::<Option<Vec<usize>>>()?.into_iter().min()?;
    candidates.get(first).copied()
}

/// The commands (counted from 0) of a plain compound that no allow rule
/// of `rules` covers, when some rule covers the others: what the prompt
/// marks as the reason it was asked.
pub fn uncovered_commands(rules: &[Rule], execution: &ToolExecution) -> Option<Vec<usize>> {
    let (_, cover) = covering(rules, execution)?;
    let uncovered: Vec<usize> = cover
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_none())
        .map(|(i, _)| i)
        .collect();
    (cover.len() > 1 && !uncovered.is_empty() && uncovered.len() < cover.len()).then_some(uncovered)
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
