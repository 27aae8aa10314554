//! Which subagent made a call. Claude Code puts `agent_id` and `agent_type`
//! in the hook input of a call a subagent makes (the main agent's calls have
//! neither), and Codex's hook input schemas carry the same two fields. A
//! front door copies them into the call's invocation context, beside `cwd`;
//! everything else (policy, the screen, the journal, replay) reads them
//! back from there through [`Subagent::of_context`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tether_tools::ToolExecution;

/// The invocation-context key of the subagent's type (`Explore`).
pub const TYPE_KEY: &str = "agent_type";
/// The invocation-context key of the subagent's id.
pub const ID_KEY: &str = "agent_id";

/// The agent a call comes from, by a name that outlasts its sessions: a
/// hook call's agent (`claude-code`, `codex`: its tool's metadata), else
/// the label of the topmost scope holding a session (a link agent's or an
/// MCP gateway's own name). `None` for a call of no agent session, and for
/// an agent whose only name is its session id (an unnamed link agent).
pub fn agent_of(execution: &ToolExecution) -> Option<String> {
    let metadata = execution.metadata();
    if metadata.get("hook") == Some(&Value::Bool(true)) {
        return metadata.get("agent").and_then(Value::as_str).map(str::to_owned);
    }
    let session = execution.scope()?.chain().filter(|s| s.session_id().is_some()).last()?;
    session
        .label()
        .filter(|label| Some(*label) != session.session_id())
        .map(str::to_owned)
}

/// A subagent as the agent named it: its type and, when given, its id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subagent {
    /// The subagent's type (`Explore`, `general-purpose`, a user's own).
    #[serde(rename = "agent_type")]
    pub kind: String,
    /// The agent's id for this run of the subagent.
    #[serde(rename = "agent_id", default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Subagent {
    /// The subagent named in a hook input or an invocation context (its
    /// `agent_type`, and `agent_id` if present); `None` for the main agent.
    pub fn of_context(context: Option<&Value>) -> Option<Self> {
        let context = context?;
        let text = |key: &str| {
            context
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        Some(Self {
            kind: text(TYPE_KEY)?,
            id: text(ID_KEY),
        })
    }

    /// The type of the subagent an invocation context names, borrowed.
    pub fn type_in(context: Option<&Value>) -> Option<&str> {
        context?.get(TYPE_KEY)?.as_str().filter(|s| !s.is_empty())
    }

    /// The subagent that made the call being run, if any.
    pub fn of(execution: &ToolExecution) -> Option<Self> {
        Self::of_context(execution.invocation_context())
    }

    /// The id as the screen shows it: its last four characters, enough to
    /// tell two runs of one type apart. (Codex's ids are UUIDv7, whose first
    /// characters are the time: two subagents started together share them.)
    pub fn short_id(&self) -> Option<String> {
        self.id.as_ref().map(|id| {
            let chars: Vec<char> = id.chars().collect();
            chars[chars.len().saturating_sub(4)..].iter().collect()
        })
    }

    /// `via subagent Explore a7f3`, as every screen shows it (unescaped:
    /// the views escape what an agent wrote).
    pub fn label(&self) -> String {
        match self.short_id() {
            Some(id) => format!("via subagent {} {id}", self.kind),
            None => format!("via subagent {}", self.kind),
        }
    }

    /// Adds the subagent's fields to an invocation context (made an object
    /// if it is none).
    pub fn add_to(&self, context: &mut Option<Value>) {
        let object = context.get_or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(fields) = object {
            fields.insert(TYPE_KEY.to_owned(), Value::String(self.kind.clone()));
            if let Some(id) = &self.id {
                fields.insert(ID_KEY.to_owned(), Value::String(id.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_hook_input_with_an_agent_type_names_the_subagent_and_the_main_agent_names_none() {
        let sub = Subagent::of_context(Some(&json!({"agent_id": "aed64e52aca1f6d0c", "agent_type": "Explore"})));
        assert_eq!(
            sub.as_ref().map(Subagent::label).as_deref(),
            Some("via subagent Explore 6d0c")
        );
        assert_eq!(Subagent::of_context(Some(&json!({"cwd": "/tmp"}))), None);
        assert_eq!(Subagent::of_context(Some(&json!({"agent_type": ""}))), None);
        let no_id = Subagent::of_context(Some(&json!({"agent_type": "Plan"})));
        assert_eq!(no_id.map(|s| s.label()).as_deref(), Some("via subagent Plan"));
    }

    #[test]
    fn the_short_id_is_the_ids_end_which_tells_codexs_time_ordered_ids_apart() {
        let codex = |id: &str| Subagent {
            kind: "default".into(),
            id: Some(id.into()),
        };
        let first = codex("01a2474f-094a-7a00-bbb1-1d88b41327ec").label();
        let second = codex("01a2474f-094b-7c10-8e2a-5f0c9a7d2b11").label();
        assert_eq!(first, "via subagent default 27ec");
        assert_ne!(first, second);
    }

    #[test]
    fn adding_a_subagent_keeps_what_the_context_held() {
        let mut context = Some(json!({"cwd": "/srv"}));
        let sub = Subagent {
            kind: "Explore".into(),
            id: Some("a7f3".into()),
        };
        sub.add_to(&mut context);
        assert_eq!(
            context,
            Some(json!({"cwd": "/srv", "agent_type": "Explore", "agent_id": "a7f3"}))
        );
        assert_eq!(Subagent::of_context(context.as_ref()), Some(sub));
    }
}
