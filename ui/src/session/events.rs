//! Everything that happens, as one enum over one channel (engine listeners,
//! the batch sink, the answerer, the agent link → `App::update`).

use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome};

use tokio::sync::{Notify, oneshot};

pub use crate::session::editing::{ArgumentCheck, Editing};
use crate::session::progress::BatchProgress;
use crate::session::provenance::CallKey;
use crate::session::trails::BatchTrails;

/// Where a call is in the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Queued,
    Declared,
    PreExecute,
    AwaitingApproval,
    Guards,
    Running,
    PostExecute,
    Done,
}

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Queued => "queued",
            Stage::Declared => "declared",
            Stage::PreExecute => "pre-execute",
            Stage::AwaitingApproval => "awaiting approval",
            Stage::Guards => "guards",
            Stage::Running => "running",
            Stage::PostExecute => "post-execute",
            Stage::Done => "done",
        }
    }
}

/// A request for a human, as the prompt shows it. Every text field is as the
/// model or agent wrote it; the view escapes it. Every console that shows
/// the request holds a copy; they share one [`ReplySlot`], so the first
/// answer wins.
#[derive(Clone, Debug)]
pub struct ApprovalPrompt {
    pub id: u64,
    pub key: CallKey,
    pub tool: String,
    pub call_id: String,
    pub scope_label: String,
    pub scope_id: Option<u64>,
    pub owner: Option<String>,
    pub agent: Option<String>,
    pub reason: Option<String>,
    /// Pretty-printed arguments (or the raw text when it did not parse).
    pub arguments: String,
    /// `Ok` when the arguments validate against the tool's schema.
    pub validation: Result<(), String>,
    /// `guard <id>: <reason>` when policy knows a guard will veto the call
    /// even if it is approved.
    pub guard_veto: Option<String>,
    /// Where the policy says this tool keeps its shell command
    /// (`shell_tools`), for command-prefix always-rules.
    pub command_at: Option<String>,
    /// Where the agent runs the call (its front door's `cwd`): where
    /// `rm -rf build` runs is half of the question.
    pub cwd: Option<String>,
    /// The subagent that made the call (`via subagent Explore a7f3`), when
    /// its front door said.
    pub subagent: Option<crate::subagent::Subagent>,
    /// A shell command as the bash grammar reads it, when that is worth a
    /// look: one line per command of a compound, or why it is not plain.
    pub commands: Vec<String>,
    pub deadline: Instant,
    /// Whether `e` may edit the arguments before approving, and how an
    /// edit is checked (issue 34).
    pub editing: Editing,
    /// When the call began to wait (a request reaching an empty queue is new
    /// from then on: see `App::prompt_is_new`).
    pub asked_at: Instant,
    pub reply: ReplySlot,
}

/// Attaching, as the header shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttachStatus {
    /// The one-time code the next `tether attach` must give (a new one after
    /// every attach and every wrong code); `None` when none could be drawn.
    pub code: Option<String>,
    /// The attached consoles' names.
    pub attached: Vec<String>,
}

/// The lines [`ApprovalPrompt::commands`] shows for a call of `tool`: the
/// commands of a compound script, numbered, or what makes it not plain.
/// Commands in `not_covered` (counted from 0) are marked as the ones no
/// allow rule covers.
pub fn command_lines(
    tool: &str,
    arguments: &serde_json::Value,
    command_at: Option<&str>,
    not_covered: &[usize],
) -> Vec<String> {
    let script = match command_at {
        Some(pointer) => crate::shell::command_at(tool, arguments, pointer),
        None if crate::shell::is_shell_tool(tool) => crate::shell::command_of(arguments).map(|(_, s)| s),
        None => None,
    };
    match script.map(|s| s.segments) {
        Some(Ok(segments)) if segments.len() > 1 => segments
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mark = if not_covered.contains(&i) {
                    "   ← no rule allows this"
                } else {
                    ""
                };
                format!("{}. {}{mark}", i + 1, crate::shell::join(&s.values()))
            })
            .collect(),
        Some(Err(opaque)) => vec![format!("not a plain command: it holds {}", opaque.why)],
        _ => Vec::new(),
    }
}

// The always-rules' view of a request on screen lives here, beside the
// request, so that `session::always` never needs the events.
impl<'a> crate::session::always::Place<'a> {
    /// Where the call on screen runs.
    pub fn of_prompt(prompt: &'a ApprovalPrompt) -> Self {
        Self {
            scope_id: prompt.scope_id,
            scope_label: &prompt.scope_label,
            session_id: prompt.agent.as_deref(),
            agent_type: prompt.subagent.as_ref().map(|s| s.kind.as_str()),
        }
    }
}

impl crate::session::always::AlwaysRule {
    /// The choices for the request on screen, bound to its agent's
    /// session when it has one.
    pub fn choices_for(prompt: &ApprovalPrompt) -> Vec<Self> {
        let mut choices = Self::choices(
            &prompt.tool,
            prompt.scope_id,
            &prompt.scope_label,
            &prompt.arguments,
            prompt.command_at.as_deref(),
        );
        for choice in &mut choices {
            choice.session_id.clone_from(&prompt.agent);
        }
        // A subagent's call is offered rules for that subagent type first
        // (narrowest), then the same rules for every agent.
        if let Some(subagent) = &prompt.subagent {
            let narrowed: Vec<Self> = choices.iter().map(|c| c.clone().narrowed_to(&subagent.kind)).collect();
            choices.splice(0..0, narrowed);
        }
        choices
    }

    /// Whether the rule approves the request on screen.
    pub fn matches_prompt(&self, prompt: &ApprovalPrompt) -> bool {
        serde_json::from_str::<serde_json::Value>(&prompt.arguments).is_ok_and(|arguments| {
            self.matches_at(
                &prompt.tool,
                crate::session::always::Place::of_prompt(prompt),
                &arguments,
            )
        })
    }
}

/// A human's answer and the console it came from (`main`, `attach 2 (pts/5)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answered {
    pub reply: PromptReply,
    pub by: Arc<str>,
    /// How many calls of one batch this one answer was given for (the
    /// batch answered at once, `Y` / `N`); `None` for a single answer.
    pub group: Option<usize>,
}

/// Why an answer was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Another console answered first.
    AnsweredBy(Arc<str>),
    /// The call stopped waiting (timed out, cancelled, its agent left).
    Gone,
}

/// Where a request's one answer goes: the first console to answer takes the
/// sender, and every later answer is refused with that console's name.
#[derive(Clone, Debug)]
pub struct ReplySlot(Arc<Mutex<SlotState>>);

#[derive(Debug)]
enum SlotState {
    Waiting(oneshot::Sender<Answered>),
    Answered(Arc<str>),
}

impl ReplySlot {
    /// A slot and the receiver its answer reaches.
    pub fn channel() -> (Self, oneshot::Receiver<Answered>) {
        let (sender, receiver) = oneshot::channel();
        (Self(Arc::new(Mutex::new(SlotState::Waiting(sender)))), receiver)
    }

    /// Answers the request unless another console already did.
    pub fn answer(&self, reply: PromptReply, by: &Arc<str>) -> Result<(), Refused> {
        self.answer_as(reply, by, None)
    }

    /// Answers the request as one of a group of `of` calls given one
    /// answer, unless another console already answered it.
    pub fn answer_in_group(&self, reply: PromptReply, by: &Arc<str>, of: usize) -> Result<(), Refused> {
        self.answer_as(reply, by, Some(of))
    }

    fn answer_as(&self, reply: PromptReply, by: &Arc<str>, group: Option<usize>) -> Result<(), Refused> {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut *state, SlotState::Answered(Arc::clone(by))) {
            SlotState::Waiting(sender) => sender
                .send(Answered {
                    reply,
                    by: Arc::clone(by),
                    group,
                })
                .map_err(|_| Refused::Gone),
            SlotState::Answered(first) => {
                *state = SlotState::Answered(Arc::clone(&first));
                Err(Refused::AnsweredBy(first))
            }
        }
    }
}

/// What the human decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptReply {
    Approve,
    /// Approved with the human's arguments in place of the model's (the
    /// engine runs pre-execute again on them: a deny still denies).
    ApproveEdited {
        arguments: serde_json::Value,
    },
    /// Approved by an "always" rule (the one just added, or an older one).
    ApproveAlways {
        rule: std::sync::Arc<crate::session::always::AlwaysRule>,
    },
    Reject {
        reason: Option<String>,
    },
    /// The console is closing, or the prompt could not be shown.
    Unavailable {
        reason: String,
    },
}

/// Builds call `i` of a screen's batch, classified.
/// Shared, so that every console showing the batch builds its own rows.
pub type CallAt = Arc<dyn Fn(usize) -> (ToolCall, ToolExecutionMode) + Send + Sync>;

/// A batch's calls, classified, as the screen shows them.
#[derive(Clone)]
pub enum CallList {
    Ready(Vec<(ToolCall, ToolExecutionMode)>),
    /// Built by the console a few rows at a time when it first needs them
    /// (to draw them, or to find a call), on its own thread: copying and
    /// classifying a call (which parses its arguments) is no work for the
    /// engine, and none at all for a row that is never drawn.
    Later {
        /// How many calls there are (`call_at` is called below this only).
        len: usize,
        /// Roughly what the closure holds (calls it copied), for the
        /// history's byte limit; 0 when it only refers to shared data.
        bytes: usize,
        call_at: CallAt,
    },
}

impl CallList {
    /// How many calls the list holds or builds.
    pub fn len(&self) -> usize {
        match self {
            CallList::Ready(calls) => calls.len(),
            CallList::Later { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Vec<(ToolCall, ToolExecutionMode)>> for CallList {
    fn from(calls: Vec<(ToolCall, ToolExecutionMode)>) -> Self {
        CallList::Ready(calls)
    }
}

impl std::fmt::Debug for CallList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallList::Ready(calls) => f.debug_tuple("Ready").field(&calls.len()).finish(),
            CallList::Later { len, .. } => f.debug_struct("Later").field("len", len).finish_non_exhaustive(),
        }
    }
}

/// One event for the app. Cloned once per console attached besides the
/// first (see `session::screens`).
#[derive(Clone, Debug)]
pub enum AppEvent {
    /// A batch is about to run: every call, classified.
    BatchStarted {
        batch: usize,
        label: String,
        scope: Option<u64>,
        scope_label: String,
        calls: CallList,
        /// The slots its sink writes each call's start and outcome into
        /// (`None`: the batch is told by `Started` and `Outcome` events).
        progress: Option<Arc<BatchProgress>>,
        max_parallelism: usize,
    },
    /// Something new is in the batch's progress slots (sent at most once
    /// until the screen applies it).
    Progress {
        batch: usize,
    },
    /// The batch's calls `0..upto` are declared (calls are declared in order).
    Declared {
        batch: usize,
        upto: usize,
    },
    /// A call's execute stage began: its body is running.
    Started {
        batch: usize,
        index: usize,
        at: Instant,
    },
    /// A call moved on. It carries the execution itself (a reference count,
    /// no copy), so reporting costs the engine as little as possible; the
    /// app works out which row it is.
    Stage {
        execution: tether_tools::ToolExecution,
        stage: Stage,
        at: Instant,
    },
    Outcome {
        batch: usize,
        index: usize,
        outcome: ToolExecutionOutcome,
        at: Instant,
    },
    /// The decision trails of a batch's calls, in declared order, as its
    /// front door took them from the decision log once the batch was over,
    /// calls decided alike sharing one ([`BatchTrails`]). Until then the
    /// screen reads a call's trail from the log, so no trail entry costs the
    /// engine an event.
    Trails {
        batch: usize,
        trails: BatchTrails,
    },
    BatchFinished {
        batch: usize,
    },
    /// Where the journal holds a batch's records (sent before it finishes).
    BatchJournaled {
        batch: usize,
        span: crate::session::journal::JournalSpan,
    },
    /// Boxed: every event is as large as the largest variant, and a prompt
    /// is ten times a stage change.
    ApprovalRequested(Box<ApprovalPrompt>),
    /// The answerer gave up on a request (timed out, or the call was cancelled).
    ApprovalClosed {
        id: u64,
        /// Why, for the events pane ("no answer in 120 s", "agent x disconnected").
        reason: String,
    },
    /// A console answered a request: every console drops it from its queue
    /// and says who answered.
    ApprovalAnswered {
        id: u64,
        by: Arc<str>,
        /// `approved`, `rejected (reason)`, …
        answer: String,
    },
    /// Who is attached (`tether attach`), and the code the next attach
    /// must give (`None` when none could be drawn).
    AttachChanged(AttachStatus),
    ToolsChanged {
        description: String,
    },
    /// Anything else worth a line in the events pane.
    Note(String),
    /// A reviewer answered a call (or failed, and the human is asked).
    Reviewed {
        reviewer: Arc<str>,
        tool: String,
        call_id: String,
        verdict: crate::session::provenance::ReviewVerdict,
        reason: String,
        elapsed: Duration,
    },
    PolicyReloaded {
        path: String,
        rules: usize,
        /// How the header shows the policy now (its default included).
        header: String,
    },
    PolicyRejected {
        message: String,
    },
    AgentsChanged {
        connected: usize,
    },
    /// The scope tree changed (an agent came or went): every scope now.
    ScopesChanged(Vec<tether_tools::AgentPipelineScope>),
}

/// The sending side: cloneable, never blocks, never waits for the screen.
///
/// Events are appended to a shared queue under a short lock, and the
/// console is woken at most once until it next drains the queue, so a burst
/// of thousands of events costs the engine a push each and the screen one
/// wake-up: updates are coalesced, not back-pressured onto the pipeline.
#[derive(Debug)]
pub struct AppEventSender {
    shared: Arc<Shared>,
}

/// The receiving side, owned by the console's event loop.
#[derive(Debug)]
pub struct AppEventReceiver {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Vec<AppEvent>>,
    /// How many events the last drain took: the next queue starts that big,
    /// so a flood does not regrow (and copy) it from nothing every frame.
    last_drain: AtomicUsize,
    /// Set by the first send after a drain; cleared by the drain.
    pending: AtomicBool,
    senders: AtomicUsize,
    wake: Notify,
}

impl AppEventSender {
    pub fn new() -> (Self, AppEventReceiver) {
        let shared = Arc::new(Shared {
            senders: AtomicUsize::new(1),
            ..Shared::default()
        });
        (
            Self {
                shared: Arc::clone(&shared),
            },
            AppEventReceiver { shared },
        )
    }

    pub fn send(&self, event: AppEvent) {
        self.shared
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
        // Read before writing: while the console has not drained yet, a
        // burst of sends leaves the flag's cache line shared.
        if !self.shared.pending.load(Ordering::Acquire) && !self.shared.pending.swap(true, Ordering::AcqRel) {
            self.shared.wake.notify_one();
        }
    }
}

impl Clone for AppEventSender {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::AcqRel);
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for AppEventSender {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.wake.notify_one();
        }
    }
}

impl AppEventReceiver {
    /// Every event sent since the last call, oldest first; waits while there
    /// is none. `None` once every sender is gone and the queue is empty.
    pub async fn recv_many(&mut self) -> Option<Vec<AppEvent>> {
        loop {
            let events = self.drain();
            if !events.is_empty() {
                return Some(events);
            }
            if self.shared.senders.load(Ordering::Acquire) == 0 {
                return None;
            }
            self.shared.wake.notified().await;
        }
    }

    /// What is queued now, without waiting.
    pub fn try_recv_many(&mut self) -> Vec<AppEvent> {
        self.drain()
    }

    fn drain(&self) -> Vec<AppEvent> {
        self.shared.pending.store(false, Ordering::Release);
        let capacity = self.shared.last_drain.load(Ordering::Relaxed).min(1 << 16);
        let events = std::mem::replace(
            &mut *self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner),
            Vec::with_capacity(capacity),
        );
        self.shared.last_drain.store(events.len(), Ordering::Relaxed);
        events
    }
}
