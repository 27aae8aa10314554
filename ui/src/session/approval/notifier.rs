//! One approval as the notify command hears of it, and the one timer the
//! approval waits with: the notify grace, the reminder, the deadline.

use std::time::Instant;

use tether_tools::ToolExecution;

use super::Waiting;
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
}

impl Notifier {
    /// The payload is made when the command runs: its place in the queue
    /// and the time left are as they are then. An event of an approval
    /// whose waiting was not told is not told either.
    pub fn tell(&mut self, lifecycle: Lifecycle, answer: Option<(&str, &str)>) {
        match lifecycle {
            Lifecycle::Waiting => self.told = true,
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

/// What the approval's timer waits for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// The grace is over: tell the command the approval waits.
    Grace,
    /// A quarter of the time is left: remind, once.
    Reminder,
    /// No answer in time.
    Deadline,
}

/// The times an approval waits for, in order; one timer serves them all.
#[derive(Clone, Copy, Debug)]
pub(super) struct Timer {
    pub next: Next,
    asked: tokio::time::Instant,
    remind_at: tokio::time::Instant,
    deadline: tokio::time::Instant,
}

impl Timer {
    /// From when the request was asked; `notify` when a notify command listens.
    pub fn new(asked: tokio::time::Instant, timeout: std::time::Duration, notify: bool) -> Self {
        let deadline = asked + timeout;
        let mut timer = Self {
            next: Next::Deadline,
            asked,
            remind_at: deadline - timeout / 4,
            deadline,
        };
        // A request that times out within the grace is never told.
        if notify && asked + GRACE < deadline {
            timer.next = Next::Grace;
        }
        timer
    }

    /// When the timer fires next.
    pub fn at(&self) -> tokio::time::Instant {
        match self.next {
            Next::Grace => self.asked + GRACE,
            Next::Reminder => self.remind_at,
            Next::Deadline => self.deadline,
        }
    }

    /// Moves past the step that fired. A reminder due before the grace
    /// is over is not told (nor was it before the grace was the
    /// approval's own: a reminder of an approval not told is dropped).
    pub fn advance(&mut self) {
        self.next = match self.next {
            Next::Grace if self.remind_at > self.asked + GRACE => Next::Reminder,
            Next::Grace | Next::Reminder | Next::Deadline => Next::Deadline,
        };
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn steps(timeout: Duration, notify: bool) -> Vec<(Next, Duration)> {
        let asked = tokio::time::Instant::now();
        let mut timer = Timer::new(asked, timeout, notify);
        let mut seen = vec![(timer.next, timer.at() - asked)];
        while timer.next != Next::Deadline {
            timer.advance();
            seen.push((timer.next, timer.at() - asked));
        }
        seen
    }

    #[test]
    fn one_timer_waits_for_the_grace_the_reminder_and_the_deadline_in_turn() {
        let minute = Duration::from_secs(60);
        assert_eq!(
            steps(minute, true),
            [
                (Next::Grace, GRACE),
                (Next::Reminder, Duration::from_secs(45)),
                (Next::Deadline, minute)
            ]
        );
        assert_eq!(steps(minute, false), [(Next::Deadline, minute)], "nobody to tell");
        // Within the grace: never told, so never reminded.
        let short = Duration::from_millis(250);
        assert_eq!(steps(short, true), [(Next::Deadline, short)]);
        // The reminder would come before the grace is over: skipped.
        let brief = Duration::from_millis(380);
        assert_eq!(steps(brief, true), [(Next::Grace, GRACE), (Next::Deadline, brief)]);
    }
}
