//! A request's wait: its prompt on every screen until an answer, the
//! deadline, or the call going away. A call that needs several approvals
//! (the two-person rule) is asked again after each approval, under a new id
//! and reply slot, until enough distinct answerers approved: an answer to
//! an earlier prompt can never count twice, and the answerers who approved
//! are refused on the next.

use std::sync::Arc;
use std::time::Instant;

use tether_tools::{ApprovalAnswer, ToolExecution};
use tokio::sync::oneshot;

use super::notifier::{Escalation, Next, Notifier, Timer};
use super::settle::settle;
use super::{AgentConnection, NEXT_PROMPT, Waiting, span};
use crate::session::events::{Answered, AppEvent, AppEventSender, ApprovalPrompt, Approvers, PromptReply, ReplySlot};
use crate::session::notify::Lifecycle;
use crate::session::provenance::{DecisionLog, TrailEntry};

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

/// A request sent to the screens, and all its wait needs.
pub(super) struct Asked {
    /// The prompt on screen.
    pub id: u64,
    /// The prompt as the screens were sent it, for a call that needs
    /// several approvals (asked again from it).
    pub again: Option<ApprovalPrompt>,
    pub answer: oneshot::Receiver<Answered>,
    pub execution: ToolExecution,
    pub log: DecisionLog,
    pub events: AppEventSender,
    pub waiting: Waiting,
    pub notifier: Option<Notifier>,
    pub escalator: Option<Notifier>,
    pub escalation: Escalation,
    pub timeout: std::time::Duration,
    pub asked: Instant,
}

/// Whether `answered` is one approval of several still needed: counted,
/// and the call asked again.
fn counts_toward(approvers: &Approvers, answered: &Answered) -> bool {
    answered.reply == PromptReply::Approve && approvers.given.len() + 1 < usize::from(approvers.needed)
}

/// Waits for the request's answer (every approval a call that needs
/// several must have), its deadline, or the call going away.
pub(super) async fn wait(asked: Asked) -> ApprovalAnswer {
    let Asked {
        id,
        mut again,
        mut answer,
        execution,
        log,
        events,
        waiting,
        notifier,
        mut escalator,
        escalation,
        timeout,
        asked,
    } = asked;
    let mut approvers = again
        .as_ref()
        .map_or_else(Approvers::default, |p| p.reply.approvers().clone());
    let mut guard = CloseOnDrop {
        id,
        events,
        armed: true,
        execution: execution.clone(),
        reason: None,
        waiting,
        notifier,
        ended: None,
    };
    // One timer: the notify grace, the reminder, the deadline in turn.
    let mut timer = Timer::new(
        tokio::time::Instant::now(),
        timeout,
        guard.notifier.is_some(),
        &escalation,
    );
    let sleep = tokio::time::sleep_until(timer.at());
    tokio::pin!(sleep);
    let reply = loop {
        tokio::select! {
            reply = &mut answer => match (reply, again.as_mut()) {
                (Ok(answered), Some(prompt)) if counts_toward(&approvers, &answered) => {
                    // One more distinct answerer approved: recorded, and the
                    // call asked again of the others, on every screen.
                    if let Some(of) = answered.group {
                        log.record(&execution, TrailEntry::AnsweredInGroup { of });
                    }
                    log.record(&execution, TrailEntry::Human {
                        approved: true,
                        reason: None,
                        by: Arc::clone(&answered.by),
                        waited: asked.elapsed(),
                    });
                    approvers.given.push(Arc::clone(&answered.by));
                    guard.events.send(AppEvent::ApprovalAnswered {
                        id: guard.id,
                        by: answered.by,
                        answer: format!(
                            "approved ({} of {} approvals; asked again of another answerer)",
                            approvers.given.len(),
                            approvers.needed
                        ),
                    });
                    let (slot, next) = ReplySlot::after(approvers.clone());
                    let id = NEXT_PROMPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    guard.waiting.replace(guard.id, id);
                    guard.id = id;
                    for told in [&mut guard.notifier, &mut escalator].into_iter().flatten() {
                        told.id = id;
                    }
                    prompt.id = id;
                    prompt.reply = slot;
                    // New on every screen: a key meant for the prompt before
                    // it must not answer this one.
                    prompt.asked_at = Instant::now();
                    guard.events.send(AppEvent::ApprovalRequested(Box::new(prompt.clone())));
                    answer = next;
                }
                (other, _) => break Some(other),
            },
            () = &mut sleep => {
                let lifecycle = match timer.next() {
                    Next::Deadline => break None,
                    Next::Grace => Lifecycle::Waiting,
                    Next::Reminder => Lifecycle::Reminder,
                    Next::Escalate => Lifecycle::Escalated,
                };
                match lifecycle {
                    Lifecycle::Escalated => {
                        if let Some(escalator) = &mut escalator {
                            escalator.tell(lifecycle, None);
                        }
                    }
                    _ => {
                        if let Some(notifier) = &mut guard.notifier {
                            notifier.tell(lifecycle, None);
                        }
                    }
                }
                // `--remind-after`: every screen rings again.
                if lifecycle == Lifecycle::Reminder && escalation.remind_after.is_some() {
                    guard.events.send(AppEvent::ApprovalReminder { id: guard.id });
                }
                timer.advance();
                sleep.as_mut().reset(timer.at());
            }
        }
    };
    match reply {
        Some(reply) => {
            guard.armed = false;
            settle(reply, &execution, &log, &mut guard, asked)
        }
        None => {
            guard.reason = Some(format!("no answer in {}", span(timeout)));
            log.record(&execution, TrailEntry::ApprovalTimedOut);
            // UNAVAILABLE, never a rejection: nobody said no.
            let reason = match approvers.given.len() {
                0 => format!("approval timed out: nobody answered within {}", span(timeout)),
                n => format!(
                    "approval timed out: {n} of {} approvals within {}; no other answerer approved",
                    approvers.needed,
                    span(timeout)
                ),
            };
            ApprovalAnswer::Unavailable { reason }
        }
    }
}
