//! Wrong secrets are answered late: one at a time, each wrong one in a row
//! waiting twice as long as the one before. One [`Slowdown`] guards the
//! attach code (`tether attach`, `tether web pair`), another the web page's
//! secrets (pairing links, device cookies), so every way of presenting a
//! secret to the console is slowed by the same rule.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How long the answer to the first wrong secret waits; each further one
/// waits twice as long as the one before, up to [`SLOWEST`].
pub const FIRST_DELAY: Duration = Duration::from_secs(1);

/// The longest a wrong secret's answer waits. Tries are one at a time and
/// each wrong attach code draws a new code, so guessing a six-digit code
/// takes on average half a million tries: at this pace, most of a year,
/// every one of them a line on the events pane.
pub const SLOWEST: Duration = Duration::from_secs(60);

/// Wrong secrets further apart than this start the delays again from
/// [`FIRST_DELAY`] (a typo today does not slow an attach next week).
pub const FORGET_AFTER: Duration = Duration::from_secs(10 * 60);

/// How long the answer to the `n`th wrong secret in a row waits (`n` ≥ 1).
pub fn delay_after(wrong: u32) -> Duration {
    let doublings = wrong.saturating_sub(1).min(16);
    FIRST_DELAY.saturating_mul(1 << doublings).min(SLOWEST)
}

/// The wrong secrets in a row so far.
#[derive(Debug, Default)]
struct Count {
    wrong: u32,
    /// On tokio's clock, as the delays are (a paused clock in tests).
    last: Option<tokio::time::Instant>,
}

/// One door's wrong tries: who checks next, and how late a wrong answer is.
#[derive(Debug, Default)]
pub struct Slowdown {
    /// Checks are one at a time, each wrong one's wait included, so tries
    /// made side by side cannot guess side by side.
    turn: tokio::sync::Mutex<()>,
    count: Mutex<Count>,
}

impl Slowdown {
    /// Waits for this door's turn: every check of a secret that can be
    /// guessed holds it, and a wrong one holds it through its wait.
    pub async fn turn(&self) -> Turn<'_> {
        Turn {
            slowdown: self,
            _held: self.turn.lock().await,
        }
    }

    fn count(&self) -> std::sync::MutexGuard<'_, Count> {
        self.count.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The turn to check a secret, held until it is dropped or, for a wrong
/// secret, until its answer's wait is over.
#[must_use = "the turn is what makes tries one at a time"]
pub struct Turn<'a> {
    slowdown: &'a Slowdown,
    _held: tokio::sync::MutexGuard<'a, ()>,
}

impl<'a> Turn<'a> {
    /// The secret was right: the delays start again from the first.
    pub fn right(self) {
        *self.slowdown.count() = Count::default();
    }

    /// The secret was wrong: counted, and the wait its answer owes, which
    /// keeps the turn until it is over.
    pub fn wrong(self) -> Late<'a> {
        let now = tokio::time::Instant::now();
        let wait = {
            let mut count = self.slowdown.count();
            if count.last.is_some_and(|at| now.duration_since(at) > FORGET_AFTER) {
                count.wrong = 0;
            }
            count.wrong = count.wrong.saturating_add(1);
            count.last = Some(now);
            delay_after(count.wrong)
        };
        Late { wait, _turn: self }
    }
}

/// A wrong secret's answer, owed after [`Late::wait`].
#[must_use = "a wrong secret is answered only after its wait"]
pub struct Late<'a> {
    /// How long the answer waits.
    pub wait: Duration,
    _turn: Turn<'a>,
}

impl Late<'_> {
    /// Waits it out, holding the turn: how long.
    pub async fn wait_out(self) -> Duration {
        tokio::time::sleep(self.wait).await;
        self.wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_wrong_one_in_a_row_waits_twice_as_long_up_to_a_minute() {
        let waits: Vec<u64> = (1..=9).map(|n| delay_after(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(delay_after(u32::MAX), SLOWEST);
    }

    #[tokio::test(start_paused = true)]
    async fn a_wrong_one_holds_the_turn_through_its_wait_and_a_right_one_starts_again() {
        let slowdown = std::sync::Arc::new(Slowdown::default());
        let started = tokio::time::Instant::now();
        let tries: Vec<_> = (0..3)
            .map(|_| {
                let slowdown = std::sync::Arc::clone(&slowdown);
                tokio::spawn(async move { slowdown.turn().await.wrong().wait_out().await })
            })
            .collect();
        for t in tries {
            assert!(t.await.is_ok());
        }
        assert_eq!(started.elapsed(), Duration::from_secs(1 + 2 + 4), "one at a time");
        slowdown.turn().await.right();
        assert_eq!(slowdown.turn().await.wrong().wait, FIRST_DELAY);
    }
}
