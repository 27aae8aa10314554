//! A rule's compiled match: value predicates, the shell-command condition,
//! and the matcher that checks a call against them, saying in words which
//! condition failed.

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use globset::GlobMatcher;
use regex::Regex;
use serde_json::Value;
use tether_tools::{AgentPipelineScope, ToolExecution};

use super::super::ShellTool;
use super::as_command::AsCommand;
use crate::shell::{self, CommandMatch};
use crate::subagent::Subagent;
use crate::{paths, secrets};

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
    /// A path argument that names a secret (`secret: false`: one that does
    /// not), by the one list ([`crate::secrets`]), as written and resolved.
    Secret {
        pointer: String,
        secret: bool,
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
            Predicate::Secret { pointer, secret } => format!("{{\"pointer\": {pointer:?}, \"secret\": {secret}}}"),
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
            Predicate::Secret { pointer, secret } => match value.pointer(pointer).and_then(Value::as_str) {
                Some(path) => {
                    let named = secrets::why(path).is_some()
                        || paths::resolve(path, cwd).is_some_and(|p| secrets::why_path(&p).is_some());
                    named == *secret
                }
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
            Predicate::Within { .. } | Predicate::Secret { .. } => self.holds_in(value, None),
        }
    }
}

/// A rule's condition on the shell command a call runs, and where tools the
/// policy marks shell-like keep theirs.
#[derive(Clone, Debug)]
pub struct CommandRule {
    pub matcher: CommandMatch,
    pub shell_tools: Arc<[ShellTool]>,
    /// The tool read as the command it runs (`as_command`), instead of a
    /// shell tool's command.
    pub reads: Option<AsCommand>,
}

impl CommandRule {
    /// The command the call runs: the agents' shell tools by name, the
    /// policy's marked tools at their pointer.
    pub fn script(&self, execution: &ToolExecution) -> Option<Rc<shell::Script>> {
        if let Some(reads) = self.reads {
            return Some(Rc::new(reads.script(execution.arguments())));
        }
        let tool = execution.name();
        let marked = self.shell_tools.iter().find(|s| s.tool == tool);
        shell::shared_command(tool, execution.arguments(), marked.map(|m| m.command.as_str()))
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
    /// On the subagent type that made the call: a call of the main agent
    /// (no subagent) never matches.
    pub agent_type: Option<GlobMatcher>,
    /// On the agent the call comes from (`claude-code`): a call of no
    /// named agent never matches.
    pub agent: Option<GlobMatcher>,
    /// The call's working directory is one of these (or inside one); a
    /// call whose front door gave none never matches.
    pub cwd_within: Vec<String>,
    /// How the tool's arguments become the command it runs (`as_command`):
    /// what `command` judges, and what an ask's reason names.
    pub as_command: Option<AsCommand>,
}

impl Matcher {
    /// Whether a call meets every condition. Asked of each rule at each
    /// call: nothing is put in words here (the implicit rules of an MCP
    /// gateway fail at most calls, and wording each failure was a string
    /// formatted per rule per call).
    pub fn matches(&self, execution: &ToolExecution) -> bool {
        if self.failure_besides_command(execution).is_some() {
            return false;
        }
        let Some(command) = self.command.as_ref() else {
            return true;
        };
        let cwd = paths::cwd_of(execution);
        command
            .matcher
            .holds(command.script(execution).as_deref(), cwd.as_deref())
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
            .mismatch(command.script(execution).as_deref(), cwd.as_deref())
    }

    /// The first condition other than `command` a call fails, in words.
    pub fn mismatch_besides_command(&self, execution: &ToolExecution) -> Option<String> {
        self.failure_besides_command(execution)
            .map(|failure| failure.words(execution))
    }

    /// Whether a call meets every condition other than `command`.
    pub fn holds_besides_command(&self, execution: &ToolExecution) -> bool {
        self.failure_besides_command(execution).is_none()
    }

    fn failure_besides_command(&self, execution: &ToolExecution) -> Option<Failure<'_>> {
        if let Some(p) = self.metadata.iter().find(|p| !p.holds(execution.metadata())) {
            return Some(Failure::Metadata(p));
        }
        if let Some(glob) = self.tool.as_ref().filter(|g| !g.is_match(execution.name())) {
            return Some(Failure::Tool(glob));
        }
        if let Some(glob) = &self.agent_type {
            match Subagent::of(execution) {
                Some(sub) if glob.is_match(&sub.kind) => {}
                other => return Some(Failure::Subagent(other.map(|sub| sub.kind), glob)),
            }
        }
        if let Some(glob) = &self.agent {
            match crate::subagent::agent_of(execution) {
                Some(agent) if glob.is_match(&agent) => {}
                other => return Some(Failure::Agent(other, glob)),
            }
        }
        if let Some(owner) = self.owner.as_deref().filter(|o| execution.owner() != Some(*o)) {
            return Some(Failure::Owner(owner));
        }
        // Read only for a condition that needs it (most rules: none).
        let cwd = if self.cwd_within.is_empty() && self.args.is_empty() {
            None
        } else {
            paths::cwd_of(execution)
        };
        if !self.cwd_within.is_empty() {
            let inside = cwd
                .as_deref()
                .and_then(|c| c.to_str())
                .is_some_and(|c| paths::within_any(c, &self.cwd_within, None));
            if !inside {
                return Some(Failure::Cwd(&self.cwd_within));
            }
        }
        if let Some(scope) = self.scope.as_deref().filter(|s| !in_scope(execution.scope(), s)) {
            return Some(Failure::Scope(scope));
        }
        self.args
            .iter()
            .find(|p| !p.holds_in(execution.arguments(), cwd.as_deref()))
            .map(Failure::Arguments)
    }
}

/// The first condition other than `command` a call fails, not yet worded.
enum Failure<'m> {
    Metadata(&'m Predicate),
    Tool(&'m GlobMatcher),
    /// The subagent that made the call (none: the main agent) and the glob.
    Subagent(Option<String>, &'m GlobMatcher),
    /// The agent the call comes from (none named) and the glob.
    Agent(Option<String>, &'m GlobMatcher),
    Owner(&'m str),
    /// The directories the call's working directory is in none of.
    Cwd(&'m [String]),
    Scope(&'m str),
    Arguments(&'m Predicate),
}

impl Failure<'_> {
    fn words(&self, execution: &ToolExecution) -> String {
        match self {
            Failure::Metadata(p) => format!("its tool's metadata fails {}", p.describe()),
            Failure::Tool(glob) => format!("tool {:?} is not {:?}", execution.name(), glob.glob().glob()),
            Failure::Subagent(Some(kind), glob) => format!("subagent {kind:?} is not {:?}", glob.glob().glob()),
            Failure::Subagent(None, glob) => {
                format!("no subagent made it (the rule needs {:?})", glob.glob().glob())
            }
            Failure::Agent(Some(agent), glob) => format!("agent {agent:?} is not {:?}", glob.glob().glob()),
            Failure::Agent(None, glob) => format!("no named agent made it (the rule needs {:?})", glob.glob().glob()),
            Failure::Owner(owner) => format!("its owner is not {owner:?}"),
            Failure::Cwd(roots) => format!("it does not run in {roots:?}"),
            Failure::Scope(scope) => format!("it is not in scope {scope:?}"),
            Failure::Arguments(p) => format!("its arguments fail {}", p.describe()),
        }
    }
}

/// A rule naming scope S applies to calls in S or below it, S found by label.
fn in_scope(scope: Option<&AgentPipelineScope>, label: &str) -> bool {
    scope.is_some_and(|s| s.chain().any(|s| s.label() == Some(label)))
}
