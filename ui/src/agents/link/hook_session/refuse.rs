//! A hook call whose tool name Tether cannot match exactly: refused (a deny
//! before the tool runs, a block of its result after), printed, journaled
//! and shown, so that no rule for another tool decides it.

use serde_json::{Value, json};
use tether_tools::{ToolExecutionOutcome, ToolFailureCode};

use super::super::protocol::HookToolUse;
use super::super::state::Link;
use super::lines::{now_ms, print_decision, with_subagent};
use super::reply;
use crate::session::events::AppEvent;

/// What decided a call whose tool name the console cannot match.
const UNMATCHABLE: &str = "tether: tool name";

/// Why a hook's tool name is refused, when it is not one the engine can
/// register as it is (`[A-Za-z0-9_.-]{1,64}`). Policy matches the exact
/// name the agent sent; rewriting it (a space to `_`, cut at 64) could make
/// it another tool's name and let that tool's rules decide, so such a name
/// is never rewritten: the call is refused, and the model reads why.
pub(super) fn unmatchable(name: &str) -> Option<String> {
    (!tether_tools::is_valid_tool_name(name)).then(|| {
        format!(
            "Tether matches tool names exactly, and {name:?} is not a name it can match (only letters, digits, \
             `_`, `.` and `-`, at most 64 characters): refused, so that no rule for another tool decides it"
        )
    })
}

/// Refuses a call whose tool name [`unmatchable`] rejects: a deny before
/// the tool runs, a block of its result after; printed, journaled and shown.
pub(super) async fn refuse_unmatchable(link: &Link, params: &HookToolUse, call_id: &str, why: String) -> Value {
    let code = match params.event.as_str() {
        "PostToolUse" => ToolFailureCode::Blocked,
        _ => ToolFailureCode::Denied,
    };
    link.send(AppEvent::Note(format!(
        "{} {} for {:?} refused: not a tool name Tether can match exactly",
        params.agent, params.event, params.tool_name
    )));
    let outcome = ToolExecutionOutcome::from_parts(call_id, &params.tool_name, Err((code, why)));
    print_decision(link, params, &outcome, UNMATCHABLE);
    if let Some(journal) = &link.journal {
        let event = json!({"event": "hook/refused", "ts_ms": now_ms(), "agent": params.agent,
                           "session_id": params.session_id, "hook": params.event, "call_id": call_id,
                           "name": params.tool_name, "code": code.as_str(), "decided_by": UNMATCHABLE,
                           "reason": outcome.failure().map(|f| f.message.as_str())});
        let event = with_subagent(event, params);
        if let Err(error) = journal.write_event(&event).await {
            tracing::error!(%error, "journal write failed for a refused hook");
        }
    }
    reply(&outcome, UNMATCHABLE.to_owned(), None)
}
