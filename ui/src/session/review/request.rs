//! What a reviewer is given: the call, where it comes from, the rule that
//! routed it, and the last few calls of the same agent with their outcomes
//! (docs/policy.md, "What a reviewer receives").

use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;
use serde_json::{Value, json};
use tether_tools::{ToolExecution, ToolExecutionOutcome};

use crate::session::provenance::{CallKey, DecisionLog, decided_by};

/// How many earlier calls of the same agent a reviewer sees.
pub const RECENT_CALLS: usize = 5;

/// How many agents' recent calls are kept at most (the least recently
/// active are forgotten first).
const AGENTS_KEPT: usize = 1_024;

/// An argument longer than this is cut in the recent calls (the call under
/// review is always given whole).
const RECENT_ARGUMENT_CHARS: usize = 512;

/// Which agent a call belongs to: its session, else its topmost scope.
fn agent_key(execution: &ToolExecution) -> Option<String> {
    if let Some(session) = execution.session_id() {
        return Some(format!("session:{session}"));
    }
    let scope = execution.scope()?;
    scope.chain().last().map(|root| format!("scope:{}", root.id()))
}

/// The last calls of each agent, with their outcomes. Cheap to clone.
#[derive(Clone)]
pub struct History {
    by_agent: Arc<Mutex<LruCache<String, VecDeque<Value>>>>,
}

impl Default for History {
    fn default() -> Self {
        Self {
            by_agent: Arc::new(Mutex::new(LruCache::new(
                NonZeroUsize::new(AGENTS_KEPT).unwrap_or(NonZeroUsize::MIN),
            ))),
        }
    }
}

impl History {
    /// Keeps a finished call (a result listener calls this).
    pub fn record(&self, execution: &ToolExecution, outcome: &ToolExecutionOutcome, log: &DecisionLog) {
        let Some(agent) = agent_key(execution) else { return };
        let decider = log.with_trail(&CallKey::of(execution), |trail| decided_by(outcome, trail));
        let mut arguments = execution.raw_arguments().to_owned();
        if let Some((cut, _)) = arguments.char_indices().nth(RECENT_ARGUMENT_CHARS) {
            arguments.truncate(cut);
            arguments.push('…');
        }
        let entry = json!({
            "tool": execution.name(),
            "arguments": arguments,
            "outcome": outcome.code().map_or("ok", |c| c.as_str()),
            "decided_by": decider,
        });
        let mut agents = self.by_agent.lock().unwrap_or_else(PoisonError::into_inner);
        let calls = agents.get_or_insert_mut(agent, VecDeque::new);
        if calls.len() == RECENT_CALLS {
            calls.pop_front();
        }
        calls.push_back(entry);
    }

    /// The agent's last calls, oldest first.
    pub fn recent(&self, execution: &ToolExecution) -> Vec<Value> {
        let Some(agent) = agent_key(execution) else {
            return Vec::new();
        };
        let mut agents = self.by_agent.lock().unwrap_or_else(PoisonError::into_inner);
        agents
            .get(&agent)
            .map(|calls| calls.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// The labels of the call's scope and its ancestors up to its agent, from
/// the call's scope up. The agent is the topmost scope that holds a
/// session (a hook session, a link connection, a gateway), or else the
/// topmost labelled one (a scenario's scopes): a scope above the agent (the
/// console's own root, `agents`) is nobody's agent.
fn agent_labels(execution: &ToolExecution) -> Vec<&str> {
    let Some(scope) = execution.scope() else {
        return Vec::new();
    };
    let chain: Vec<_> = scope.chain().collect();
    let agent = chain
        .iter()
        .rposition(|s| s.session_id().is_some())
        .unwrap_or(chain.len().saturating_sub(1));
    chain.iter().take(agent + 1).filter_map(|s| s.label()).collect()
}

/// The JSON object a reviewer is given for one call.
pub fn describe(execution: &ToolExecution, reviewer: &str, rule: &str, history: &History) -> Value {
    let labels = agent_labels(execution);
    let agent = labels.last().copied();
    let subagent = (labels.len() > 1).then(|| labels[0]);
    json!({
        "reviewer": reviewer,
        "rule": rule,
        "tool": execution.name(),
        "call_id": execution.call_id(),
        "arguments": execution.arguments(),
        "agent": agent,
        // The subagent its front door named (`{"agent_type", "agent_id"}`),
        // else a child scope's label.
        "subagent": crate::subagent::Subagent::of(execution)
            .map(|s| json!(s))
            .or_else(|| subagent.map(Value::from))
            .unwrap_or(Value::Null),
        "session": execution.session_id(),
        "scope": labels.iter().rev().copied().collect::<Vec<_>>().join("/"),
        "owner": execution.owner(),
        "cwd": crate::paths::runs_in(execution).map(|c| c.display().to_string()),
        "recent": history.recent(execution),
    })
}
