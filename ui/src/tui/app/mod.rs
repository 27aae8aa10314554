//! The console's state and the only code that changes it: `update` for
//! events, `handle_key` for keys. Rendering (`view`) only reads it.

mod always;
pub mod batch;
pub mod diff;
pub mod edit;
mod event_lines;
mod full_view;
pub mod group;
pub mod history;
mod input;
mod overlay;
pub mod pin_review;
pub mod prompt;
mod reviews;
mod scopes;
mod update;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_tools::{AgentPipelineScope, ToolRegistry, ToolSchemaSnapshot};

pub use crate::session::always::{AlwaysRule, AlwaysRules};
pub use crate::session::events::{
    AppEvent, AppEventReceiver, AppEventSender, ApprovalPrompt, CallList, PromptReply, Stage,
};
use crate::session::journal::JournalReader;
use crate::session::provenance::{CallKey, DecisionLog, TrailEntry, decided_by};
use crate::tui::keys::KeyContext;
pub use batch::{BatchView, CallRow, RowState};
pub use edit::{ArgumentEditor, EditVerdict};
pub use event_lines::EventLine;
pub use full_view::{FullView, wrapped_rows};
pub use group::{Group, GroupOf, GroupVerdict};
pub use history::{BatchSummary, History, HistoryLimits, Remembered};
pub use overlay::{Overlay, Pane};
pub use pin_review::HeldTool;
pub use prompt::PromptQueue;
pub use scopes::ScopeEntry;

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

/// What a key asks of the world outside the app.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    RunNextBatch,
    ReloadPolicy,
    /// `W`: a one-time link that pairs a phone or browser (`serve --web`).
    PairWeb,
    /// Write this always-rule into the policy file, then reload it.
    KeepRule(Box<AlwaysRule>),
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
    /// When the last key was typed on for an editor that closed because
    /// its request left the queue: until the typing pauses for
    /// [`ANSWER_GUARD`], each key is text meant for it, never a command
    /// (a `y` in a word must not approve the next request).
    typed_for_closed: Option<Instant>,
    /// The batch's calls the open reason editor rejects at once (`N`).
    pub group_reason: Option<Group>,
    /// The batch each waiting request is in (the screen's number), when its
    /// batch is on this screen.
    prompt_batches: std::collections::HashMap<u64, usize>,
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
    /// Why `s` keeps nothing though a policy file is in force (a bundled
    /// demo's policy, found beside its scenario, is not the user's to
    /// rewrite by a key), said where `s` would be.
    pub keep_refused: Option<String>,
    /// What the policy's reviewers answered (header, events pane).
    pub reviews: reviews::ReviewTally,
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
            keep_refused: None,
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
            typed_for_closed: None,
            group_reason: None,
            prompt_batches: Default::default(),
            confirm_quit: false,
            alerts: Vec::new(),
            notify: crate::session::notify::TerminalNotify::default(),
            reviews: reviews::ReviewTally::default(),
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

    /// How this console names its own answers: `by you (attach 2 (pts/5))`,
    /// with the name every other screen and the journal give it.
    pub fn by_you(&self) -> String {
        format!("by you ({})", crate::sanitize::escape(&self.me))
    }

    /// Where keys go now.
    pub fn key_context(&self) -> KeyContext {
        match &self.overlay {
            // Esc closes it as it closes help.
            Overlay::Help { .. } | Overlay::Pairing { .. } => KeyContext::Help,
            Overlay::Rules { .. } => KeyContext::Rules,
            Overlay::PinReview { .. } => KeyContext::PinReview,
            // The list stays answerable (Enter answers what still waits).
            Overlay::Group(_) => KeyContext::Group,
            _ if self.prompts.is_empty() => self.focus.context(),
            Overlay::Reason(_) => KeyContext::Reason,
            Overlay::Edit(_) => KeyContext::Edit,
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
