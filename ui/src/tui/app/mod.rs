//! The console's state and the only code that changes it: `update` for
//! events, `handle_key` for keys. Rendering (`view`) only reads it.

pub mod batch;
pub mod diff;
mod full_view;
pub mod history;
mod input;
pub mod pin_review;
pub mod prompt;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_tools::{AgentPipelineScope, ToolRegistry, ToolSchemaSnapshot};
use tui_textarea::TextArea;

pub use crate::session::always::{AlwaysRule, AlwaysRules};
pub use crate::session::events::{
    AppEvent, AppEventReceiver, AppEventSender, ApprovalPrompt, CallList, PromptReply, Stage,
};
use crate::session::journal::JournalReader;
use crate::session::provenance::{CallKey, DecisionLog, TrailEntry, decided_by};
use crate::tui::keys::KeyContext;
pub use batch::{BatchView, CallRow, RowState};
pub use full_view::{FullView, wrapped_rows};
pub use history::{BatchSummary, History, HistoryLimits, Remembered};
pub use pin_review::HeldTool;
pub use prompt::PromptQueue;

/// The panes Tab moves between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Scopes,
    Batch,
    Detail,
    Events,
}

impl Pane {
    const ORDER: [Pane; 4] = [Pane::Scopes, Pane::Batch, Pane::Detail, Pane::Events];

    fn context(self) -> KeyContext {
        match self {
            Pane::Scopes => KeyContext::Scopes,
            Pane::Batch => KeyContext::Batch,
            Pane::Detail => KeyContext::Detail,
            Pane::Events => KeyContext::Events,
        }
    }

    fn step(self, forward: bool) -> Pane {
        let i = Self::ORDER.iter().position(|p| *p == self).unwrap_or(0);
        let n = Self::ORDER.len();
        Self::ORDER[if forward { (i + 1) % n } else { (i + n - 1) % n }]
    }
}

/// What is drawn over the panes.
#[derive(Debug, Default)]
pub enum Overlay {
    #[default]
    None,
    Help {
        scroll: u16,
    },
    FullArguments(FullView),
    /// The always-rules that fit the call on screen, narrowest first.
    Always {
        choices: Vec<AlwaysRule>,
        selected: usize,
    },
    /// The session's always-rules, to revoke one.
    Rules {
        selected: usize,
    },
    Reason(Box<TextArea<'static>>),
    /// A held MCP tool's old and new definitions, one of [`App::held`]:
    /// `shown` is the copy on screen, what `y` approves, even if the server
    /// changes the tool again meanwhile.
    PinReview {
        selected: usize,
        scroll: u16,
        shown: Box<HeldTool>,
    },
}

/// One entry of the scope tree.
#[derive(Clone, Debug)]
pub struct ScopeEntry {
    pub scope: Option<AgentPipelineScope>,
    pub label: String,
    pub depth: usize,
}

impl ScopeEntry {
    pub fn global() -> Self {
        Self {
            scope: None,
            label: "global".to_owned(),
            depth: 0,
        }
    }

    /// Entries for scopes, parents before children, each under its parent.
    pub fn tree(scopes: &[AgentPipelineScope]) -> Vec<ScopeEntry> {
        let mut entries = vec![Self::global()];
        let mut roots: Vec<&AgentPipelineScope> = scopes.iter().filter(|s| s.parent().is_none()).collect();
        roots.sort_by_key(|s| s.id());
        fn walk(scope: &AgentPipelineScope, all: &[AgentPipelineScope], depth: usize, out: &mut Vec<ScopeEntry>) {
            out.push(ScopeEntry {
                scope: Some(scope.clone()),
                label: scope
                    .label()
                    .map_or_else(|| format!("scope {}", scope.id()), str::to_owned),
                depth,
            });
            let mut children: Vec<&AgentPipelineScope> = all.iter().filter(|c| c.parent() == Some(scope)).collect();
            children.sort_by_key(|c| c.id());
            for child in children {
                walk(child, all, depth + 1, out);
            }
        }
        for root in roots {
            walk(root, scopes, 1, &mut entries);
        }
        entries
    }
}

/// What the header shows.
#[derive(Clone, Debug, Default)]
pub struct HeaderInfo {
    pub title: String,
    pub source: String,
    pub policy: Option<String>,
    pub journal: Option<String>,
    pub agents: Option<usize>,
    /// `tether serve --attach`: the code and who is attached.
    pub attach: Option<crate::session::events::AttachStatus>,
}

/// A timestamped line of the events pane.
#[derive(Clone, Debug)]
pub struct EventLine {
    pub at: Instant,
    pub text: String,
}

/// What a key asks of the world outside the app.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    RunNextBatch,
    ReloadPolicy,
    /// Write this always-rule into the policy file, then reload it.
    KeepRule(AlwaysRule),
    /// The human approved this held MCP tool's new definition (the one
    /// shown, named by its hash): tell the gateway that holds it.
    ApproveDefinition(Box<HeldTool>),
    /// Ctrl+Z: hand the terminal to the shell until it continues us.
    Suspend,
    Quit,
}

/// How long answer keys are ignored after a request reaches the head of the
/// queue (it is highlighted meanwhile): a `y` meant for the call that just
/// left the screen never lands on the next one.
pub const ANSWER_GUARD: Duration = Duration::from_millis(400);

/// Which console this screen is, and what it may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScreenRole {
    /// The console `tether serve` or `tether replay` runs in its own terminal.
    Main,
    /// A console opened by `tether attach`: quitting detaches and leaves
    /// the queue to the others; `read_only` (`--view`) never answers.
    Attached { read_only: bool },
}

/// Most events the pane keeps; older ones are dropped first.
const EVENT_LIMIT: usize = 5_000;
/// Longest events-pane line kept, in bytes.
const EVENT_LINE_BYTES: usize = 1_024;

pub struct App {
    pub info: HeaderInfo,
    pub registry: ToolRegistry,
    pub scopes: Vec<ScopeEntry>,
    pub selected_scope: usize,
    pub declarations: Vec<ToolSchemaSnapshot>,
    pub declarations_scroll: u16,
    pub batches: History,
    /// The batch on screen, by number.
    pub shown_batch: usize,
    /// The shown batch when it was read back from the journal.
    pub loaded: Option<(usize, BatchView)>,
    /// Where evicted batches are read back from (`None` without a journal).
    pub journal: Option<JournalReader>,
    pub selected_call: usize,
    pub detail_scroll: u16,
    pub events: VecDeque<EventLine>,
    /// `None` follows the newest event.
    pub events_scroll: Option<usize>,
    pub prompts: PromptQueue,
    pub always: AlwaysRules,
    pub focus: Pane,
    pub overlay: Overlay,
    pub now: Instant,
    pub started: Instant,
    /// Batches still to run in a replay (`None` when there is nothing to run).
    pub pending_batches: Option<usize>,
    pub quit: bool,
    /// Page height of the batch pane, set by the last frame.
    pub batch_page: usize,
    /// The terminal's (columns, rows) at the last frame: a page in help and the full view.
    pub screen: (u16, u16),
    /// MCP tools held until their new definition is approved.
    pub held: Vec<HeldTool>,
    /// Tools changed since `held` was found (found again once a frame).
    held_dirty: bool,
    /// Where the trails of calls in flight are read from (the detail pane
    /// of a call without an outcome yet); `None` shows only finished trails.
    pub decisions: Option<DecisionLog>,
    /// This console's name in every "answered by" (`main`, `attach 2 (pts/5)`).
    pub me: Arc<str>,
    pub role: ScreenRole,
    /// The request at the head of the queue, and since when it is there.
    head: Option<(u64, Instant)>,
    /// The request the open editor, picker or full view was opened for.
    overlay_prompt: Option<u64>,
    /// `q` was pressed with approvals pending or agents connected: the next
    /// `q` or `Enter` quits, any other key stays (`y` too).
    pub confirm_quit: bool,
    /// Approvals that started waiting since the last frame: the console
    /// rings (bell, desktop notification) once it has drawn them.
    pub alerts: Vec<Alert>,
    /// How this console's terminal is told (`--notify`).
    pub notify: crate::session::notify::TerminalNotify,
    /// The policy file `s` keeps an always-rule in; `None` (no `--policy`,
    /// the bundled demo) and the chooser does not offer `s`. Taken from the
    /// header's policy at first; a console that knows better sets it.
    pub keep_into: Option<String>,
}

/// A request that started waiting, as a terminal notification says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alert {
    pub tool: String,
    pub scope: String,
}

impl App {
    pub fn new(registry: ToolRegistry, scopes: Vec<ScopeEntry>, info: HeaderInfo, now: Instant) -> Self {
        // The header's text is the file, then what happens to unmatched calls.
        let keep_into = info
            .policy
            .as_deref()
            .map(|text| text.split(" (unmatched calls:").next().unwrap_or(text).to_owned());
        let mut app = Self {
            keep_into,
            info,
            registry,
            scopes,
            selected_scope: 0,
            declarations: Vec::new(),
            declarations_scroll: 0,
            batches: History::default(),
            shown_batch: 0,
            loaded: None,
            journal: None,
            selected_call: 0,
            detail_scroll: 0,
            events: VecDeque::new(),
            events_scroll: None,
            prompts: PromptQueue::default(),
            always: AlwaysRules::default(),
            focus: Pane::Batch,
            overlay: Overlay::None,
            now,
            started: now,
            pending_batches: None,
            quit: false,
            batch_page: 10,
            screen: (80, 24),
            held: Vec::new(),
            held_dirty: true,
            decisions: None,
            me: Arc::from("main"),
            role: ScreenRole::Main,
            head: None,
            overlay_prompt: None,
            confirm_quit: false,
            alerts: Vec::new(),
            notify: crate::session::notify::TerminalNotify::default(),
        };
        // The first real scope is more interesting than the global layer.
        if app.scopes.len() > 1 {
            app.selected_scope = 1;
        }
        app.refresh_declarations();
        app
    }

    pub fn selected_scope(&self) -> Option<&AgentPipelineScope> {
        self.scopes.get(self.selected_scope).and_then(|s| s.scope.as_ref())
    }

    fn refresh_declarations(&mut self) {
        self.declarations = self.registry.declarations(self.selected_scope());
    }

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

    pub fn current_batch(&self) -> Option<&BatchView> {
        match &self.loaded {
            Some((number, view)) if *number == self.shown_batch => Some(view),
            _ => self.batches.get(self.shown_batch),
        }
    }

    /// Whether the batch on screen was read back from the journal.
    pub fn shown_from_journal(&self) -> bool {
        self.loaded.as_ref().is_some_and(|(n, _)| *n == self.shown_batch)
    }

    /// Shows batch `number`: from memory, or read back from the journal when
    /// it is no longer kept in full (a seek to where it was recorded).
    pub fn show_batch(&mut self, number: usize) {
        self.shown_batch = number;
        self.selected_call = 0;
        self.detail_scroll = 0;
        if self.batches.get(number).is_some() || self.loaded.as_ref().is_some_and(|(n, _)| *n == number) {
            return;
        }
        self.loaded = None;
        let Remembered::Summary(summary) = self.batches.remembered(number) else {
            return;
        };
        let (Some(span), Some(reader)) = (summary.journal, &self.journal) else {
            return;
        };
        let (label, scope_label) = (summary.label.to_string(), summary.scope_label.to_string());
        match reader.read_batch(&span) {
            Ok(batch) => {
                let view = BatchView::from_journal(label, scope_label, &batch, self.now);
                self.loaded = Some((number, view));
            }
            Err(error) => self.note(format!(
                "batch {} could not be read back from the journal: {error}",
                number + 1
            )),
        }
    }

    pub fn selected_row(&self) -> Option<CallRow<'_>> {
        self.current_batch().and_then(|b| b.row(self.selected_call))
    }

    /// A row's decision trail: as its front door took it, or, before that
    /// (the call is in flight, or its batch is not over), as the decision
    /// log has it now.
    pub fn trail_of<'a>(&self, batch: &'a BatchView, row: &CallRow<'_>) -> Cow<'a, [TrailEntry]> {
        match (batch.trail(row.index), &self.decisions) {
            (Some(trail), _) => trail,
            (None, Some(log)) => match batch.execution(row.index) {
                Some(id) => Cow::Owned(log.trail(&CallKey::from(id))),
                None => Cow::Borrowed(&[]),
            },
            (None, None) => Cow::Borrowed(&[]),
        }
    }

    /// What decided a row's outcome (`rule:<id>`, `human`, …), once it has
    /// one. Worked out when shown, not when the outcome comes: most rows of
    /// a flood are never on screen.
    pub fn decided_by(&self, batch: &BatchView, row: &CallRow<'_>) -> Option<String> {
        let outcome = row.outcome.as_ref()?;
        Some(match row.decided_note {
            Some(note) => note.to_owned(),
            None => decided_by(outcome, &self.trail_of(batch, row)),
        })
    }

    /// Applies one event.
    pub fn update(&mut self, event: AppEvent) {
        match event {
            AppEvent::BatchStarted {
                batch,
                label,
                scope,
                scope_label,
                calls,
                progress,
                max_parallelism,
            } => {
                self.note(format!(
                    "batch {} started: {} ({}, scope {scope_label})",
                    batch + 1,
                    label,
                    plural(calls.len(), "call")
                ));
                let mut view = match progress {
                    // As many slots as calls, or the sink's reports would
                    // land on the wrong rows: then the events' own.
                    Some(progress) if progress.len() == calls.len() => {
                        BatchView::with_progress(label, scope_label, max_parallelism, calls, progress, self.now)
                    }
                    _ => BatchView::new(label, scope_label, max_parallelism, calls, self.now),
                };
                view.scope = scope;
                self.batches.insert(batch, view);
                self.loaded = None;
                self.shown_batch = batch;
                self.selected_call = 0;
                self.detail_scroll = 0;
            }
            AppEvent::Declared { batch, upto } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    view.declare_upto(upto);
                }
            }
            AppEvent::Started { batch, index, at } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    view.record_start(index, at);
                }
            }
            AppEvent::Stage { execution, stage, at } => {
                if let Some((batch, index)) = self.batches.find_execution(&execution) {
                    if let Some(view) = self.batches.get_mut(batch) {
                        view.declare_execution(index, execution.id());
                        // Timed from the first stage reported (a human's
                        // prompt or the body), as earlier stages are instant.
                        view.record_stage(index, stage, at);
                    }
                }
            }
            AppEvent::Progress { batch } => {
                if let Some(view) = self.batches.get(batch) {
                    view.slots().seen();
                }
            }
            AppEvent::Outcome {
                batch,
                index,
                outcome,
                at,
            } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    view.record_outcome(index, outcome, at);
                }
            }
            AppEvent::Trails { batch, trails } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    view.set_trails(trails);
                }
            }
            AppEvent::BatchFinished { batch } => {
                let now = self.now;
                if let Some(view) = self.batches.get(batch) {
                    let summary = view.summary(batch);
                    let failed = if summary.failed == 0 {
                        "none failed".to_owned()
                    } else {
                        format!("{} failed", summary.failed)
                    };
                    self.note(format!(
                        "batch {} finished: {} ({}, {failed})",
                        batch + 1,
                        summary.label,
                        plural(summary.calls as usize, "call")
                    ));
                }
                // The batch ends no earlier than its last call, so its total is
                // never shorter than a row's time.
                self.batches.finished(batch, |view| view.finish(now));
            }
            AppEvent::BatchJournaled { batch, span } => self.batches.journaled(batch, span),
            AppEvent::ApprovalRequested(prompt) => {
                self.note(format!(
                    "approval requested: {} ({}) in {}",
                    crate::sanitize::escape(&prompt.tool),
                    crate::sanitize::escape(&prompt.call_id),
                    crate::sanitize::escape(&prompt.scope_label)
                ));
                self.alerts.push(Alert {
                    tool: prompt.tool.clone(),
                    scope: prompt.scope_label.clone(),
                });
                self.prompts.push(*prompt);
                self.sync_head("");
            }
            AppEvent::ApprovalClosed { id, reason } => {
                if let Some(prompt) = self.prompts.close(id) {
                    let batch = self
                        .batches
                        .find_call(prompt.scope_id, &prompt.call_id)
                        .map_or_else(String::new, |(batch, _)| format!(", batch {}", batch + 1));
                    self.note(format!(
                        "approval of {} ({}{batch}) closed unanswered: {reason}",
                        crate::sanitize::escape(&prompt.tool),
                        crate::sanitize::escape(&prompt.call_id)
                    ));
                    self.sync_head(&format!(
                        "{} ({}) closed unanswered ({reason})",
                        crate::sanitize::escape(&prompt.tool),
                        crate::sanitize::escape(&prompt.call_id)
                    ));
                }
            }
            AppEvent::ApprovalAnswered { id, by, answer } => {
                if let Some(prompt) = self.prompts.close(id) {
                    let what = format!(
                        "{} ({}) {} by {}",
                        crate::sanitize::escape(&prompt.tool),
                        crate::sanitize::escape(&prompt.call_id),
                        crate::sanitize::escape(&answer),
                        crate::sanitize::escape(&by)
                    );
                    self.note(what.clone());
                    self.sync_head(&what);
                }
            }
            AppEvent::ToolsChanged { description } => {
                self.note(description);
                self.refresh_declarations();
                self.held_dirty = true;
            }
            AppEvent::Note(text) => self.note(text),
            AppEvent::PolicyReloaded { path, rules, header } => {
                self.info.policy = Some(header);
                self.note(format!("policy reloaded from {path}: {rules} rules"));
            }
            AppEvent::PolicyRejected { message } => self.note(format!("policy not reloaded: {message}")),
            AppEvent::AgentsChanged { connected } => self.info.agents = Some(connected),
            AppEvent::AttachChanged(status) => self.info.attach = Some(status),
            AppEvent::ScopesChanged(scopes) => {
                let selected = self.selected_scope().cloned();
                self.scopes = ScopeEntry::tree(&scopes);
                self.selected_scope = self
                    .scopes
                    .iter()
                    .position(|e| e.scope.is_some() && e.scope == selected)
                    .unwrap_or(0);
                self.refresh_declarations();
                self.held_dirty = true;
            }
        }
    }

    /// Called whenever the queue changed: when its head is no longer the
    /// request an open editor, picker or full view was opened for, that
    /// overlay closes with a notice saying `why` (what happened to the
    /// request) and what was not sent, so nothing typed for one call can
    /// answer another. A new head is highlighted, and answer keys wait
    /// [`ANSWER_GUARD`].
    fn sync_head(&mut self, why: &str) {
        let head = self.prompts.current().map(|p| (p.id, p.asked_at));
        if head.map(|(id, _)| id) == self.head.map(|(id, _)| id) {
            return;
        }
        // A request that reached an empty queue is new from when it was
        // asked; one that follows another, from now (the other just left).
        let after_another = self.head.is_some();
        self.head = head.map(|(id, asked_at)| {
            (
                id,
                if after_another {
                    self.now
                } else {
                    asked_at.min(self.now)
                },
            )
        });
        let head = head.map(|(id, _)| id);
        let Some(bound) = self.overlay_prompt else { return };
        if Some(bound) == head {
            return;
        }
        self.overlay_prompt = None;
        let lost = match std::mem::take(&mut self.overlay) {
            Overlay::Reason(editor) if editor.lines().iter().any(|l| !l.trim().is_empty()) => {
                Some("your reason was not sent")
            }
            Overlay::Reason(_) => Some("the reason editor was closed"),
            Overlay::Always { .. } => Some("no always-rule was added"),
            Overlay::FullArguments(_) => None,
            other => {
                self.overlay = other;
                None
            }
        };
        if let Some(lost) = lost {
            let why = if why.is_empty() {
                "the request left the queue"
            } else {
                why
            };
            self.note(format!("{why}; {lost}"));
        }
    }

    /// Whether the request at the head of the queue arrived too recently
    /// for an answer key to be meant for it.
    pub fn prompt_is_new(&self) -> bool {
        self.head
            .is_some_and(|(_, since)| self.now.saturating_duration_since(since) < ANSWER_GUARD)
    }

    /// Where keys go now.
    pub fn key_context(&self) -> KeyContext {
        match &self.overlay {
            Overlay::Help { .. } => KeyContext::Help,
            Overlay::Rules { .. } => KeyContext::Rules,
            Overlay::PinReview { .. } => KeyContext::PinReview,
            _ if self.prompts.is_empty() => self.focus.context(),
            Overlay::Reason(_) => KeyContext::Reason,
            Overlay::FullArguments(_) => KeyContext::FullArguments,
            Overlay::Always { .. } => KeyContext::Always,
            Overlay::None => KeyContext::Prompt,
        }
    }

    /// Time moves on (countdowns, elapsed times); held tools are looked
    /// for again, at most once a frame, after tools changed.
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        if self.held_dirty {
            self.refresh_held();
        }
    }
}

/// `1 call`, `3 calls`.
pub fn plural(n: usize, noun: &str) -> String {
    match (n, noun.ends_with("ch") || noun.ends_with('s')) {
        (1, _) => format!("1 {noun}"),
        (_, true) => format!("{n} {noun}es"),
        (_, false) => format!("{n} {noun}s"),
    }
}
