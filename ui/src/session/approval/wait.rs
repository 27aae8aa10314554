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

use super::closing::CloseOnDrop;
use super::notifier::{Escalation, Next, Notifier, Timer};
use super::settle::settle;
use super::{NEXT_PROMPT, Waiting, span};
use crate::session::events::{Answered, AppEvent, AppEventSender, ApprovalPrompt, Approvers, PromptReply, ReplySlot};
use crate::session::notify::Lifecycle;
use crate::session::provenance::{DecisionLog, TrailEntry};

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
                    let by = Arc::clone(&answered.by);
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
                        told.asked_again(id, &approvers, &by);
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
                // Every screen rings again (and the page marks it).
                if lifecycle == Lifecycle::Reminder {
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
            log.record(
                &execution,
                TrailEntry::ApprovalTimedOut {
                    waited: asked.elapsed(),
                },
            );
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
