//! Everything that happens, as one enum over one channel (engine listeners,
//! the batch sink, the answerer, the agent link → `App::update`). The
//! request a human answers is in `prompt`, its answer in `reply`, a batch's
//! calls in `calls`, the channel itself in `channel`.

mod calls;
mod channel;
mod prompt;
mod reply;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_tools::ToolExecutionOutcome;

pub use self::calls::{CallAt, CallList};
pub use self::channel::{AppEventReceiver, AppEventSender};
pub use self::prompt::{ApprovalPrompt, command_lines};
pub use self::reply::{Answered, Approvers, PromptReply, Refused, ReplySlot};
pub use crate::session::editing::{ArgumentCheck, Editing};
use crate::session::progress::BatchProgress;
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

/// Attaching, as the header shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttachStatus {
    /// The one-time code the next `tether attach` must give (a new one after
    /// every attach and every wrong code); `None` when none could be drawn.
    pub code: Option<String>,
    /// The attached consoles' names.
    pub attached: Vec<String>,
    /// Whether consoles can attach (`--attach`); without, the code only
    /// pairs web devices (`tether web pair`, with `--web` alone).
    pub attaching: bool,
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
    /// A request still waits after `--remind-after`: screens ring again.
    ApprovalReminder {
        id: u64,
    },
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
