//! Policy files: ordered rules that become ordinary engine listeners and
//! guards (CONSOLE.md, "Files"). The engine never learns about files.

mod check;
mod install;
mod rule;

use std::path::Path;
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;

pub use install::install;
pub use rule::{Action, Rule, Stage};

use crate::source::{Document, FileError, check_shape};

/// The policy format as JSON Schema.
pub const FORMAT: &str = include_str!("policy.schema.json");

static FORMAT_VALUE: LazyLock<Value> = LazyLock::new(|| serde_json::from_str(FORMAT).unwrap_or(Value::Null));
static FORMAT_VALIDATOR: LazyLock<Option<jsonschema::Validator>> =
    LazyLock::new(|| jsonschema::validator_for(&FORMAT_VALUE).ok());

/// A policy file as written.
#[derive(Clone, Debug, Deserialize)]
pub struct PolicySpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub rules: Vec<rule::RuleSpec>,
}

/// A checked, compiled policy.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub name: Option<String>,
    pub path: Option<String>,
    pub rules: Vec<Rule>,
    /// Every `match.scope`, with where it stands, to check against a scenario.
    pub scope_refs: Vec<(String, FileError)>,
}

impl Policy {
    /// Reads, checks and compiles a policy file; every problem is returned.
    pub fn load(path: &Path) -> Result<Policy, Vec<FileError>> {
        let document = Document::read(path)?;
        let mut policy = Self::from_document(&document)?;
        policy.path = Some(document.path);
        Ok(policy)
    }

    /// Checks and compiles a parsed document.
    pub fn from_document(document: &Document) -> Result<Policy, Vec<FileError>> {
        let Some(validator) = FORMAT_VALIDATOR.as_ref() else {
            return Err(vec![
                document.error_at("", "internal error: the policy format does not compile"),
            ]);
        };
        let shape = check_shape(document, &FORMAT_VALUE, validator);
        if !shape.is_empty() {
            return Err(shape);
        }
        let spec: PolicySpec = serde_json::from_value(document.value.clone())
            .map_err(|e| vec![document.error_at("", format!("not a policy: {e}"))])?;
        check::compile(&spec, document)
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
