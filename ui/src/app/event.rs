//! Everything that happens, as one enum over one channel (engine listeners,
//! the batch sink, the answerer, the agent link → `App::update`).

use std::time::Instant;

use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome};
use tokio::sync::{mpsc, oneshot};

use crate::provenance::{CallKey, TrailEntry};

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
/// model or agent wrote it; the view escapes it.
#[derive(Debug)]
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
    pub deadline: Instant,
    pub reply: oneshot::Sender<PromptReply>,
}

/// What the human decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptReply {
    Approve,
    /// Approved by an "always" rule (the one just added, or an older one).
    ApproveAlways {
        rule: String,
    },
    Reject {
        reason: Option<String>,
    },
    /// The console is closing, or the prompt could not be shown.
    Unavailable {
        reason: String,
    },
}

/// One event for the app.
#[derive(Debug)]
pub enum AppEvent {
    /// A batch is about to run: every call, classified.
    BatchStarted {
        batch: usize,
        label: String,
        scope: Option<u64>,
        scope_label: String,
        calls: Vec<(ToolCall, ToolExecutionMode)>,
        max_parallelism: usize,
    },
    Declared {
        batch: usize,
        index: usize,
    },
    Stage {
        key: CallKey,
        stage: Stage,
        at: Instant,
    },
    Trail {
        key: CallKey,
        entry: TrailEntry,
    },
    Outcome {
        batch: usize,
        index: usize,
        outcome: ToolExecutionOutcome,
        at: Instant,
    },
    BatchFinished {
        batch: usize,
    },
    ApprovalRequested(ApprovalPrompt),
    /// The answerer gave up on a request (timed out, or the call was cancelled).
    ApprovalClosed {
        id: u64,
    },
    ToolsChanged {
        description: String,
    },
    /// Anything else worth a line in the events pane.
    Note(String),
    PolicyReloaded {
        path: String,
        rules: usize,
    },
    PolicyRejected {
        message: String,
    },
    AgentsChanged {
        connected: usize,
    },
}

/// A cloneable sender that never blocks and logs a failed send.
#[derive(Clone, Debug)]
pub struct AppEventSender {
    sender: mpsc::UnboundedSender<AppEvent>,
}

impl AppEventSender {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<AppEvent>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Self { sender }, receiver)
    }

    pub fn send(&self, event: AppEvent) {
        if let Err(error) = self.sender.send(event) {
            tracing::debug!(event = ?error.0, "app event dropped: the console is closing");
        }
    }
}
