//! The console's state and the only code that changes it: `update` for
//! events, `handle_key` for keys. Rendering (`view`) only reads it.

pub mod batch;
pub mod event;
pub mod prompt;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crossterm::event::{KeyEvent, KeyEventKind};
use tether_tools::{AgentPipelineScope, ToolRegistry, ToolSchemaSnapshot};
use tui_textarea::TextArea;

use crate::keys::{self, Action, KeyContext};
use crate::provenance::decided_by;
pub use batch::{BatchView, CallRow};
pub use event::{AppEvent, AppEventReceiver, AppEventSender, ApprovalPrompt, PromptReply, Stage};
pub use prompt::{AlwaysRule, PromptQueue};

/// Rules added with "approve always", shared with the answerer.
pub type AlwaysRules = Arc<Mutex<Vec<AlwaysRule>>>;

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
    FullArguments {
        scroll: u16,
    },
    Reason(Box<TextArea<'static>>),
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
}

/// A timestamped line of the events pane.
#[derive(Clone, Debug)]
pub struct EventLine {
    pub at: Instant,
    pub text: String,
}

/// What a key asks of the world outside the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    RunNextBatch,
    ReloadPolicy,
    Quit,
}

/// Most events the pane keeps; older ones are dropped first.
const EVENT_LIMIT: usize = 5_000;

pub struct App {
    pub info: HeaderInfo,
    pub registry: ToolRegistry,
    pub scopes: Vec<ScopeEntry>,
    pub selected_scope: usize,
    pub declarations: Vec<ToolSchemaSnapshot>,
    pub declarations_scroll: u16,
    pub batches: Vec<BatchView>,
    pub shown_batch: usize,
    pub selected_call: usize,
    pub detail_scroll: u16,
    pub events: Vec<EventLine>,
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
    /// Row of each call in flight, by scope then call id (looked up by
    /// `&str`, so an update allocates nothing).
    index: HashMap<Option<u64>, HashMap<String, (usize, usize)>>,
}

impl App {
    pub fn new(registry: ToolRegistry, scopes: Vec<ScopeEntry>, info: HeaderInfo, now: Instant) -> Self {
        let mut app = Self {
            info,
            registry,
            scopes,
            selected_scope: 0,
            declarations: Vec::new(),
            declarations_scroll: 0,
            batches: Vec::new(),
            shown_batch: 0,
            selected_call: 0,
            detail_scroll: 0,
            events: Vec::new(),
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
            index: HashMap::new(),
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
        self.events.push(EventLine {
            at: self.now,
            text: text.into(),
        });
        if self.events.len() > EVENT_LIMIT {
            let excess = self.events.len() - EVENT_LIMIT;
            self.events.drain(..excess);
        }
    }

    pub fn current_batch(&self) -> Option<&BatchView> {
        self.batches.get(self.shown_batch)
    }

    pub fn selected_row(&self) -> Option<&CallRow> {
        self.current_batch().and_then(|b| b.calls.get(self.selected_call))
    }

    fn row_mut(&mut self, scope: Option<u64>, call_id: &str) -> Option<&mut CallRow> {
        let (batch, index) = *self.index.get(&scope)?.get(call_id)?;
        self.batches.get_mut(batch)?.calls.get_mut(index)
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
                max_parallelism,
            } => {
                let rows = self.index.entry(scope).or_default();
                for (index, (call, _)) in calls.iter().enumerate() {
                    rows.insert(call.call_id.clone(), (batch, index));
                }
                self.note(format!(
                    "batch {} started: {} ({} calls, scope {scope_label})",
                    batch + 1,
                    label,
                    calls.len()
                ));
                let view = BatchView::new(label, scope_label, max_parallelism, calls, self.now);
                if batch >= self.batches.len() {
                    self.batches.resize_with(batch, || {
                        BatchView::new(String::new(), String::new(), 1, Vec::new(), self.now)
                    });
                    self.batches.push(view);
                } else {
                    self.batches[batch] = view;
                }
                self.shown_batch = batch;
                self.selected_call = 0;
                self.detail_scroll = 0;
            }
            AppEvent::Declared { batch, index } => {
                if let Some(row) = self.batches.get_mut(batch).and_then(|b| b.calls.get_mut(index)) {
                    if row.stage == Stage::Queued {
                        row.stage = Stage::Declared;
                    }
                }
            }
            AppEvent::Stage { execution, stage, at } => {
                let scope = execution.scope().map(AgentPipelineScope::id);
                if let Some(row) = self.row_mut(scope, execution.call_id()) {
                    if row.outcome.is_none() {
                        row.stage = stage;
                        if stage == Stage::PreExecute && row.started.is_none() {
                            row.started = Some(at);
                        }
                    }
                }
            }
            AppEvent::Trail { key, entry } => {
                if let Some(row) = self.row_mut(key.scope, &key.call_id) {
                    row.trail.push(entry);
                }
            }
            AppEvent::Outcome {
                batch,
                index,
                outcome,
                at,
            } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    if let Some(row) = view.calls.get_mut(index) {
                        if row.outcome.is_none() {
                            view.done += 1;
                        }
                        row.decided_by = Some(decided_by(&outcome, &row.trail));
                        row.stage = Stage::Done;
                        row.started.get_or_insert(at);
                        row.ended = Some(at);
                        row.outcome = Some(outcome);
                    }
                }
            }
            AppEvent::BatchFinished { batch } => {
                let now = self.now;
                if let Some(view) = self.batches.get_mut(batch) {
                    view.finished = Some(now);
                    let failed = view
                        .calls
                        .iter()
                        .filter(|c| c.outcome.as_ref().is_some_and(|o| o.is_error()))
                        .count();
                    let (label, total) = (view.label.clone(), view.calls.len());
                    self.note(format!(
                        "batch {} finished: {label} ({total} calls, {failed} failed)",
                        batch + 1
                    ));
                }
                for rows in self.index.values_mut() {
                    rows.retain(|_, (b, _)| *b != batch);
                }
                self.index.retain(|_, rows| !rows.is_empty());
            }
            AppEvent::ApprovalRequested(prompt) => {
                self.note(format!(
                    "approval requested: {} ({}) in {}",
                    crate::sanitize::escape(&prompt.tool),
                    crate::sanitize::escape(&prompt.call_id),
                    crate::sanitize::escape(&prompt.scope_label)
                ));
                self.prompts.push(prompt);
            }
            AppEvent::ApprovalClosed { id } => {
                if self.prompts.close(id) {
                    self.note("an approval request closed before it was answered (timed out or cancelled)");
                    self.leave_prompt_overlays();
                }
            }
            AppEvent::ToolsChanged { description } => {
                self.note(description);
                self.refresh_declarations();
            }
            AppEvent::Note(text) => self.note(text),
            AppEvent::PolicyReloaded { path, rules } => {
                self.info.policy = Some(path.clone());
                self.note(format!("policy reloaded from {path}: {rules} rules"));
            }
            AppEvent::PolicyRejected { message } => self.note(format!("policy not reloaded: {message}")),
            AppEvent::AgentsChanged { connected } => self.info.agents = Some(connected),
            AppEvent::ScopesChanged(scopes) => {
                let selected = self.selected_scope().cloned();
                self.scopes = ScopeEntry::tree(&scopes);
                self.selected_scope = self
                    .scopes
                    .iter()
                    .position(|e| e.scope.is_some() && e.scope == selected)
                    .unwrap_or(0);
                self.refresh_declarations();
            }
        }
    }

    fn leave_prompt_overlays(&mut self) {
        if self.prompts.is_empty() && matches!(self.overlay, Overlay::Reason(_) | Overlay::FullArguments { .. }) {
            self.overlay = Overlay::None;
        }
    }

    /// Where keys go now.
    pub fn key_context(&self) -> KeyContext {
        match &self.overlay {
            Overlay::Help { .. } => KeyContext::Help,
            _ if self.prompts.is_empty() => self.focus.context(),
            Overlay::Reason(_) => KeyContext::Reason,
            Overlay::FullArguments { .. } => KeyContext::FullArguments,
            Overlay::None => KeyContext::Prompt,
        }
    }

    /// Handles one key press; returns what the world outside must do.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<Command> {
        if key.kind != KeyEventKind::Press {
            return None;
        }
        let context = self.key_context();
        let action = keys::lookup(context, &key).or_else(|| match context {
            // Typing a reason takes every other key.
            KeyContext::Reason => None,
            _ => keys::lookup(KeyContext::Global, &key),
        });
        let Some(action) = action else {
            if let Overlay::Reason(textarea) = &mut self.overlay {
                textarea.input(key);
            }
            return None;
        };
        self.act(context, action)
    }

    fn act(&mut self, context: KeyContext, action: Action) -> Option<Command> {
        match (context, action) {
            (_, Action::Quit) => {
                let n = self.prompts.answer_all(&PromptReply::Unavailable {
                    reason: "approval unavailable: the console was closed".to_owned(),
                });
                if n > 0 {
                    self.note(format!("{n} pending approvals answered unavailable on quit"));
                }
                self.quit = true;
                return Some(Command::Quit);
            }
            (_, Action::Help) => self.overlay = Overlay::Help { scroll: 0 },
            (KeyContext::Help, Action::Close) => self.overlay = Overlay::None,
            (KeyContext::Help, Action::Up) => self.scroll_help(-1),
            (KeyContext::Help, Action::Down) => self.scroll_help(1),
            (_, Action::RunNextBatch) => return Some(Command::RunNextBatch),
            (_, Action::ReloadPolicy) => return Some(Command::ReloadPolicy),
            (_, Action::FocusNext) => self.focus = self.focus.step(true),
            (_, Action::FocusPrev) => self.focus = self.focus.step(false),
            (KeyContext::Prompt, Action::Approve) => self.answer(PromptReply::Approve),
            (KeyContext::Prompt, Action::Reject) => self.answer(PromptReply::Reject { reason: None }),
            (KeyContext::Prompt, Action::ApproveAlways) => self.approve_always(),
            (KeyContext::Prompt, Action::RejectWithReason) => {
                let mut textarea = TextArea::default();
                textarea.set_placeholder_text("why? (optional; the model reads this)");
                self.overlay = Overlay::Reason(Box::new(textarea));
            }
            (KeyContext::Prompt, Action::ViewArguments) => self.overlay = Overlay::FullArguments { scroll: 0 },
            (KeyContext::Reason, Action::SubmitReason) => {
                let reason = match &self.overlay {
                    Overlay::Reason(textarea) => textarea.lines().join("\n").trim().to_owned(),
                    _ => String::new(),
                };
                self.overlay = Overlay::None;
                self.answer(PromptReply::Reject {
                    reason: (!reason.is_empty()).then_some(reason),
                });
            }
            (KeyContext::Reason | KeyContext::FullArguments, Action::Close) => self.overlay = Overlay::None,
            (KeyContext::FullArguments, action) => self.scroll_arguments(action),
            (KeyContext::Scopes, action) => self.scopes_action(action),
            (KeyContext::Batch, action) => self.batch_action(action),
            (KeyContext::Detail, action) => self.detail_scroll = scroll(self.detail_scroll, action, 10),
            (KeyContext::Events, action) => self.events_action(action),
            _ => {}
        }
        None
    }

    fn answer(&mut self, reply: PromptReply) {
        let description = match &reply {
            PromptReply::Approve => "approved".to_owned(),
            PromptReply::Reject { reason: Some(r) } => format!("rejected ({})", crate::sanitize::escape(r)),
            PromptReply::Reject { reason: None } => "rejected".to_owned(),
            other => format!("{other:?}"),
        };
        if let Some(rule) = self.prompts.answer_current(reply) {
            self.note(format!("{} {description} by you", crate::sanitize::escape(&rule.tool)));
        }
    }

    fn approve_always(&mut self) {
        let Some(prompt) = self.prompts.current() else { return };
        let rule = AlwaysRule::for_prompt(prompt);
        self.always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(rule.clone());
        let answered = self.prompts.answer_matching(&rule);
        self.note(format!(
            "rule added: {} (answered {answered} pending)",
            crate::sanitize::escape(&rule.describe())
        ));
    }

    fn scroll_help(&mut self, delta: i32) {
        if let Overlay::Help { scroll } = &mut self.overlay {
            *scroll = scroll.saturating_add_signed(delta as i16);
        }
    }

    fn scroll_arguments(&mut self, action: Action) {
        if let Overlay::FullArguments { scroll: offset } = &mut self.overlay {
            *offset = scroll(*offset, action, 10);
        }
    }

    fn scopes_action(&mut self, action: Action) {
        let last = self.scopes.len().saturating_sub(1);
        let before = self.selected_scope;
        match action {
            Action::Up => self.selected_scope = self.selected_scope.saturating_sub(1),
            Action::Down => self.selected_scope = (self.selected_scope + 1).min(last),
            Action::PageUp | Action::PageDown => {
                self.declarations_scroll = scroll(self.declarations_scroll, action, 10);
            }
            _ => {}
        }
        if before != self.selected_scope {
            self.declarations_scroll = 0;
            self.refresh_declarations();
        }
    }

    fn batch_action(&mut self, action: Action) {
        let rows = self.current_batch().map_or(0, |b| b.calls.len());
        let last = rows.saturating_sub(1);
        let page = self.batch_page.max(1);
        let before = (self.shown_batch, self.selected_call);
        match action {
            Action::Up => self.selected_call = self.selected_call.saturating_sub(1),
            Action::Down => self.selected_call = (self.selected_call + 1).min(last),
            Action::PageUp => self.selected_call = self.selected_call.saturating_sub(page),
            Action::PageDown => self.selected_call = (self.selected_call + page).min(last),
            Action::Home => self.selected_call = 0,
            Action::End => self.selected_call = last,
            Action::PrevBatch => {
                self.shown_batch = self.shown_batch.saturating_sub(1);
                self.selected_call = 0;
            }
            Action::NextBatch => {
                self.shown_batch = (self.shown_batch + 1).min(self.batches.len().saturating_sub(1));
                self.selected_call = 0;
            }
            _ => {}
        }
        if before != (self.shown_batch, self.selected_call) {
            self.detail_scroll = 0;
        }
    }

    fn events_action(&mut self, action: Action) {
        let newest = self.events.len().saturating_sub(1);
        let at = self.events_scroll.unwrap_or(newest);
        self.events_scroll = match action {
            Action::Up => Some(at.saturating_sub(1)),
            Action::Down if at + 1 >= newest => None,
            Action::Down => Some(at + 1),
            Action::End => None,
            _ => self.events_scroll,
        };
    }

    /// Time moves on (countdowns, elapsed times).
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
    }
}

fn scroll(offset: u16, action: Action, page: u16) -> u16 {
    match action {
        Action::Up => offset.saturating_sub(1),
        Action::Down => offset.saturating_add(1),
        Action::PageUp => offset.saturating_sub(page),
        Action::PageDown => offset.saturating_add(page),
        Action::Home => 0,
        _ => offset,
    }
}
