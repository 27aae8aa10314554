//! One approval as the notify command hears of it, and the one timer the
//! approval waits with: the notify grace, the reminder, the deadline.

use std::time::Instant;

use tether_tools::ToolExecution;

use super::Waiting;
use crate::session::events::Approvers;
use crate::session::notify::{self, Asking, GRACE, Lifecycle, NotifyCommand};

/// Tells the notify command about one request, once it has waited
/// [`GRACE`] and for as long as it waits after that.
///
/// It keeps the call itself, not a copy of the prompt: the payload is made
/// only when an event runs, and most approvals are answered (or closed)
/// before anyone is told, so one costs an atomic count and a cloned
/// reason, and the timer the approval waits with anyway.
pub(super) struct Notifier {
    pub command: NotifyCommand,
    pub id: u64,
    pub execution: ToolExecution,
    pub reason: Option<String>,
    pub deadline: Instant,
    pub waiting: Waiting,
    /// Whether its `approval/waiting` was told: only then are the others.
    pub told: bool,
    /// How many must approve and who did so far (the two-person rule).
    pub approvers: Approvers,
    /// Whether its `approval/escalated` was told (the escalation command's).
    pub escalated: bool,
}

impl Notifier {
    /// The payload is made when the command runs: its place in the queue
    /// and the time left are as they are then. An event of an approval
    /// whose waiting was not told is not told either.
    pub fn tell(&mut self, lifecycle: Lifecycle, answer: Option<(&str, &str)>) {
        match lifecycle {
            Lifecycle::Waiting => self.told = true,
            Lifecycle::Escalated => self.escalated = true,
            _ if !self.told => return,
            _ => {}
        }
        let (execution, reason, waiting, socket) = (
            self.execution.clone(),
            self.reason.clone(),
            self.waiting.clone(),
            std::sync::Arc::clone(&self.command.socket),
        );
        let web = self.command.web.clone();
        let (id, deadline) = (self.id, self.deadline);
        let answer = answer.map(|(answer, by)| (answer.to_owned(), crate::sanitize::escape(by)));
        let needed = self.approvers.needed;
        let approvers: Vec<String> = self
            .approvers
            .given
            .iter()
            .map(|by| crate::sanitize::escape(&crate::session::provenance::answered_at(by)))
            .collect();
        self.command.run(id, lifecycle, move || {
            let subagent = crate::subagent::Subagent::of(&execution);
            let asking = Asking {
                tool: execution.name(),
                call_id: execution.call_id(),
                agent: execution.session_id(),
                scope: execution.scope().and_then(|s| s.label()).unwrap_or("global"),
                subagent: subagent.as_ref(),
                reason: reason.as_deref(),
                arguments: execution.raw_arguments(),
            };
            let mut payload = notify::payload(
                lifecycle,
                asking,
                waiting.place(id),
                deadline.saturating_duration_since(Instant::now()),
                &socket,
            );
            payload["approvals_needed"] = needed.into();
            payload["approvers"] = approvers.into();
            if let Some(web) = web {
                payload["url"] = format!("{web}/approval/{id}").into();
            }
            if let Some((answer, by)) = answer {
                payload["answer"] = answer.into();
                payload["by"] = by.into();
            }
            payload
        });
    }
}

impl Notifier {
    /// The call was approved by one more answerer and asked again under
    /// `id` (it needs several approvals): a command told it waits hears the
    /// prompt before closed (`1 of 2 approvals`, by whom) and the new one
    /// waiting, with its own `url` and who approved so far; an escalation
    /// command already run is told again (the second person's link changed).
    /// One not told yet hears of the new prompt when its time comes.
    pub fn asked_again(&mut self, id: u64, approvers: &Approvers, by: &str) {
        self.approvers = approvers.clone();
        if self.escalated {
            self.id = id;
            self.tell(Lifecycle::Escalated, None);
            return;
        }
        let told = self.told;
        if told {
            let counted = format!("{} of {} approvals", approvers.given.len(), approvers.needed);
            self.tell(Lifecycle::Closed, Some((&counted, by)));
        }
        self.id = id;
        if told {
            self.tell(Lifecycle::Waiting, None);
        }
    }
}

/// What the approval's timer waits for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// The grace is over: tell the command the approval waits.
    Grace,
    /// Remind, once: a quarter of the time is left, or `--remind-after`.
    Reminder,
    /// Nobody answered in `--escalate-after`: run the escalation command.
    Escalate,
    /// No answer in time.
    Deadline,
}

/// When the human is reminded and the call escalated (`tether serve
/// --remind-after`, `--escalate-after`, `--escalate-cmd`), counted from
/// when the call began to wait.
#[derive(Clone, Debug, Default)]
pub struct Escalation {
    /// Remind (the notify command's `approval/reminder`, and the bell on
    /// every screen) after this long; without it, when a quarter of the
    /// time is left.
    pub remind_after: Option<std::time::Duration>,
    /// Run this command (`approval/escalated`) after this long.
    pub escalate: Option<(std::time::Duration, crate::session::notify::NotifyCommand)>,
}

/// The times an approval waits for, in order; one timer serves them all.
#[derive(Clone, Debug)]
pub(super) struct Timer {
    steps: Vec<(tokio::time::Instant, Next)>,
    at: usize,
}

impl Timer {
    /// From when the request was asked; `notify` when a notify command listens.
    pub fn new(
        asked: tokio::time::Instant,
        timeout: std::time::Duration,
        notify: bool,
        escalation: &Escalation,
    ) -> Self {
        let deadline = asked + timeout;
        let mut steps = Vec::new();
        // A request that times out within the grace is never told.
        let told = notify && asked + GRACE < deadline;
        if told {
            steps.push((asked + GRACE, Next::Grace));
        }
        // A reminder due before the grace is over is not told (nor was it
        // before the grace was the approval's own): nobody was told yet.
        match escalation.remind_after {
            Some(after) if asked + after < deadline && (!notify || after > GRACE) => {
                steps.push((asked + after, Next::Reminder));
            }
            // Every screen rings, so with or without a notify command; but
            // not within the grace, when nobody was told it waits.
            None if deadline - timeout / 4 > asked + GRACE => {
                steps.push((deadline - timeout / 4, Next::Reminder));
            }
            _ => {}
        }
        if let Some((after, _)) = &escalation.escalate {
            if asked + *after < deadline {
                steps.push((asked + *after, Next::Escalate));
            }
        }
        steps.sort_by_key(|(at, _)| *at);
        steps.push((deadline, Next::Deadline));
        Self { steps, at: 0 }
    }

    /// What the timer waits for now.
    pub fn next(&self) -> Next {
        self.steps.get(self.at).map_or(Next::Deadline, |(_, next)| *next)
    }

    /// When the timer fires next.
    pub fn at(&self) -> tokio::time::Instant {
        let last = self.steps.len().saturating_sub(1);
        self.steps[self.at.min(last)].0
    }

    /// Moves past the step that fired.
    pub fn advance(&mut self) {
        self.at = (self.at + 1).min(self.steps.len().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn steps(timeout: Duration, notify: bool) -> Vec<(Next, Duration)> {
        steps_with(timeout, notify, &Escalation::default())
    }

    fn steps_with(timeout: Duration, notify: bool, escalation: &Escalation) -> Vec<(Next, Duration)> {
        let asked = tokio::time::Instant::now();
        let mut timer = Timer::new(asked, timeout, notify, escalation);
        let mut seen = vec![(timer.next(), timer.at() - asked)];
        while timer.next() != Next::Deadline {
            timer.advance();
            seen.push((timer.next(), timer.at() - asked));
        }
        seen
    }

    #[tokio::test]
    async fn a_reminder_and_an_escalation_come_when_asked_and_only_before_the_deadline() {
        let minute = Duration::from_secs(60);
        let secs = Duration::from_secs;
        let escalation = Escalation {
            remind_after: Some(secs(10)),
            escalate: Some((
                secs(20),
                crate::session::notify::NotifyCommand::new("true".into(), String::new(), None),
            )),
        };
        assert_eq!(
            steps_with(minute, true, &escalation),
            [
                (Next::Grace, GRACE),
                (Next::Reminder, secs(10)),
                (Next::Escalate, secs(20)),
                (Next::Deadline, minute)
            ]
        );
        assert_eq!(
            steps_with(minute, false, &escalation),
            [
                (Next::Reminder, secs(10)),
                (Next::Escalate, secs(20)),
                (Next::Deadline, minute)
            ],
            "the bell reminds without a notify command"
        );
        assert_eq!(
            steps_with(secs(15), false, &escalation),
            [(Next::Reminder, secs(10)), (Next::Deadline, secs(15))]
        );
    }

    #[tokio::test]
    async fn one_timer_waits_for_the_grace_the_reminder_and_the_deadline_in_turn() {
        let minute = Duration::from_secs(60);
        assert_eq!(
            steps(minute, true),
            [
                (Next::Grace, GRACE),
                (Next::Reminder, Duration::from_secs(45)),
                (Next::Deadline, minute)
            ]
        );
        assert_eq!(
            steps(minute, false),
            [(Next::Reminder, Duration::from_secs(45)), (Next::Deadline, minute)],
            "without a notify command the screens are reminded"
        );
        // Within the grace: never told, so never reminded.
        let short = Duration::from_millis(250);
        assert_eq!(steps(short, true), [(Next::Deadline, short)]);
        assert_eq!(steps(short, false), [(Next::Deadline, short)]);
        // The reminder would come before the grace is over: skipped.
        let brief = Duration::from_millis(380);
        assert_eq!(steps(brief, true), [(Next::Grace, GRACE), (Next::Deadline, brief)]);
        assert_eq!(steps(brief, false), [(Next::Deadline, brief)]);
    }
}
