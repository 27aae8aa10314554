//! The live model of one batch: a row per call in declared order, grouped by
//! ordering barriers.

use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome};

use serde_json::Value;

use crate::session::events::{CallAt, CallList, Stage};
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

/// What the console knows of one call's progress: kept for every call of
/// a batch from the start, and updated by index as the engine reports.
#[derive(Clone, Debug)]
pub struct RowState {
    pub stage: Stage,
    pub started: Option<Instant>,
    pub ended: Option<Instant>,
    pub outcome: Option<ToolExecutionOutcome>,
    /// The decision trail, once the batch's front door has taken it from
    /// the decision log; `None` while it is still there (the call is in
    /// flight, or its batch is not over), and the screen reads it there.
    pub trail: Option<Vec<TrailEntry>>,
    /// What decided it, when that is known otherwise than from the trail
    /// (read back from the journal).
    pub decided_note: Option<&'static str>,
}

impl RowState {
    const fn queued() -> Self {
        Self {
            stage: Stage::Queued,
            started: None,
            ended: None,
            outcome: None,
            trail: None,
            decided_note: None,
        }
    }

    fn weight(&self) -> usize {
        std::mem::size_of::<Self>()
            + self
                .outcome
                .as_ref()
                .map_or(0, |o| o.call_id().len() + o.name().len() + value_weight(o.value()) + 64)
            + self
                .trail
                .as_ref()
                .map_or(0, |t| t.len() * (std::mem::size_of::<TrailEntry>() + 16))
    }
}

/// One call of a batch as the console shows it: the call as declared, and
/// its progress (reached through `Deref`: `row.stage`, `row.outcome`).
#[derive(Clone, Copy, Debug)]
pub struct CallRow<'a> {
    pub call: &'a ToolCall,
    pub mode: ToolExecutionMode,
    state: &'a RowState,
}

impl<'a> CallRow<'a> {
    /// The progress, borrowed for as long as the batch.
    pub fn state(&self) -> &'a RowState {
        self.state
    }
}

impl std::ops::Deref for CallRow<'_> {
    type Target = RowState;

    fn deref(&self) -> &RowState {
        self.state
    }
}

fn call_weight(call: &ToolCall) -> usize {
    std::mem::size_of::<(ToolCall, ToolExecutionMode)>() + call.call_id.len() + call.name.len() + call.arguments.len()
}

/// Rows are built this many at a time, the first time one of them is needed.
const CHUNK: usize = 64;

/// Up to [`CHUNK`] rows, once built.
type Chunk = OnceLock<Box<[(ToolCall, ToolExecutionMode)]>>;

/// A batch's calls, built a chunk at a time the first time anything needs
/// one of them ([`CallList::Later`]): a frame builds the rows it shows (and
/// those before them, for their display lines), and a batch that scrolls
/// past unseen never copies its calls at all.
struct LazyCalls {
    len: usize,
    chunks: Box<[Chunk]>,
    /// Builds call `i` (`None` when every chunk was given at the start).
    call_at: Option<CallAt>,
    /// The display line of each row from the first, as far as known: rows
    /// plus one barrier line before every group but the first.
    lines: Mutex<Vec<usize>>,
    /// What the source holds besides the built rows.
    source_bytes: usize,
}

impl LazyCalls {
    fn new(calls: CallList) -> Self {
        match calls {
            // Already copied: nothing to save by waiting.
            CallList::Ready(calls) => {
                let len = calls.len();
                let mut calls = calls.into_iter();
                let chunks = (0..len.div_ceil(CHUNK))
                    .map(|_| OnceLock::from(calls.by_ref().take(CHUNK).collect::<Box<[_]>>()))
                    .collect();
                Self {
                    len,
                    chunks,
                    call_at: None,
                    lines: Mutex::default(),
                    source_bytes: 0,
                }
            }
            CallList::Later { len, bytes, call_at } => Self {
                len,
                chunks: (0..len.div_ceil(CHUNK)).map(|_| OnceLock::new()).collect(),
                call_at: Some(call_at),
                lines: Mutex::default(),
                source_bytes: bytes,
            },
        }
    }

    fn get(&self, i: usize) -> Option<&(ToolCall, ToolExecutionMode)> {
        let n = i / CHUNK;
        let chunk = self.chunks.get(n)?.get_or_init(|| {
            let rows = n * CHUNK..((n + 1) * CHUNK).min(self.len);
            match &self.call_at {
                Some(call_at) => rows.map(call_at).collect(),
                None => Box::default(),
            }
        });
        chunk.get(i % CHUNK)
    }

    fn mode(&self, i: usize) -> Option<ToolExecutionMode> {
        self.get(i).map(|(_, mode)| *mode)
    }

    fn starts_group(&self, i: usize) -> bool {
        i == 0
            || self.mode(i) == Some(ToolExecutionMode::Exclusive)
            || self.mode(i - 1) == Some(ToolExecutionMode::Exclusive)
    }

    /// The display lines, known from the first row on and extended (which
    /// builds the rows) until `enough` says so, or every row has one.
    fn lines_until(&self, enough: impl Fn(&[usize]) -> bool) -> MutexGuard<'_, Vec<usize>> {
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        while !enough(&lines) && lines.len() < self.len {
            let i = lines.len();
            let line = lines
                .last()
                .map_or(0, |last| last + 1 + usize::from(self.starts_group(i)));
            lines.push(line);
        }
        lines
    }

    fn bytes(&self) -> usize {
        let built: usize = self
            .chunks
            .iter()
            .filter_map(OnceLock::get)
            .flat_map(|chunk| chunk.iter())
            .map(|(call, _)| call_weight(call))
            .sum();
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner).len();
        self.source_bytes + built + lines * std::mem::size_of::<usize>()
    }
}

impl std::fmt::Debug for LazyCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyCalls")
            .field("len", &self.len)
            .field(
                "built_chunks",
                &self.chunks.iter().filter(|c| c.get().is_some()).count(),
            )
            .finish_non_exhaustive()
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
///
/// Progress is kept per call from the start; the calls themselves (their
/// text and modes) are built when first needed, so what the engine reports
/// of a batch nobody looks at costs the screen a slot update per call.
#[derive(Debug)]
pub struct BatchView {
    pub label: String,
    pub scope_label: String,
    /// The scope the batch ran in (`None` for the global layer).
    pub scope: Option<u64>,
    pub max_parallelism: usize,
    calls: LazyCalls,
    states: Vec<RowState>,
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
        calls: impl Into<CallList>,
        now: Instant,
    ) -> Self {
        let calls = calls.into();
        let states = std::iter::repeat_with(RowState::queued).take(calls.len()).collect();
        let mut view = Self {
            label,
            scope_label,
            scope: None,
            max_parallelism,
            calls: LazyCalls::new(calls),
            states,
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
        let calls: Vec<_> = batch
            .calls
            .iter()
            .map(|c| (c.record.call.clone(), c.record.mode))
            .collect();
        let mut view = Self::new(label, scope_label, 0, calls, now);
        for (state, recorded) in view.states.iter_mut().zip(&batch.calls) {
            if let Some(outcome) = &recorded.outcome {
                state.stage = Stage::Done;
                state.decided_note = Some("(read back from the journal)");
                state.trail = Some(Vec::new());
                state.outcome = Some(outcome.clone());
                view.done += 1;
            }
        }
        view.finished = Some(now);
        view.reweigh();
        view
    }

    /// How many calls the batch holds.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// Row `index`: the call and its progress.
    pub fn row(&self, index: usize) -> Option<CallRow<'_>> {
        let state = self.states.get(index)?;
        let (call, mode) = self.calls.get(index)?;
        Some(CallRow {
            call,
            mode: *mode,
            state,
        })
    }

    /// Every call's progress, in declared order (the calls not built).
    pub fn states(&self) -> &[RowState] {
        &self.states
    }

    /// Call `index`'s progress, to update.
    pub fn state_mut(&mut self, index: usize) -> Option<&mut RowState> {
        self.states.get_mut(index)
    }

    /// Where the call `call_id` is in this batch (builds every row).
    pub fn position(&self, call_id: &str) -> Option<usize> {
        (0..self.calls.len).find(|&i| self.calls.get(i).is_some_and(|(call, _)| call.call_id == call_id))
    }

    /// How many of its rows were built (shown, or looked for) so far.
    pub fn rows_built(&self) -> usize {
        (0..self.calls.chunks.len())
            .filter(|&n| self.calls.chunks[n].get().is_some())
            .map(|n| CHUNK.min(self.calls.len - n * CHUNK))
            .sum()
    }

    /// Call `index` ended with `outcome` at `at`.
    pub fn record_outcome(&mut self, index: usize, outcome: ToolExecutionOutcome, at: Instant) {
        let Some(row) = self.states.get_mut(index) else {
            return;
        };
        if row.outcome.is_none() {
            self.done += 1;
        }
        row.stage = Stage::Done;
        row.ended = Some(at);
        // The screen's clock moves once a frame; the calls' times are
        // exact, and the batch spans them all.
        self.started = self.started.min(*row.started.get_or_insert(at));
        self.finished = self.finished.map(|f| f.max(at));
        row.outcome = Some(outcome);
    }

    /// The calls' trails, as the front door took them (declared order).
    pub fn set_trails(&mut self, trails: Vec<Vec<TrailEntry>>) {
        for (state, trail) in self.states.iter_mut().zip(trails) {
            state.trail = Some(trail);
        }
    }

    /// Marks the calls `0..upto` declared (those still queued).
    pub fn declare_upto(&mut self, upto: usize) {
        let upto = upto.min(self.states.len());
        for state in self.states.get_mut(self.declared..upto).unwrap_or_default() {
            if state.stage == Stage::Queued {
                state.stage = Stage::Declared;
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
        let rows: usize = self.states.iter().map(RowState::weight).sum();
        self.weight =
            std::mem::size_of::<Self>() + self.label.len() + self.scope_label.len() + self.calls.bytes() + rows;
    }

    /// What the compact index keeps once the batch leaves memory.
    pub fn summary(&self, number: usize) -> BatchSummary {
        let failed = self
            .states
            .iter()
            .filter(|c| c.outcome.as_ref().is_some_and(|o| o.is_error()))
            .count();
        BatchSummary {
            number,
            label: self.label.as_str().into(),
            scope_label: self.scope_label.as_str().into(),
            calls: u32::try_from(self.states.len()).unwrap_or(u32::MAX),
            failed: u32::try_from(failed).unwrap_or(u32::MAX),
            journal: self.journal,
        }
    }

    /// Whether row `i` begins a group (an exclusive call, or the first of a
    /// run of parallel ones).
    pub fn starts_group(&self, i: usize) -> bool {
        i < self.calls.len && self.calls.starts_group(i)
    }

    /// How many display lines the batch takes, barriers included, counted
    /// no further than `enough` (a frame builds only the rows it shows).
    pub fn line_count_upto(&self, enough: usize) -> usize {
        let lines = self
            .calls
            .lines_until(|lines| lines.last().is_some_and(|last| last + 1 >= enough));
        lines.last().map_or(0, |last| last + 1).min(enough)
    }

    /// How many display lines the batch takes, barriers included (builds
    /// every row).
    pub fn line_count(&self) -> usize {
        self.line_count_upto(usize::MAX)
    }

    /// The display line of row `row` (0 past the last row).
    pub fn line_of(&self, row: usize) -> usize {
        let lines = self.calls.lines_until(|lines| lines.len() > row);
        lines.get(row).copied().unwrap_or(0)
    }

    /// The row on display line `line`, or `None` for a barrier line.
    pub fn row_at(&self, line: usize) -> Option<usize> {
        let lines = self
            .calls
            .lines_until(|lines| lines.last().is_some_and(|last| *last >= line));
        lines.binary_search(&line).ok()
    }

    /// Fraction of calls with an outcome.
    pub fn progress(&self) -> f64 {
        if self.states.is_empty() {
            1.0
        } else {
            self.done as f64 / self.states.len() as f64
        }
    }
}
