//! A request for a human as the prompt shows it, the lines that spell out a
//! compound shell command, and the always-rules' view of the request.

use std::time::Instant;

use super::{Editing, ReplySlot};
use crate::session::provenance::CallKey;

/// A request for a human, as the prompt shows it. Every text field is as the
/// model or agent wrote it; the view escapes it. Every console that shows
/// the request holds a copy; they share one [`ReplySlot`], so the first
/// answer wins.
#[derive(Clone, Debug)]
pub struct ApprovalPrompt {
    pub id: u64,
    pub key: CallKey,
    pub tool: String,
    pub call_id: String,
    pub scope_label: String,
    pub scope_id: Option<u64>,
    pub owner: Option<String>,
    pub agent: Option<String>,
    pub reason: Option<String>,
    /// Pretty-printed arguments (or the raw text when it did not parse).
    pub arguments: String,
    /// `Ok` when the arguments validate against the tool's schema.
    pub validation: Result<(), String>,
    /// `guard <id>: <reason>` when policy knows a guard will veto the call
    /// even if it is approved.
    pub guard_veto: Option<String>,
    /// Where the policy says this tool keeps its shell command
    /// (`shell_tools`), for command-prefix always-rules.
    pub command_at: Option<String>,
    /// Where the agent runs the call (its front door's `cwd`): where
    /// `rm -rf build` runs is half of the question.
    pub cwd: Option<String>,
    /// The subagent that made the call (`via subagent Explore a7f3`), when
    /// its front door said.
    pub subagent: Option<crate::subagent::Subagent>,
    /// A shell command as the bash grammar reads it, when that is worth a
    /// look: one line per command of a compound, or why it is not plain.
    pub commands: Vec<String>,
    pub deadline: Instant,
    /// Whether `e` may edit the arguments before approving, and how an
    /// edit is checked (issue 34).
    pub editing: Editing,
    /// When the call began to wait (a request reaching an empty queue is new
    /// from then on: see `App::prompt_is_new`).
    pub asked_at: Instant,
    /// The rule an always-rule made from this call stands just before
    /// (the rule that asked it; see `session::always::standing`).
    pub anchor: Option<std::sync::Arc<str>>,
    /// The policy file's rules that ask, deny or review this tool from
    /// the anchor on: a whole-tool always-rule would keep them from deciding.
    pub passed_over: Vec<std::sync::Arc<str>>,
    /// The agent the call comes from, by a name that outlasts its sessions
    /// (`claude-code`; see `crate::subagent::agent_of`): what a kept rule
    /// is scoped to, with the call's working directory.
    pub agent_name: Option<String>,
    pub reply: ReplySlot,
}

/// The lines [`ApprovalPrompt::commands`] shows for a call of `tool`: the
/// commands of a compound script, numbered, or what makes it not plain.
/// Commands in `not_covered` (counted from 0) are marked as the ones no
/// allow rule covers.
pub fn command_lines(
    tool: &str,
    arguments: &serde_json::Value,
    command_at: Option<&str>,
    not_covered: &[usize],
) -> Vec<String> {
    let script = match command_at {
        Some(pointer) => crate::shell::command_at(tool, arguments, pointer),
        None if crate::shell::is_shell_tool(tool) => crate::shell::command_of(arguments).map(|(_, s)| s),
        None => None,
    };
    match script.map(|s| s.segments) {
        Some(Ok(segments)) if segments.len() > 1 => segments
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mark = if not_covered.contains(&i) {
                    "   ← no rule allows this"
                } else {
                    ""
                };
                format!("{}. {}{mark}", i + 1, crate::shell::join(&s.values()))
            })
            .collect(),
        Some(Err(opaque)) => vec![format!("not a plain command: it holds {}", opaque.why)],
        _ => Vec::new(),
    }
}

// The always-rules' view of a request on screen lives here, beside the
// request, so that `session::always` never needs the events.
impl<'a> crate::session::always::Place<'a> {
    /// Where the call on screen runs.
    pub fn of_prompt(prompt: &'a ApprovalPrompt) -> Self {
        Self {
            scope_id: prompt.scope_id,
            scope_label: &prompt.scope_label,
            session_id: prompt.agent.as_deref(),
            agent_type: prompt.subagent.as_ref().map(|s| s.kind.as_str()),
        }
    }
}

impl crate::session::always::AlwaysRule {
    /// The choices for the request on screen, bound to its agent's
    /// session when it has one.
    pub fn choices_for(prompt: &ApprovalPrompt) -> Vec<Self> {
        let mut choices = Self::choices(
            &prompt.tool,
            prompt.scope_id,
            &prompt.scope_label,
            &prompt.arguments,
            prompt.command_at.as_deref(),
        );
        for choice in &mut choices {
            choice.session_id.clone_from(&prompt.agent);
            choice.anchor.clone_from(&prompt.anchor);
            choice.agent.clone_from(&prompt.agent_name);
            choice.cwd.clone_from(&prompt.cwd);
        }
        // A subagent's call is offered rules for that subagent type first
        // (narrowest), then the same rules for every agent.
        if let Some(subagent) = &prompt.subagent {
            let narrowed: Vec<Self> = choices.iter().map(|c| c.clone().narrowed_to(&subagent.kind)).collect();
            choices.splice(0..0, narrowed);
        }
        choices
    }

    /// Why the rule, made from the request on screen, needs a second key:
    /// it allows every call of a shell tool (any command at all), or of a
    /// tool the policy's own rules ask or deny, which it would pass over.
    pub fn warning_for(&self, prompt: &ApprovalPrompt) -> Option<String> {
        if self.fit != crate::session::always::Fit::WholeTool {
            return None;
        }
        let shell = prompt.command_at.is_some() || crate::shell::is_shell_tool(&prompt.tool);
        if !shell && prompt.passed_over.is_empty() {
            return None;
        }
        let mut warning = format!("⚠ every call of {:?}", prompt.tool);
        if shell {
            warning.push_str(", a shell tool: any command at all");
        }
        if !prompt.passed_over.is_empty() {
            let rules: Vec<&str> = prompt.passed_over.iter().map(|id| &**id).collect();
            warning.push_str(&format!(
                "; these rules of the policy would no longer ask or deny its calls: {}",
                rules.join(", ")
            ));
        }
        Some(warning)
    }

    /// Whether the rule approves the request on screen. Only a request
    /// the same rule asked is taken for sure to reach it (one a later rule
    /// asked is left to the human).
    pub fn matches_prompt(&self, prompt: &ApprovalPrompt) -> bool {
        self.anchor == prompt.anchor
            && serde_json::from_str::<serde_json::Value>(&prompt.arguments).is_ok_and(|arguments| {
                self.matches_at(
                    &prompt.tool,
                    crate::session::always::Place::of_prompt(prompt),
                    &arguments,
                )
            })
    }
}
