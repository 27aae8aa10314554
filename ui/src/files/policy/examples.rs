//! Rules that carry their own examples: calls a rule must match and calls it
//! must not, checked whenever the policy is read (`tether check`, loading),
//! so a policy tests itself.

use serde::Deserialize;
use serde_json::Value;
use tether_tools::{AgentPipelineScope, ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;

use super::rule::Rule;
use crate::files::source::{Document, FileError};

/// A rule's `examples`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ExamplesSpec {
    #[serde(default, rename = "match")]
    pub matching: Vec<CallSpec>,
    #[serde(default)]
    pub no_match: Vec<CallSpec>,
}

/// An example call: a tool, its arguments, and where it comes from.
#[derive(Clone, Debug, Deserialize)]
pub struct CallSpec {
    pub tool: String,
    #[serde(default)]
    pub arguments: Option<Value>,
    /// The label of the scope the call is made in.
    #[serde(default)]
    pub scope: Option<String>,
    /// The subagent type that made the call (none: the main agent).
    #[serde(default)]
    pub agent_type: Option<String>,
    /// The working directory the call is made in (`~` is the home).
    #[serde(default)]
    pub cwd: Option<String>,
}

impl CallSpec {
    /// The call as the pipeline would prepare it, so it is matched by the
    /// very code that matches real calls.
    fn execution(&self) -> ToolExecution {
        let arguments = self
            .arguments
            .clone()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let mut call = ToolCall::new("example", self.tool.clone(), arguments.to_string());
        if let Some(cwd) = &self.cwd {
            let cwd = match cwd.strip_prefix('~') {
                Some(rest) => format!("{}{rest}", std::env::var("HOME").unwrap_or_default()),
                None => cwd.clone(),
            };
            call.invocation_context = Some(serde_json::json!({ "cwd": cwd }));
        }
        if let Some(kind) = &self.agent_type {
            let subagent = crate::subagent::Subagent {
                kind: kind.clone(),
                id: None,
            };
            subagent.add_to(&mut call.invocation_context);
        }
        let scope = self
            .scope
            .as_ref()
            .map(|label| AgentPipelineScope::builder().label(label.clone()).build_root());
        ToolExecution::new(&call, scope, CancellationToken::new())
    }
}

/// An error at every example the rule at `at` gets wrong.
pub(super) fn check(rule: &Rule, examples: &ExamplesSpec, doc: &Document, at: &str) -> Vec<FileError> {
    let mut errors = Vec::new();
    for (k, example) in examples.matching.iter().enumerate() {
        if let Some(why) = rule.matcher.mismatch(&example.execution()) {
            errors.push(doc.error_at(
                &format!("{at}/examples/match/{k}"),
                format!(
                    "rule {:?} does not match this example, which it must match: {why}",
                    rule.id
                ),
            ));
        }
    }
    for (k, example) in examples.no_match.iter().enumerate() {
        if rule.matcher.matches(&example.execution()) {
            errors.push(doc.error_at(
                &format!("{at}/examples/no_match/{k}"),
                format!("rule {:?} matches this example, which it must not match", rule.id),
            ));
        }
    }
    errors
}
