//! What the reviewer spared the human: how many calls it answered, how
//! many it sent on, and the time it took (the header shows it, and each
//! review is a line in the events pane).

use std::time::Duration;

use super::App;
use crate::session::provenance::ReviewVerdict;
use crate::session::review::took;

/// The reviews this console has seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReviewTally {
    /// Allowed or denied by a reviewer: no human was asked.
    pub answered: usize,
    /// Sent on to the human by the reviewer's own choice.
    pub asked: usize,
    /// The reviewer failed, and the human was asked.
    pub failed: usize,
    /// The time every review took, together.
    pub total: Duration,
}

impl ReviewTally {
    /// `reviewer: 12 answered, 3 to you (1 failed) · 0.8 s`, or nothing
    /// before the first review.
    pub fn header(&self) -> Option<String> {
        let reviewed = self.answered + self.asked + self.failed;
        if reviewed == 0 {
            return None;
        }
        let failed = if self.failed > 0 {
            format!(" ({} failed)", self.failed)
        } else {
            String::new()
        };
        Some(format!(
            "reviewer: {} answered, {} to you{failed} · {}",
            self.answered,
            self.asked + self.failed,
            took(self.total)
        ))
    }
}

impl App {
    /// A reviewer answered a call (or failed).
    pub(super) fn reviewed(
        &mut self,
        reviewer: &str,
        tool: &str,
        call_id: &str,
        verdict: ReviewVerdict,
        reason: &str,
        elapsed: Duration,
    ) {
        let tally = &mut self.reviews;
        tally.total += elapsed;
        let what = match verdict {
            ReviewVerdict::Allow => {
                tally.answered += 1;
                "allowed"
            }
            ReviewVerdict::Deny => {
                tally.answered += 1;
                "denied"
            }
            ReviewVerdict::Ask => {
                tally.asked += 1;
                "asked you about"
            }
            ReviewVerdict::Failed => {
                tally.failed += 1;
                "failed on"
            }
        };
        self.note(format!(
            "reviewer {} {what} {} ({}) in {}: {}",
            crate::sanitize::escape(reviewer),
            crate::sanitize::escape(tool),
            crate::sanitize::escape(call_id),
            took(elapsed),
            crate::sanitize::escape(reason)
        ));
    }
}
