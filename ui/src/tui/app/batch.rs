//! The live model of one batch: a row per call in declared order, grouped by
//! ordering barriers.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome};

use serde_json::Value;

use crate::session::events::{CallAt, CallList, Stage};
use crate::session::journal::JournalSpan;
use crate::session::progress::BatchProgress;
use crate::session::provenance::TrailEntry;
use crate::session::trails::BatchTrails;

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

/// What the screen itself knows of one call, besides the start and the
/// outcome the engine writes into the batch's [`BatchProgress`].
#[derive(Clone, Debug)]
pub struct RowState {
    /// Before its body starts: queued, declared, waiting for a human, its
    /// guards. (Running and done come from the progress slots.)
    pub stage: Stage,
    /// When a stage before its body was first reported (a human's prompt):
    /// its time runs from then.
    pub asked_at: Option<Instant>,
    /// What decided it, when that is known otherwise than from the trail
    /// (read back from the journal).
    pub decided_note: Option<&'static str>,
}

impl RowState {
    const fn queued() -> Self {
        Self {
            stage: Stage::Queued,
            asked_at: None,
            decided_note: None,
        }
    }
}

fn outcome_weight(outcome: &ToolExecutionOutcome) -> usize {
    std::mem::size_of::<(ToolExecutionOutcome, Instant)>()
        + outcome.call_id().len()
        + outcome.name().len()
        + value_weight(outcome.value())
        + 64
}

/// One call of a batch as the console shows it: the call as declared, where
/// it is, and the screen's own knowledge of it (through `Deref`; its trail
/// is the batch's, [`BatchView::trail`]).
#[derive(Clone, Copy, Debug)]
pub struct CallRow<'a> {
    /// Its place in the batch (declared order).
    pub index: usize,
    pub call: &'a ToolCall,
    pub mode: ToolExecutionMode,
    /// Done once it has an outcome, running once it started, else what the
    /// screen knows ([`RowState::stage`]).
    pub stage: Stage,
    pub started: Option<Instant>,
    pub ended: Option<Instant>,
    pub outcome: Option<&'a ToolExecutionOutcome>,
    state: &'a RowState,
}

impl<'a> CallRow<'a> {
    /// The screen's own knowledge, borrowed for as long as the batch.
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
                Some(call_at) => rows.map(|i| call_at(i)).collect(),
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
    /// Where each call is, as the batch's sink (or an event) reports it.
    progress: Arc<BatchProgress>,
    /// The calls' decision trails, once the batch's front door has taken
    /// them from the decision log; `None` while they are still there (the
    /// batch is not over), and the screen reads a call's trail there.
    trails: Option<BatchTrails>,
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
        let progress = Arc::new(BatchProgress::new(calls.len(), now));
        Self::with_progress(label, scope_label, max_parallelism, calls, progress, now)
    }

    /// A batch whose calls' starts and outcomes are written into `progress`
    /// by its sink (as many slots as calls).
    pub fn with_progress(
        label: String,
        scope_label: String,
        max_parallelism: usize,
        calls: impl Into<CallList>,
        progress: Arc<BatchProgress>,
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
            progress,
            trails: None,
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
        for (index, (state, recorded)) in view.states.iter_mut().zip(&batch.calls).enumerate() {
            if let Some(outcome) = &recorded.outcome {
                state.decided_note = Some("(read back from the journal)");
                view.progress.finish(index, outcome.clone(), now);
            }
        }
        view.trails = Some(batch.calls.iter().map(|_| Vec::new()).collect());
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
        let outcome = self.progress.outcome(index);
        Some(CallRow {
            index,
            call,
            mode: *mode,
            stage: self.stage(index)?,
            started: state.asked_at.or(self.progress.started(index)),
            ended: outcome.map(|(_, at)| *at),
            outcome: outcome.map(|(o, _)| o),
            state,
        })
    }

    /// Where call `index` is (`None` past the last), without building it.
    pub fn stage(&self, index: usize) -> Option<Stage> {
        let state = self.states.get(index)?;
        Some(if self.progress.outcome(index).is_some() {
            Stage::Done
        } else if self.progress.started(index).is_some() {
            Stage::Running
        } else {
            state.stage
        })
    }

    /// How many calls have an outcome.
    pub fn done(&self) -> usize {
        self.progress.done()
    }

    /// The slots the batch's sink writes into.
    pub fn slots(&self) -> &Arc<BatchProgress> {
        &self.progress
    }

    /// Call `index`'s progress, to update.
    pub fn state_mut(&mut self, index: usize) -> Option<&mut RowState> {
        self.states.get_mut(index)
    }

    /// Where the call `call_id` is in this batch (builds every row).
    /// The row of execution `id`, once its sink (or a stage) declared it.
    pub fn position_of_execution(&self, id: tether_tools::ExecutionId) -> Option<usize> {
        (0..self.calls.len).find(|&i| self.progress.execution(i) == Some(id))
    }

    /// Notes that row `index` is execution `id` (the first word stays).
    pub fn declare_execution(&self, index: usize, id: tether_tools::ExecutionId) {
        self.progress.declare(index, id);
    }

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

    /// Call `index`'s body started at `at` (the first start counts).
    pub fn record_start(&mut self, index: usize, at: Instant) {
        self.progress.start(index, at);
    }

    /// Call `index` reached `stage` before its body (a human's prompt, its
    /// guards) at `at`; its time runs from the first such report.
    pub fn record_stage(&mut self, index: usize, stage: Stage, at: Instant) {
        if let Some(state) = self.states.get_mut(index) {
            state.stage = stage;
            state.asked_at.get_or_insert(at);
        }
    }

    /// Call `index` ended with `outcome` at `at`.
    pub fn record_outcome(&mut self, index: usize, outcome: ToolExecutionOutcome, at: Instant) {
        self.progress.finish(index, outcome, at);
    }

    /// The batch is over: it spans its calls' times, and ends no earlier
    /// than `now` nor than its last call.
    pub fn finish(&mut self, now: Instant) {
        let times = self
            .progress
            .times()
            .zip(&self.states)
            .map(|((body, end), state)| (state.asked_at.or(body), end));
        let (first, last) = times.fold((None, None), |(first, last), (start, end)| {
            (
                start.map_or(first, |s: Instant| Some(first.map_or(s, |f: Instant| f.min(s)))),
                end.map_or(last, |e: Instant| Some(last.map_or(e, |l: Instant| l.max(e)))),
            )
        });
        // The screen's clock moves once a frame; the calls' times are exact.
        if let Some(first) = first {
            self.started = self.started.min(first);
        }
        self.finished = Some(last.map_or(now, |end| end.max(now)));
    }

    /// The calls' trails, as the front door took them (declared order).
    pub fn set_trails(&mut self, trails: BatchTrails) {
        self.trails = Some(trails);
    }

    /// Call `index`'s decision trail, once the front door has handed the
    /// batch's trails over (`None` before: read it from the decision log).
    pub fn trail(&self, index: usize) -> Option<Cow<'_, [TrailEntry]>> {
        self.trails.as_ref()?.get(index)
    }

    /// The execution call `index` became, once its sink declared it: the
    /// key of its trail in the decision log while it is in flight.
    pub fn execution(&self, index: usize) -> Option<tether_tools::ExecutionId> {
        self.progress.execution(index)
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
        let rows: usize = self.states.len() * std::mem::size_of::<RowState>()
            + self.trails.as_ref().map_or(0, BatchTrails::weight)
            + (0..self.progress.len())
                .filter_map(|i| self.progress.outcome(i))
                .map(|(outcome, _)| outcome_weight(outcome))
                .sum::<usize>()
            + self.progress.len() * 32;
        self.weight =
            std::mem::size_of::<Self>() + self.label.len() + self.scope_label.len() + self.calls.bytes() + rows;
    }

    /// What the compact index keeps once the batch leaves memory.
    pub fn summary(&self, number: usize) -> BatchSummary {
        let failed = (0..self.progress.len())
            .filter(|&i| self.progress.outcome(i).is_some_and(|(o, _)| o.is_error()))
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
            self.done() as f64 / self.states.len() as f64
        }
    }
}
