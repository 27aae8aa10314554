//! The live model of one batch: a row per call in declared order, grouped by
//! ordering barriers.

use std::time::Instant;

use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome};

use serde_json::Value;

use crate::session::events::Stage;
use crate::session::journal::JournalSpan;
use crate::session::provenance::TrailEntry;

/// What is remembered of a batch no longer kept in full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchSummary {
    pub number: usize,
    pub label: Box<str>,
    /// Shared between the batches of one scope.
    pub scope_label: std::sync::Arc<str>,
    pub calls: u32,
    pub failed: u32,
    /// Where its records are, when a journal is open.
    pub journal: Option<JournalSpan>,
}

/// One call of a batch as the console shows it.
#[derive(Clone, Debug)]
pub struct CallRow {
    pub call: ToolCall,
    pub mode: ToolExecutionMode,
    pub stage: Stage,
    pub started: Option<Instant>,
    pub ended: Option<Instant>,
    pub outcome: Option<ToolExecutionOutcome>,
    pub trail: Vec<TrailEntry>,
    pub decided_by: Option<String>,
}

impl CallRow {
    fn weight(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.call.call_id.len()
            + self.call.name.len()
            + self.call.arguments.len()
            + self
                .outcome
                .as_ref()
                .map_or(0, |o| o.call_id().len() + o.name().len() + value_weight(o.value()) + 64)
            + self.trail.len() * (std::mem::size_of::<TrailEntry>() + 16)
            + self.decided_by.as_ref().map_or(0, String::len)
    }
}

/// Roughly what a JSON value holds in memory.
fn value_weight(value: &Value) -> usize {
    const NODE: usize = std::mem::size_of::<Value>();
    match value {
        Value::String(s) => NODE + s.len(),
        Value::Array(items) => NODE + items.iter().map(value_weight).sum::<usize>(),
        Value::Object(map) => NODE + map.iter().map(|(k, v)| k.len() + 32 + value_weight(v)).sum::<usize>(),
        _ => NODE,
    }
}

/// One batch: its calls, its groups and its progress.
#[derive(Clone, Debug)]
pub struct BatchView {
    pub label: String,
    pub scope_label: String,
    pub max_parallelism: usize,
    pub calls: Vec<CallRow>,
    /// For each row, the display line it sits on: rows plus one barrier line
    /// before every group but the first. Kept so a frame costs what is
    /// visible, not the batch's size.
    line_of_row: Vec<usize>,
    pub done: usize,
    pub started: Instant,
    pub finished: Option<Instant>,
    /// Where the journal holds it, once it has finished (with a journal).
    pub journal: Option<JournalSpan>,
    /// How many of its calls (from the first) are known to be declared.
    declared: usize,
    /// Estimated bytes it holds, as of its last weighing.
    weight: usize,
}

impl BatchView {
    pub fn new(
        label: String,
        scope_label: String,
        max_parallelism: usize,
        calls: Vec<(ToolCall, ToolExecutionMode)>,
        now: Instant,
    ) -> Self {
        let mut line_of_row = Vec::with_capacity(calls.len());
        let mut line = 0;
        for i in 0..calls.len() {
            if i > 0 && Self::starts_group_in(&calls, i) {
                line += 1;
            }
            line_of_row.push(line);
            line += 1;
        }
        let calls = calls
            .into_iter()
            .map(|(call, mode)| CallRow {
                call,
                mode,
                stage: Stage::Queued,
                started: None,
                ended: None,
                outcome: None,
                trail: Vec::new(),
                decided_by: None,
            })
            .collect();
        let mut view = Self {
            label,
            scope_label,
            max_parallelism,
            calls,
            line_of_row,
            done: 0,
            started: now,
            finished: None,
            journal: None,
            declared: 0,
            weight: 0,
        };
        view.reweigh();
        view
    }

    /// A finished batch read back from the journal (no stage times, no
    /// decision trail: the journal records calls and outcomes).
    pub fn from_journal(
        label: String,
        scope_label: String,
        batch: &tether_tools::journal::JournalBatch,
        now: Instant,
    ) -> Self {
        let calls = batch
            .calls
            .iter()
            .map(|c| (c.record.call.clone(), c.record.mode))
            .collect();
        let mut view = Self::new(label, scope_label, 0, calls, now);
        for (row, recorded) in view.calls.iter_mut().zip(&batch.calls) {
            if let Some(outcome) = &recorded.outcome {
                row.stage = Stage::Done;
                row.decided_by = Some("(read back from the journal)".to_owned());
                row.outcome = Some(outcome.clone());
                view.done += 1;
            }
        }
        view.finished = Some(now);
        view.reweigh();
        view
    }

    /// Marks the calls `0..upto` declared (those still queued).
    pub fn declare_upto(&mut self, upto: usize) {
        let upto = upto.min(self.calls.len());
        for row in self.calls.get_mut(self.declared..upto).unwrap_or_default() {
            if row.stage == Stage::Queued {
                row.stage = Stage::Declared;
            }
        }
        self.declared = self.declared.max(upto);
    }

    /// Estimated bytes this batch holds.
    pub fn weight(&self) -> usize {
        self.weight
    }

    /// Counts the batch's bytes again (after its outcomes came in).
    pub fn reweigh(&mut self) {
        let rows: usize = self.calls.iter().map(CallRow::weight).sum();
        self.weight = std::mem::size_of::<Self>()
            + self.label.len()
            + self.scope_label.len()
            + self.line_of_row.len() * std::mem::size_of::<usize>()
            + rows;
    }

    /// What the compact index keeps once the batch leaves memory.
    pub fn summary(&self, number: usize) -> BatchSummary {
        let failed = self
            .calls
            .iter()
            .filter(|c| c.outcome.as_ref().is_some_and(|o| o.is_error()))
            .count();
        BatchSummary {
            number,
            label: self.label.as_str().into(),
            scope_label: self.scope_label.as_str().into(),
            calls: u32::try_from(self.calls.len()).unwrap_or(u32::MAX),
            failed: u32::try_from(failed).unwrap_or(u32::MAX),
            journal: self.journal,
        }
    }

    fn starts_group_in(calls: &[(ToolCall, ToolExecutionMode)], i: usize) -> bool {
        i == 0 || calls[i].1 == ToolExecutionMode::Exclusive || calls[i - 1].1 == ToolExecutionMode::Exclusive
    }

    /// Whether row `i` begins a group (an exclusive call, or the first of a
    /// run of parallel ones).
    pub fn starts_group(&self, i: usize) -> bool {
        i == 0
            || self.calls[i].mode == ToolExecutionMode::Exclusive
            || self.calls[i - 1].mode == ToolExecutionMode::Exclusive
    }

    /// How many display lines the batch takes, barriers included.
    pub fn line_count(&self) -> usize {
        self.line_of_row.last().map_or(0, |l| l + 1)
    }

    pub fn line_of(&self, row: usize) -> usize {
        self.line_of_row.get(row).copied().unwrap_or(0)
    }

    /// The row on display line `line`, or `None` for a barrier line.
    pub fn row_at(&self, line: usize) -> Option<usize> {
        self.line_of_row.binary_search(&line).ok()
    }

    /// Fraction of calls with an outcome.
    pub fn progress(&self) -> f64 {
        if self.calls.is_empty() {
            1.0
        } else {
            self.done as f64 / self.calls.len() as f64
        }
    }
}
