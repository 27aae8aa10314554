//! Policy files: ordered rules that become ordinary engine listeners and
//! guards (CONSOLE.md, "Files"). The engine never learns about files.

mod check;
mod examples;
mod implicit;
mod reviewers;
mod rule;
mod starters;

use std::path::Path;
use std::sync::LazyLock;

use serde::Deserialize;

pub use implicit::{HELD_DENIED, HELD_REASON, UNMATCHED_ASKS, UNMATCHED_DENIED, UNMATCHED_REVIEWED, UNPINNED_ASKS};
pub use reviewers::{DEFAULT_MAX_CONCURRENT, DEFAULT_TIMEOUT, ModelApi, ModelReviewer, Reviewer, ReviewerKind};
pub use rule::{
    Action, Approvals, AsCommand, MAX_APPROVALS, Rule, Stage, Unmatched, allowed_by_segments, duration,
    uncovered_commands,
};
pub use starters::{Starter, Variant, default_path};

use crate::files::source::{Document, FileError, Format};

/// The policy format as JSON Schema.
pub const FORMAT: &str = include_str!("policy.schema.json");

static FORMAT_CHECK: LazyLock<Format> = LazyLock::new(|| Format::new(FORMAT, "policy"));

/// A policy file as written.
#[derive(Clone, Debug, Deserialize)]
pub struct PolicySpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub trust_annotations: Vec<String>,
    #[serde(default)]
    pub shell_tools: Vec<ShellToolSpec>,
    /// What happens to a call no pre-execute rule decides.
    #[serde(default)]
    pub default: Option<Unmatched>,
    /// Read and checked one by one (`reviewers::compile`).
    #[serde(default)]
    pub reviewers: Option<serde_json::Value>,
}

/// A tool the policy marks as running shell commands.
#[derive(Clone, Debug, Deserialize)]
pub struct ShellToolSpec {
    pub tool: String,
    #[serde(default)]
    pub command: Option<String>,
}

/// A tool of the user's own that runs shell commands, and where in its
/// arguments the command is: "approve always" offers it the same
/// command-prefix rules as the agents' built-in shell tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellTool {
    /// The tool's exact name.
    pub tool: String,
    /// JSON pointer to the command (a string or an argv array).
    pub command: String,
}

/// Where a shell tool's command is when the policy does not say.
pub const DEFAULT_COMMAND_POINTER: &str = "/command";

/// A checked, compiled policy.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub name: Option<String>,
    pub path: Option<String>,
    /// The file's own rules as they run: a condition on annotations holds
    /// only for pinned tools of the servers in `trust_annotations`.
    pub rules: Vec<Rule>,
    /// MCP servers whose tool annotations are believed, once a tool's
    /// definition is pinned: rules match them, and `readOnlyHint` makes its
    /// calls parallel.
    pub trust_annotations: Vec<String>,
    /// Rules every policy starts with, before its own ([`HELD_DENIED`],
    /// then [`UNPINNED_ASKS`]).
    pub before: Vec<Rule>,
    /// Rules every policy ends with, after its own (the policy's default
    /// for calls no rule decides).
    pub implicit: Vec<Rule>,
    /// What happens to a call no pre-execute rule decides.
    pub unmatched: Unmatched,
    /// Tools marked as running shell commands (`shell_tools`).
    pub shell_tools: Vec<ShellTool>,
    /// Who answers the calls `review` rules send them (`reviewers`).
    pub reviewers: Vec<Reviewer>,
    /// What its rules name, to check against a scenario.
    pub refs: References,
}

/// Every `match.scope` and `match.tool` glob of a policy's rules, and every
/// tool it marks shell-like, with where it stands. Read from the JSON itself, so a policy with other errors is
/// still cross-checked against its scenarios in the same run; a rule whose
/// `match` is not an object names nothing here (its shape error is reported).
#[derive(Clone, Debug, Default)]
pub struct References {
    pub scopes: Vec<(String, FileError)>,
    pub tools: Vec<(String, FileError)>,
}

impl References {
    /// The references in a policy document.
    pub fn of(document: &Document) -> References {
        let mut refs = References::default();
        let rules = document.value.get("rules").and_then(serde_json::Value::as_array);
        for (i, rule) in rules.into_iter().flatten().enumerate() {
            for (field, list) in [("scope", &mut refs.scopes), ("tool", &mut refs.tools)] {
                if let Some(name) = rule.get("match").and_then(|m| m.get(field)).and_then(|v| v.as_str()) {
                    list.push((
                        name.to_owned(),
                        document.error_at(&format!("/rules/{i}/match/{field}"), ""),
                    ));
                }
            }
        }
        let marked = document.value.get("shell_tools").and_then(serde_json::Value::as_array);
        for (i, tool) in marked.into_iter().flatten().enumerate() {
            if let Some(name) = tool.get("tool").and_then(|v| v.as_str()) {
                // An exact name, checked as a glob that has no wildcard.
                refs.tools.push((
                    globset::escape(name),
                    document.error_at(&format!("/shell_tools/{i}/tool"), ""),
                ));
            }
        }
        refs
    }

    /// Errors for every `match.tool` glob that matches none of `known`
    /// (checked with the files given together, `tether check`). A glob that
    /// does not compile is skipped: it has its own error.
    pub fn unknown_tools(&self, known: &[&str]) -> Vec<FileError> {
        self.tools
            .iter()
            .filter(|(pattern, _)| {
                globset::Glob::new(pattern)
                    .map(|g| g.compile_matcher())
                    .is_ok_and(|g| !known.iter().any(|name| g.is_match(name)))
            })
            .map(|(pattern, at)| FileError {
                message: format!(
                    "tool {pattern:?} matches no tool: the scenario defines {}",
                    if known.is_empty() {
                        "no tools".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
                ..at.clone()
            })
            .collect()
    }

    /// Errors for every `match.scope` that names no scope in `known`.
    pub fn unknown_scopes(&self, known: &[&str]) -> Vec<FileError> {
        self.scopes
            .iter()
            .filter(|(scope, _)| !known.contains(&scope.as_str()))
            .map(|(scope, at)| FileError {
                message: format!(
                    "unknown scope {scope:?}: the scenario defines {}",
                    if known.is_empty() {
                        "no scopes".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
                ..at.clone()
            })
            .collect()
    }
}

impl Policy {
    /// The rules as they run: the implicit ones that come first, the
    /// file's own, then the implicit ones that come last.
    pub fn all_rules(&self) -> impl Iterator<Item = &Rule> {
        self.before.iter().chain(&self.rules).chain(&self.implicit)
    }

    /// What a console started without `--policy` runs: the implicit rules
    /// alone (a held MCP tool is denied), and every other call asked.
    pub fn implicit_only() -> Self {
        Self {
            name: Some("implicit rules only (no --policy)".into()),
            before: implicit::before(),
            implicit: implicit::after(Unmatched::Ask, None, None),
            ..Self::default()
        }
    }

    /// The policy as the header shows it: its file (or "none") and what
    /// happens to the calls no rule decides.
    pub fn header_text(&self) -> String {
        format!(
            "{} (unmatched calls: {})",
            self.path.as_deref().unwrap_or("none"),
            self.unmatched.as_str()
        )
    }

    /// Reads, checks and compiles a policy file; every problem is returned.
    pub fn load(path: &Path) -> Result<Policy, Vec<FileError>> {
        let document = Document::read(path)?;
        let mut policy = Self::from_document(&document)?;
        policy.path = Some(document.path);
        Ok(policy)
    }

    /// Checks and compiles a parsed document.
    pub fn from_document(document: &Document) -> Result<Policy, Vec<FileError>> {
        let mut policy = match FORMAT_CHECK.read::<PolicySpec>(document) {
            Ok(spec) => check::compile(Some(&spec), Vec::new(), document),
            Err(shape) => check::compile(None, shape, document),
        }?;
        let rules = std::mem::take(&mut policy.rules);
        policy.rules = (rules.into_iter())
            .map(|rule| implicit::believing(rule, &policy.trust_annotations))
            .collect();
        Ok(policy)
    }

    /// Errors for every `match.scope` that names no scope in `known`.
    pub fn unknown_scopes(&self, known: &[&str]) -> Vec<FileError> {
        self.refs.unknown_scopes(known)
    }

    /// The reviewer a `review` action names.
    pub fn reviewer(&self, name: &str) -> Option<&Reviewer> {
        self.reviewers.iter().find(|r| r.name == name)
    }

    /// Where the command of a tool marked shell-like is, if it is marked.
    pub fn shell_command(&self, tool: &str) -> Option<&str> {
        self.shell_tools
            .iter()
            .find(|s| s.tool == tool)
            .map(|s| s.command.as_str())
    }
}
