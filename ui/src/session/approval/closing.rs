//! A prompt closed when its call stops waiting without an answer, and why
//! it stopped.

use std::sync::Arc;

use tether_tools::ToolExecution;

use super::notifier::Notifier;
use super::{AgentConnection, Waiting};
use crate::session::events::{AppEvent, AppEventSender};
use crate::session::notify::Lifecycle;

/// Closes the prompt if the call stops waiting without an answer (the
/// engine dropped us: the caller was cancelled, or the answerer unloaded),
/// and tells the notify command how the wait ended in every case.
pub(super) struct CloseOnDrop {
    /// The prompt on screen now (a new one after each approval of a call
    /// that needs several).
    pub id: u64,
    pub events: AppEventSender,
    pub armed: bool,
    pub execution: ToolExecution,
    /// Set when the reason is known before the drop (a timeout).
    pub reason: Option<String>,
    pub waiting: Waiting,
    pub notifier: Option<Notifier>,
    /// How it ended, for the notify command: (`approved`…, by whom).
    pub ended: Option<(&'static str, Arc<str>)>,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        let timed_out = self.reason.is_some();
        if self.armed {
            let reason = self.reason.take().unwrap_or_else(|| why_dropped(&self.execution));
            self.events.send(AppEvent::ApprovalClosed { id: self.id, reason });
        }
        self.waiting.remove(self.id);
        if let Some(notifier) = &mut self.notifier {
            let (answer, by) = match &self.ended {
                Some((answer, by)) => (*answer, by.as_ref()),
                None if timed_out => ("timed out", "timeout"),
                None => ("closed", "nobody"),
            };
            notifier.tell(Lifecycle::Closed, Some((answer, by)));
        }
    }
}

/// Why a call stopped waiting for its answer, read when it stops: its
/// agent's connection closed, its hook bridge went away, its batch was
/// cancelled, or (none of those) the answerer itself was replaced.
pub(super) fn why_dropped(execution: &ToolExecution) -> String {
    let scope = execution.scope();
    let connection = scope
        .and_then(|s| s.session())
        .and_then(|s| s.downcast_ref::<AgentConnection>());
    // The session object is inherited: the scope it was set on is the
    // highest one that still has it, and that scope's label names the agent
    // (a call may run in a child scope the agent opened).
    let agent = scope
        .and_then(|s| s.chain().filter(|s| s.session().is_some()).last().or(Some(s)))
        .and_then(|s| s.label())
        .unwrap_or("agent");
    if connection.is_some_and(|c| c.closed.is_cancelled()) {
        return format!("agent {agent} disconnected");
    }
    let cancelled = execution.cancellation().is_cancelled();
    let hook = execution.metadata().get("hook") == Some(&serde_json::Value::Bool(true));
    match (cancelled, hook) {
        (true, true) => format!("the hook of {agent} disconnected"),
        (true, false) => "its batch was cancelled".to_owned(),
        (false, _) => "the call stopped waiting (the answerer was replaced)".to_owned(),
    }
}
