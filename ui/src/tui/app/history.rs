//! The batches the console remembers: the recent ones in full, bounded by
//! count and by bytes, and a compact index of older ones (label, counts,
//! where the journal holds them). A console that runs all day keeps flat
//! memory; an older batch comes back from the journal on demand.

use std::collections::{BTreeMap, VecDeque};

use crate::session::journal::JournalSpan;
pub use crate::tui::app::batch::BatchSummary;
use crate::tui::app::batch::BatchView;

/// How much history is kept in full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryLimits {
    /// Most batches kept in full.
    pub batches: usize,
    /// Most bytes (estimated) of batches kept in full.
    pub bytes: usize,
    /// Most older batches kept in the compact index; older ones are counted.
    pub index: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        Self {
            batches: 500,
            bytes: 64 << 20,
            index: 50_000,
        }
    }
}

/// Where a batch number stands.
#[derive(Debug)]
pub enum Remembered<'a> {
    Full(&'a BatchView),
    Summary(&'a BatchSummary),
    /// Older than the compact index reaches, or never started.
    Gone,
}

/// The console's batches: every number from 0 to [`History::len`] is in
/// full, in the index, or counted as dropped.
#[derive(Debug, Default)]
pub struct History {
    limits: HistoryLimits,
    recent: BTreeMap<usize, BatchView>,
    /// Estimated bytes of `recent`.
    bytes: usize,
    older: VecDeque<BatchSummary>,
    /// Batches evicted and no longer in the index either.
    dropped: usize,
    /// One past the highest batch number seen.
    len: usize,
    /// How many batches a replay holds, known before they run.
    expected: usize,
    /// Scope labels the index shares, most recent last.
    scopes: VecDeque<std::sync::Arc<str>>,
}

impl History {
    pub fn new(limits: HistoryLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    pub fn limits(&self) -> HistoryLimits {
        self.limits
    }

    /// How many batches the console has seen.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Says how many batches there will be (a replay's), so a title counts
    /// the batches still to run.
    pub fn expect(&mut self, total: usize) {
        self.expected = total;
    }

    /// Batches in all: those seen, or those a replay holds when more.
    pub fn total(&self) -> usize {
        self.len.max(self.expected)
    }

    /// Batches kept in full now.
    pub fn full_count(&self) -> usize {
        self.recent.len()
    }

    /// Estimated bytes of the batches kept in full.
    pub fn full_bytes(&self) -> usize {
        self.bytes
    }

    /// Batches no longer kept in full (in the index or dropped).
    pub fn evicted(&self) -> usize {
        self.older.len() + self.dropped
    }

    /// Batches no longer kept in full nor in the index.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The compact index, oldest first.
    pub fn summaries(&self) -> impl Iterator<Item = &BatchSummary> {
        self.older.iter()
    }

    pub fn get(&self, number: usize) -> Option<&BatchView> {
        self.recent.get(&number)
    }

    /// Batch `number` to update. Nearly every event is for the newest
    /// batch, which is reached without a search of the tree.
    pub fn get_mut(&mut self, number: usize) -> Option<&mut BatchView> {
        if self
            .recent
            .last_key_value()
            .is_some_and(|(newest, _)| *newest == number)
        {
            return self.recent.last_entry().map(|entry| entry.into_mut());
        }
        self.recent.get_mut(&number)
    }

    /// Where a call of `scope` with this id is, in the newest batch kept in
    /// full that has it. For the rare events that name a call rather than
    /// its row (a prompt, a human's answer): the batch they belong to is
    /// almost always the newest of its scope, so this is a search of one
    /// batch, and keeps the flood of per-call events free of any index.
    /// The batch and row of `execution`: the row its sink declared it in,
    /// else the most recent row of its scope with its call id (a batch whose
    /// sink does not tell the screen).
    pub fn find_execution(&self, execution: &tether_tools::ToolExecution) -> Option<(usize, usize)> {
        let scope = execution.scope().map(tether_tools::AgentPipelineScope::id);
        let recent = || self.recent.iter().rev().filter(|(_, view)| view.scope == scope);
        recent()
            .find_map(|(number, view)| Some((*number, view.position_of_execution(execution.id())?)))
            .or_else(|| {
                recent().find_map(|(number, view)| {
                    let index = view.position(execution.call_id())?;
                    // Not taken by another execution already.
                    (view.execution(index).is_none()).then_some((*number, index))
                })
            })
    }

    /// The batch (kept in full) whose row execution `id` of `scope` is,
    /// once a stage declared it there: which batch a waiting request is in.
    pub fn batch_of(&self, scope: Option<u64>, id: tether_tools::ExecutionId) -> Option<usize> {
        self.recent
            .iter()
            .rev()
            .filter(|(_, view)| view.scope == scope)
            .find_map(|(number, view)| view.position_of_execution(id).map(|_| *number))
    }

    pub fn find_call(&self, scope: Option<u64>, call_id: &str) -> Option<(usize, usize)> {
        self.recent
            .iter()
            .rev()
            .filter(|(_, view)| view.scope == scope)
            .find_map(|(number, view)| Some((*number, view.position(call_id)?)))
    }

    pub fn remembered(&self, number: usize) -> Remembered<'_> {
        if let Some(view) = self.recent.get(&number) {
            return Remembered::Full(view);
        }
        match self.summary(number) {
            Some(summary) => Remembered::Summary(summary),
            None => Remembered::Gone,
        }
    }

    fn summary(&self, number: usize) -> Option<&BatchSummary> {
        // Evicted oldest-finished first, so the index is sorted but for
        // batches that outlived later ones; look near the sorted position.
        let at = self.older.partition_point(|s| s.number < number);
        self.older
            .range(at.saturating_sub(8)..(at + 8).min(self.older.len()))
            .find(|s| s.number == number)
            .or_else(|| self.older.iter().find(|s| s.number == number))
    }

    /// Adds (or replaces) batch `number`, then evicts what is over the limits.
    pub fn insert(&mut self, number: usize, view: BatchView) {
        self.bytes += view.weight();
        if let Some(old) = self.recent.insert(number, view) {
            self.bytes = self.bytes.saturating_sub(old.weight());
        }
        self.len = self.len.max(number + 1);
        self.evict();
    }

    /// Marks a batch finished: its weight is counted again (its outcomes are
    /// in now), and what is over the limits goes.
    pub fn finished(&mut self, number: usize, update: impl FnOnce(&mut BatchView)) {
        if let Some(view) = self.recent.get_mut(&number) {
            let before = view.weight();
            update(view);
            view.reweigh();
            self.bytes = self.bytes.saturating_sub(before) + view.weight();
        }
        self.evict();
    }

    /// Notes where the journal holds batch `number`.
    pub fn journaled(&mut self, number: usize, span: JournalSpan) {
        if let Some(view) = self.recent.get_mut(&number) {
            view.journal = Some(span);
        } else if let Some(summary) = self.older.iter_mut().rev().find(|s| s.number == number) {
            summary.journal = Some(span);
        }
    }

    /// One allocation per scope label, not per batch, for the recent scopes.
    fn intern(&mut self, label: std::sync::Arc<str>) -> std::sync::Arc<str> {
        if let Some(shared) = self.scopes.iter().rev().find(|s| ***s == *label) {
            return std::sync::Arc::clone(shared);
        }
        self.scopes.push_back(std::sync::Arc::clone(&label));
        if self.scopes.len() > 64 {
            self.scopes.pop_front();
        }
        label
    }

    fn over(&self) -> bool {
        self.recent.len() > self.limits.batches || self.bytes > self.limits.bytes
    }

    fn evict(&mut self) {
        while self.over() && self.recent.len() > 1 {
            // The oldest finished batch goes; one still running keeps its
            // rows until it ends, and the newest always stays.
            let newest = self.recent.keys().next_back().copied();
            let Some(number) = self
                .recent
                .iter()
                .find(|(n, v)| v.finished.is_some() && Some(**n) != newest)
                .map(|(n, _)| *n)
            else {
                break;
            };
            let Some(view) = self.recent.remove(&number) else {
                break;
            };
            self.bytes = self.bytes.saturating_sub(view.weight());
            let mut summary = view.summary(number);
            summary.scope_label = self.intern(summary.scope_label);
            self.older.push_back(summary);
            while self.older.len() > self.limits.index {
                self.older.pop_front();
                self.dropped += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Instant;

    use serde_json::json;
    use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome};

    use super::*;

    fn batch(calls: usize, payload: usize) -> BatchView {
        let calls: Vec<_> = (0..calls)
            .map(|i| {
                let args = format!("{{\"text\":\"{}\"}}", "x".repeat(payload));
                (
                    ToolCall::new(format!("c{i}"), "read_file", args),
                    ToolExecutionMode::Parallel,
                )
            })
            .collect();
        BatchView::new("agent · b".into(), "agent".into(), 4, calls, Instant::now())
    }

    fn run(history: &mut History, number: usize, calls: usize, payload: usize) {
        history.insert(number, batch(calls, payload));
        history.finished(number, |view| {
            for i in 0..view.len() {
                let call_id = view.row(i).unwrap().call.call_id.clone();
                let value = json!({"contents": "y".repeat(payload)});
                let outcome = ToolExecutionOutcome::from_parts(call_id, "read_file", Ok(value));
                view.record_outcome(i, outcome, Instant::now());
            }
            view.finished = Some(Instant::now());
        });
    }

    #[test]
    fn only_the_most_recent_batches_are_kept_in_full() {
        let mut history = History::new(HistoryLimits {
            batches: 3,
            ..HistoryLimits::default()
        });
        for n in 0..10 {
            run(&mut history, n, 2, 10);
        }
        assert_eq!(history.len(), 10);
        assert_eq!(history.full_count(), 3);
        assert!(history.get(6).is_none());
        assert!(history.get(7).is_some() && history.get(9).is_some());
        let numbers: Vec<usize> = history.summaries().map(|s| s.number).collect();
        assert_eq!(numbers, (0..7).collect::<Vec<_>>());
        let Remembered::Summary(summary) = history.remembered(4) else {
            panic!("batch 4 should be in the index");
        };
        assert_eq!((summary.calls, summary.failed, &*summary.label), (2, 0, "agent · b"));
    }

    #[test]
    fn the_byte_limit_evicts_before_the_count_limit_does() {
        let mut history = History::new(HistoryLimits {
            batches: 500,
            bytes: 100_000,
            index: 1_000,
        });
        for n in 0..200 {
            run(&mut history, n, 5, 1_000);
        }
        assert!(history.full_bytes() <= 100_000, "{}", history.full_bytes());
        assert!(history.full_count() < 20 && history.full_count() > 1);
        assert_eq!(history.evicted() + history.full_count(), 200);
    }

    #[test]
    fn the_compact_index_is_bounded_and_counts_what_it_dropped() {
        let mut history = History::new(HistoryLimits {
            batches: 2,
            bytes: usize::MAX,
            index: 5,
        });
        for n in 0..20 {
            run(&mut history, n, 1, 1);
        }
        assert_eq!(history.summaries().count(), 5);
        assert_eq!(history.dropped(), 13);
        assert!(matches!(history.remembered(3), Remembered::Gone));
        assert!(matches!(history.remembered(14), Remembered::Summary(_)));
    }

    #[test]
    fn a_running_batch_is_never_evicted_and_the_newest_always_stays() {
        let mut history = History::new(HistoryLimits {
            batches: 1,
            bytes: 1,
            index: 10,
        });
        history.insert(0, batch(3, 10));
        run(&mut history, 1, 1, 10);
        run(&mut history, 2, 1, 10);
        assert!(history.get(0).is_some(), "still running");
        assert!(history.get(2).is_some(), "the newest");
        assert!(history.get(1).is_none());
    }

    #[test]
    fn a_journal_span_follows_the_batch_into_the_index() {
        let mut history = History::new(HistoryLimits {
            batches: 1,
            ..HistoryLimits::default()
        });
        history.insert(0, batch(1, 1));
        let span = JournalSpan {
            batch_id: 7,
            file: 1,
            start: 10,
            end: 99,
        };
        history.journaled(0, span);
        history.finished(0, |v| v.finished = Some(Instant::now()));
        run(&mut history, 1, 1, 1);
        let Remembered::Summary(summary) = history.remembered(0) else {
            panic!("evicted into the index");
        };
        assert_eq!(summary.journal, Some(span));
    }
}
