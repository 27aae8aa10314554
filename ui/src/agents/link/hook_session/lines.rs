//! The lines a hook decision leaves: the headless printout, and the
//! subagent fields every printed or journaled line carries.

use serde_json::{Value, json};
use tether_tools::ToolExecutionOutcome;

use super::super::protocol::HookToolUse;
use super::super::state::Link;
use crate::subagent::Subagent;

/// The subagent a hook input names, if a subagent made the call.
pub(super) fn subagent_of(params: &HookToolUse) -> Option<Subagent> {
    Subagent::of_context(Some(
        &json!({ "agent_type": params.agent_type, "agent_id": params.agent_id }),
    ))
}

/// Headless: one line per hook decision, as for an agent's outcomes.
pub(super) fn print_decision(link: &Link, params: &HookToolUse, outcome: &ToolExecutionOutcome, decided: &str) {
    if let Some(printer) = &link.outcomes {
        let line = json!({
            "agent": params.agent, "session_id": params.session_id, "hook": params.event,
            "call_id": outcome.call_id(), "name": outcome.name(), "code": outcome.code().map(|c| c.as_str()),
            "value": outcome.value(), "decided_by": decided,
        });
        let _ = printer.send(with_subagent(line, params));
    }
}

/// A printed or journaled line about the hook, with `agent_type` and
/// `agent_id` added when a subagent made the call.
pub(super) fn with_subagent(mut line: Value, params: &HookToolUse) -> Value {
    if let (Some(subagent), Some(fields)) = (subagent_of(params), line.as_object_mut()) {
        fields.insert("agent_type".to_owned(), json!(subagent.kind));
        if let Some(id) = subagent.id {
            fields.insert("agent_id".to_owned(), json!(id));
        }
    }
    line
}

pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
