//! The live model of one batch: a row per call in declared order, grouped by
//! ordering barriers.

use std::time::Instant;

use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome};

use crate::session::events::Stage;
use crate::session::provenance::TrailEntry;

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
        Self {
            label,
            scope_label,
            max_parallelism,
            calls,
            line_of_row,
            done: 0,
            started: now,
            finished: None,
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
