//! Where each call of a running batch is, as the engine reports it: the
//! batch sink writes a body's start and an outcome into the call's slot, and
//! the screen reads the slots when it draws. Reporting a call costs the
//! engine a store (no event, no lock, nothing queued), and a batch nobody
//! looks at costs the screen nothing per call; one event per frame, at
//! most, tells the screen there is something new ([`BatchProgress::mark`]).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tether_tools::{ExecutionId, ToolExecutionOutcome};

/// One call's slot.
#[derive(Debug, Default)]
struct Slot {
    /// When its body (or a human's prompt) started: nanoseconds after the
    /// batch's origin, plus one; 0 while it has not.
    started: AtomicU64,
    /// Its outcome and when it came; set once.
    outcome: OnceLock<(ToolExecutionOutcome, Instant)>,
    /// The execution it became, once declared: the key of its decision
    /// trail while it is in flight.
    execution: OnceLock<ExecutionId>,
}

/// The progress of one batch's calls, shared by its sink and the screen.
#[derive(Debug)]
pub struct BatchProgress {
    origin: Instant,
    slots: Box<[Slot]>,
    done: AtomicUsize,
    /// Set when something changed that the screen has not been told of.
    untold: AtomicBool,
}

impl BatchProgress {
    /// Slots for `len` calls, none started.
    pub fn new(len: usize, origin: Instant) -> Self {
        Self {
            origin,
            slots: std::iter::repeat_with(Slot::default).take(len).collect(),
            done: AtomicUsize::new(0),
            untold: AtomicBool::new(false),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Call `index` started at `at` (the first start counts).
    ///
    /// A slot already started is only read: a locked compare-exchange is a
    /// full barrier on the engine's thread, paid for nothing (an outcome
    /// marks its call started too, and most calls started already).
    pub fn start(&self, index: usize, at: Instant) {
        if let Some(slot) = self.slots.get(index).filter(|s| s.started.load(Ordering::Relaxed) == 0) {
            let nanos = u64::try_from(at.saturating_duration_since(self.origin).as_nanos()).unwrap_or(u64::MAX - 1);
            let _ = slot
                .started
                .compare_exchange(0, nanos + 1, Ordering::Release, Ordering::Relaxed);
        }
    }

    /// Call `index` was declared as execution `id`.
    pub fn declare(&self, index: usize, id: ExecutionId) {
        if let Some(slot) = self.slots.get(index) {
            let _ = slot.execution.set(id);
        }
    }

    /// The execution call `index` became, once declared.
    pub fn execution(&self, index: usize) -> Option<ExecutionId> {
        self.slots.get(index)?.execution.get().copied()
    }

    /// Call `index` ended with `outcome` at `at`; `false` when it already
    /// had one (the first stays).
    pub fn finish(&self, index: usize, outcome: ToolExecutionOutcome, at: Instant) -> bool {
        let Some(slot) = self.slots.get(index) else {
            return false;
        };
        let set = slot.outcome.set((outcome, at)).is_ok();
        if set {
            self.start(index, at);
            self.done.fetch_add(1, Ordering::Release);
        }
        set
    }

    /// When call `index` started.
    pub fn started(&self, index: usize) -> Option<Instant> {
        match self.slots.get(index)?.started.load(Ordering::Acquire) {
            0 => None,
            nanos => Some(self.origin + Duration::from_nanos(nanos - 1)),
        }
    }

    /// Call `index`'s outcome, and when it came.
    pub fn outcome(&self, index: usize) -> Option<&(ToolExecutionOutcome, Instant)> {
        self.slots.get(index)?.outcome.get()
    }

    /// How many calls have an outcome.
    pub fn done(&self) -> usize {
        self.done.load(Ordering::Acquire)
    }

    /// Notes a change; `true` when the screen had been told of every
    /// earlier one, so the caller should wake it (once, until it looks).
    pub fn mark(&self) -> bool {
        !self.untold.load(Ordering::Acquire) && !self.untold.swap(true, Ordering::AcqRel)
    }

    /// The screen looks: the next change wakes it again.
    pub fn seen(&self) {
        self.untold.store(false, Ordering::Release);
    }

    /// Every call's start and end, for the batch's own span.
    pub fn times(&self) -> impl Iterator<Item = (Option<Instant>, Option<Instant>)> + '_ {
        (0..self.slots.len()).map(|i| (self.started(i), self.outcome(i).map(|(_, at)| *at)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_start_and_the_first_outcome_stay_and_each_change_wakes_once_until_seen() {
        let origin = Instant::now();
        let progress = BatchProgress::new(2, origin);
        let (t1, t2) = (origin + Duration::from_millis(5), origin + Duration::from_millis(9));
        assert_eq!(progress.started(0), None);
        progress.start(0, t1);
        progress.start(0, t2);
        assert_eq!(progress.started(0), Some(t1));
        assert!(progress.mark(), "the first change wakes the screen");
        assert!(!progress.mark(), "the next ones wait for it to look");
        progress.seen();
        assert!(progress.mark());

        let first = ToolExecutionOutcome::from_parts("a", "t", Ok(serde_json::json!(1)));
        let second = ToolExecutionOutcome::from_parts("a", "t", Ok(serde_json::json!(2)));
        assert!(progress.finish(1, first.clone(), t2));
        assert!(!progress.finish(1, second, t2));
        assert_eq!(progress.outcome(1), Some(&(first, t2)));
        assert_eq!(
            progress.started(1),
            Some(t2),
            "an outcome without a start started when it ended"
        );
        assert_eq!(progress.done(), 1);
        assert!(!progress.finish(
            7,
            ToolExecutionOutcome::from_parts("b", "t", Ok(serde_json::json!(0))),
            t2
        ));
    }
}
