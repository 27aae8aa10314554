//! "Approve always" rules the human adds at the approval prompt: shared by
//! the answerer (which applies them) and the screen (which offers and lists
//! them). A rule fits the call it was made from: a command prefix for shell
//! tools (never for compound commands), a path or its directory for file
//! tools, the exact arguments, or — chosen explicitly — the whole tool.
//!
//! A rule binds to where its call ran: for an agent with a session id, that
//! session and the scope's label, so it still applies when the agent
//! reconnects (a new connection is a new scope with the same session id);
//! otherwise the scope itself.

pub mod command;
mod fit;
pub mod persist;
pub mod standing;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tether_tools::ToolExecution;

use crate::paths;
use crate::shell::{self, Pattern};
use crate::subagent::Subagent;

/// The session's always-rules, in the order they were added.
pub type AlwaysRules = Arc<Mutex<Vec<AlwaysRule>>>;

/// What part of a call an always-rule covers, narrowest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// These exact arguments (compared as JSON).
    Arguments(Value),
    /// A shell tool's command (the argument at JSON pointer `pointer`)
    /// exactly as written, whatever its other arguments (Claude Code's
    /// free-text `description` differs from call to call); the pointers in
    /// `absent` hold nothing (a built-in shell tool's other command
    /// argument: a call with both is read as two commands).
    Command {
        pointer: String,
        command: Value,
        absent: Vec<String>,
    },
    /// A file tool's `key` argument equal to `path`.
    Path { key: String, path: String },
    /// A file tool's `key` argument inside `dir` (no `.` or `..` parts).
    Directory { key: String, dir: String },
    /// A shell tool's command (the argument at JSON pointer `pointer`):
    /// plain, and each of its commands these words (followed by any further
    /// words when `rest`), as the `command` pattern `prefix *` reads it.
    CommandPrefix {
        pointer: String,
        prefix: Vec<String>,
        rest: bool,
    },
    /// Every call of the tool.
    WholeTool,
}

/// An "approve always" rule: a fit, for one tool in one scope, for this
/// session (or, once kept, in the policy file too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlwaysRule {
    pub tool: String,
    pub scope_id: Option<u64>,
    pub scope_label: String,
    /// The agent session the call ran in: when set, the rule binds to it and
    /// to `scope_label` instead of to `scope_id`.
    pub session_id: Option<String>,
    pub fit: Fit,
    /// Narrowed to calls this type of subagent makes (`Explore`); `None`
    /// covers the main agent and every subagent alike.
    pub agent_type: Option<String>,
    /// The rule it stands just before ([`standing`]): the one that asked
    /// the call it was made from. Calls a rule before it asks never reach
    /// it; `None` only when no policy was in force.
    pub anchor: Option<std::sync::Arc<str>>,
    /// The agent the call came from, by a name that outlasts its sessions
    /// (`claude-code`): a kept rule is scoped to it, never to the session.
    pub agent: Option<String>,
    /// Where the call ran (its working directory): a kept rule from an
    /// agent session holds in this project.
    pub cwd: Option<String>,
}

/// Where a call runs, as an always-rule compares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place<'a> {
    pub scope_id: Option<u64>,
    pub scope_label: &'a str,
    pub session_id: Option<&'a str>,
    /// The subagent that made the call, by type; `None` for the main agent.
    pub agent_type: Option<&'a str>,
}

impl<'a> Place<'a> {
    /// Where `execution` runs (a scope without a label is "global", as the
    /// prompt shows it).
    pub fn of(execution: &'a ToolExecution) -> Self {
        let scope = execution.scope();
        Self {
            scope_id: scope.map(|s| s.id()),
            scope_label: scope.and_then(|s| s.label()).unwrap_or("global"),
            session_id: execution.session_id(),
            agent_type: Subagent::type_in(execution.invocation_context()),
        }
    }
}

impl AlwaysRule {
    /// The rules that fit a call, narrowest first; the whole tool is last.
    /// `command_at` is where the policy says a tool of the user's own keeps
    /// its shell command (`shell_tools`); the agents' shell tools are known
    /// by name.
    pub fn choices(
        tool: &str,
        scope_id: Option<u64>,
        scope_label: &str,
        raw_arguments: &str,
        command_at: Option<&str>,
    ) -> Vec<Self> {
        let rule = |fit| Self {
            tool: tool.to_owned(),
            scope_id,
            scope_label: scope_label.to_owned(),
            session_id: None,
            fit,
            agent_type: None,
            anchor: None,
            agent: None,
            cwd: None,
        };
        let mut fits = Vec::new();
        let arguments = serde_json::from_str::<Value>(raw_arguments).ok();
        if let Some(arguments) = &arguments {
            fits.push(
                fit::exact_command(tool, arguments, command_at).unwrap_or_else(|| Fit::Arguments(arguments.clone())),
            );
            if let Some((key, path)) = ["path", "file_path"]
                .into_iter()
                .find_map(|k| arguments.get(k).and_then(Value::as_str).map(|p| (k, p)))
            {
                fits.push(Fit::Path {
                    key: key.to_owned(),
                    path: path.to_owned(),
                });
                if let Some(dir) = fit::directory_of(path) {
                    fits.push(Fit::Directory {
                        key: key.to_owned(),
                        dir,
                    });
                }
            }
            let command = match command_at {
                Some(pointer) => shell::command_at(tool, arguments, pointer).map(|c| (pointer, c)),
                None if shell::is_shell_tool(tool) => shell::command_of(arguments),
                None => None,
            };
            let offered = command.as_ref().and_then(|(pointer, script)| {
                // A pattern never covers standard input from a file or
                // here-document data (only the catalogue judges those): no
                // prefix rule is offered that would not cover the call.
                let words = script
                    .single()
                    .filter(|s| s.words.iter().all(|w| !w.glob) && s.inputs.is_empty() && !s.here)?
                    .values();
                command::prefix_of(&words).map(|(prefix, rest)| (*pointer, prefix, rest))
            });
            if let Some((pointer, prefix, rest)) = offered {
                fits.push(Fit::CommandPrefix {
                    pointer: pointer.to_owned(),
                    prefix,
                    rest,
                });
            }
        }
        fits.push(Fit::WholeTool);
        fits.into_iter().map(rule).collect()
    }

    /// Whether the rule covers calls made at `place`: the same session and
    /// scope label when the rule has a session, else the same scope; and,
    /// when the rule is narrowed to a subagent type, by that subagent.
    pub fn applies_at(&self, place: Place<'_>) -> bool {
        if self.agent_type.is_some() && place.agent_type != self.agent_type.as_deref() {
            return false;
        }
        match &self.session_id {
            Some(session) => place.session_id == Some(session) && place.scope_label == self.scope_label,
            None => place.scope_id == self.scope_id,
        }
    }

    /// Whether the rule approves this call waiting for an answer.
    pub fn matches_execution(&self, execution: &ToolExecution) -> bool {
        let cwd = paths::cwd_of(execution);
        self.tool == execution.name()
            && self.applies_at(Place::of(execution))
            && self.fits(execution.name(), execution.arguments(), cwd.as_deref())
    }

    /// Whether the rule approves a call of `tool` with these arguments in
    /// the very scope it was made in (no working directory known).
    pub fn matches(&self, tool: &str, scope_id: Option<u64>, arguments: &Value) -> bool {
        self.tool == tool && self.agent_type.is_none() && self.scope_id == scope_id && self.fits(tool, arguments, None)
    }

    /// Whether the rule approves a call of `tool` at `place` with these
    /// arguments (no working directory known).
    pub fn matches_at(&self, tool: &str, place: Place<'_>, arguments: &Value) -> bool {
        self.tool == tool && self.applies_at(place) && self.fits(tool, arguments, None)
    }

    /// The command pattern a command rule stands for.
    pub fn pattern(&self) -> Option<Pattern> {
        match &self.fit {
            Fit::CommandPrefix { prefix, rest, .. } => Pattern::exact(prefix, *rest),
            _ => None,
        }
    }

    /// Whether the arguments of a call of `tool` are within the rule's fit.
    fn fits(&self, tool: &str, arguments: &Value, cwd: Option<&Path>) -> bool {
        match &self.fit {
            Fit::WholeTool => true,
            Fit::Arguments(expected) => arguments == expected,
            Fit::Command {
                pointer,
                command,
                absent,
            } => arguments.pointer(pointer) == Some(command) && absent.iter().all(|p| arguments.pointer(p).is_none()),
            Fit::Path { key, path } => arguments.get(key).and_then(Value::as_str) == Some(path),
            Fit::Directory { key, dir } => arguments
                .get(key)
                .and_then(Value::as_str)
                .is_some_and(|p| fit::inside(p, dir, cwd)),
            Fit::CommandPrefix { pointer, .. } => {
                let Some(pattern) = self.pattern() else {
                    return false;
                };
                let Some(script) = shell::command_at(tool, arguments, pointer) else {
                    return false;
                };
                matches!(&script.segments, Ok(segments) if !segments.is_empty()
                    && segments.iter().all(|s| pattern.matches_segment(&s.words)))
            }
        }
    }

    /// What the rule covers, in a few words.
    pub fn covers(&self) -> String {
        match &self.fit {
            Fit::Arguments(_) => "with exactly these arguments".to_owned(),
            Fit::Command { pointer, .. } => format!(
                "when {} is exactly this (its other arguments may differ)",
                pointer.trim_start_matches('/')
            ),
            Fit::Path { key, path } => format!("with {key} {path:?}"),
            Fit::Directory { key, dir } => format!("with {key} anywhere under {dir:?}"),
            Fit::CommandPrefix { pointer, prefix, rest } => format!(
                "when {} {} `{}` (each command of it; never one with a substitution, a redirection to a file or a variable)",
                pointer.trim_start_matches('/'),
                if *rest { "starts with" } else { "is exactly" },
                shell::join(prefix)
            ),
            Fit::WholeTool => "for any arguments (the whole tool)".to_owned(),
        }
    }

    /// The exact rule, as the prompt and the trail show it. (A scope's
    /// label is its agent's session id unless the agent named it, and a
    /// session's scopes keep their labels when it reconnects.)
    pub fn describe(&self) -> String {
        let by = self
            .agent_type
            .as_ref()
            .map(|kind| format!(" made by subagent {kind:?}"))
            .unwrap_or_default();
        format!(
            "allow tool {:?}{by} in scope {:?} {}, until this console exits",
            self.tool,
            self.scope_label,
            self.covers()
        )
    }

    /// Where the rule holds once kept in the policy file: an agent
    /// session's rule for its agent and project, in any session.
    pub fn kept_scope(&self) -> String {
        match (&self.session_id, &self.agent, &self.cwd) {
            (Some(_), Some(agent), Some(cwd)) => format!("for agent {agent:?} in {cwd:?} (and below), in any session"),
            (Some(_), Some(agent), None) => format!("for agent {agent:?} anywhere, in any session"),
            (Some(_), None, _) => "nowhere: this agent's only name is its session id".to_owned(),
            (None, _, _) => format!("in scope {:?}", self.scope_label),
        }
    }

    /// The same rule narrowed to calls the subagent type `kind` makes.
    pub fn narrowed_to(mut self, kind: &str) -> Self {
        self.agent_type = Some(kind.to_owned());
        self
    }

    /// The rule in a few words, for a hook's answer and a journal's
    /// `decided_by` (`git status …`, `Write src/ui/…`).
    pub fn short(&self) -> String {
        match &self.fit {
            Fit::CommandPrefix { prefix, rest: true, .. } => format!("{} …", shell::join(prefix)),
            Fit::CommandPrefix {
                prefix, rest: false, ..
            } => shell::join(prefix),
            Fit::Path { path, .. } => format!("{} {path}", self.tool),
            Fit::Directory { dir, .. } => format!("{} {dir}/…", self.tool),
            Fit::Arguments(_) => format!("{} with exactly these arguments", self.tool),
            Fit::Command { command, .. } => match command.as_str() {
                Some(text) => text.to_owned(),
                None => command.to_string(),
            },
            Fit::WholeTool => format!("any {} call", self.tool),
        }
    }
}

/// The first command rule that, with others, covers each command of a
/// plain compound (`ls && git status` under "ls …" and "git status …"
/// rules), when no one rule covers it all.
pub fn covering_each_command<'r>(rules: &'r [AlwaysRule], execution: &ToolExecution) -> Option<&'r AlwaysRule> {
    let place = Place::of(execution);
    let candidates: Vec<(&AlwaysRule, Pattern, &str)> = rules
        .iter()
        .filter(|r| r.tool == execution.name() && r.applies_at(place))
        .filter_map(|r| match &r.fit {
            Fit::CommandPrefix { pointer, .. } => r.pattern().map(|p| (r, p, pointer.as_str())),
            _ => None,
        })
        .collect();
    let (_, _, pointer) = candidates.first()?;
    // Rules made from one tool's calls read its command at one pointer.
    if candidates.iter().any(|(_, _, p)| p != pointer) {
        return None;
    }
    let script = shell::command_at(execution.name(), execution.arguments(), pointer)?;
    let segments = script.segments.as_ref().ok().filter(|s| !s.is_empty())?;
    let mut first = usize::MAX;
    for segment in segments {
        let covering = candidates
            .iter()
            .position(|(_, p, _)| p.matches_segment(&segment.words))?;
        first = first.min(covering);
    }
    candidates.get(first).map(|(r, _, _)| *r)
}

#[cfg(test)]
mod tests;
