//! Policy files: ordered rules that become ordinary engine listeners and
//! guards (CONSOLE.md, "Files"). The engine never learns about files.

mod check;
mod implicit;
mod rule;

use std::path::Path;
use std::sync::LazyLock;

use serde::Deserialize;

pub use implicit::{HELD_DENIED, HELD_REASON, UNPINNED_ASKS};
pub use rule::{Action, Rule, Stage};

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
    pub rules: Vec<rule::RuleSpec>,
}

/// A checked, compiled policy.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub name: Option<String>,
    pub path: Option<String>,
    pub rules: Vec<Rule>,
    /// MCP servers whose tool annotations are believed (`readOnlyHint` of
    /// a pinned tool makes its calls parallel).
    pub trust_annotations: Vec<String>,
    /// Rules every policy starts with, before its own ([`HELD_DENIED`]).
    pub before: Vec<Rule>,
    /// Rules every policy ends with, after its own ([`UNPINNED_ASKS`]).
    pub implicit: Vec<Rule>,
    /// Every `match.scope`, with where it stands, to check against a scenario.
    pub scope_refs: Vec<(String, FileError)>,
    /// Every `match.tool` glob, with where it stands, likewise.
    pub tool_refs: Vec<(String, FileError)>,
}

impl Policy {
    /// The rules as they run: the implicit ones that come first, the
    /// file's own, then the implicit ones that come last.
    pub fn all_rules(&self) -> impl Iterator<Item = &Rule> {
        self.before.iter().chain(&self.rules).chain(&self.implicit)
    }

    /// What a console started without `--policy` runs: the implicit rules
    /// alone (a held MCP tool is denied, an unpinned one asked).
    pub fn implicit_only() -> Self {
        Self {
            name: Some("implicit rules only (no --policy)".into()),
            before: implicit::before(),
            implicit: implicit::after(),
            ..Self::default()
        }
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
        match FORMAT_CHECK.read::<PolicySpec>(document) {
            Ok(spec) => check::compile(&spec, document),
            Err(mut errors) => {
                errors.extend(check::rule_errors(document));
                errors.sort_by_key(|e| (e.line, e.column));
                errors.dedup();
                Err(errors)
            }
        }
    }

    /// Errors for every `match.tool` glob that matches none of `known`
    /// (checked with the files given together, `tether check`).
    pub fn unknown_tools(&self, known: &[&str]) -> Vec<FileError> {
        self.tool_refs
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
        self.scope_refs
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
