//! The events pane's lines: bounded in number and in length.

use std::time::Instant;

use super::App;

/// A timestamped line of the events pane.
#[derive(Clone, Debug)]
pub struct EventLine {
    pub at: Instant,
    pub text: String,
}

/// Most events the pane keeps; older ones are dropped first.
const EVENT_LIMIT: usize = 5_000;
/// Longest events-pane line kept, in bytes.
const EVENT_LINE_BYTES: usize = 1_024;

impl App {
    pub fn note(&mut self, text: impl Into<String>) {
        let mut text = text.into();
        // A line shows a screen's width at most; a name an agent chose must
        // not make the pane's memory unbounded.
        if text.len() > EVENT_LINE_BYTES {
            let mut cut = EVENT_LINE_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        self.events.push_back(EventLine { at: self.now, text });
        while self.events.len() > EVENT_LIMIT {
            self.events.pop_front();
            // A scrolled-back view keeps showing the same line.
            if let Some(at) = &mut self.events_scroll {
                *at = at.saturating_sub(1);
            }
        }
    }
}
