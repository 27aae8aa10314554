//! Decision provenance: every outcome knows what decided it (`rule:<id>`,
//! `guard:<id>`, `human`, `timeout`, `no-answerer`, `schema`, `body`,
//! `cancelled`), gathered through listeners, never by changing the engine's
//! outcome type.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tether_tools::{ToolExecution, ToolExecutionOutcome, ToolFailureCode};

/// Identifies a call across batches and agents: its scope and its id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CallKey {
    pub scope: Option<u64>,
    pub call_id: String,
}

impl CallKey {
    pub fn of(execution: &ToolExecution) -> Self {
        Self {
            scope: execution.scope().map(|s| s.id()),
            call_id: execution.call_id().to_owned(),
        }
    }
}

/// One step of a call's decision trail.
#[derive(Clone, Debug, PartialEq)]
pub enum TrailEntry {
    /// A pre-execute rule decided (`allow`, `deny`, `ask`).
    PreRule { id: Arc<str>, action: &'static str },
    /// A guard rule vetoed.
    GuardVeto { id: Arc<str>, reason: String },
    /// Before a human was asked: a guard rule will veto the call even if it
    /// is approved (a forecast; the guard still decides when it runs).
    GuardWillVeto { id: Arc<str>, reason: String },
    /// Before a human was asked: the policy marks the tool as running shell
    /// commands, the command at this JSON pointer (`shell_tools`).
    ShellCommandAt { pointer: Arc<str> },
    /// A human answered.
    Human { approved: bool, reason: Option<String> },
    /// A human was asked and an "always" rule answered for them.
    AlwaysRule { rule: String },
    /// Nobody answered in time.
    ApprovalTimedOut,
    /// Nobody could answer.
    NoAnswerer,
    /// An execute rule put a deadline on the body.
    Deadline { id: Arc<str>, ms: u64, fired: bool },
    /// The body ran for this long.
    Body { elapsed: Duration },
    /// A post-execute rule decided (`accept`, `replace`, `block`).
    PostRule { id: Arc<str>, action: &'static str },
}

impl TrailEntry {
    /// A one-line description for the detail pane.
    pub fn describe(&self) -> String {
        match self {
            TrailEntry::PreRule { id, action } => format!("pre-execute rule {id}: {action}"),
            TrailEntry::GuardVeto { id, reason } => format!("guard {id}: veto ({reason})"),
            TrailEntry::GuardWillVeto { id, reason } => format!("guard {id} will veto if approved ({reason})"),
            TrailEntry::ShellCommandAt { pointer } => format!("policy: a shell tool, its command at {pointer}"),
            TrailEntry::Human { approved: true, .. } => "human: approved".to_owned(),
            TrailEntry::Human {
                approved: false,
                reason,
            } => match reason {
                Some(r) => format!("human: rejected ({r})"),
                None => "human: rejected".to_owned(),
            },
            TrailEntry::AlwaysRule { rule } => format!("approved by always-rule {rule}"),
            TrailEntry::ApprovalTimedOut => "approval timed out".to_owned(),
            TrailEntry::NoAnswerer => "no answerer".to_owned(),
            TrailEntry::Deadline { id, ms, fired } => {
                format!(
                    "execute rule {id}: deadline {ms} ms{}",
                    if *fired { " (fired)" } else { "" }
                )
            }
            TrailEntry::Body { elapsed } => format!("body ran {} ms", elapsed.as_millis()),
            TrailEntry::PostRule { id, action } => format!("post-execute rule {id}: {action}"),
        }
    }
}

type TrailObserver = Arc<dyn Fn(&CallKey, &TrailEntry) + Send + Sync>;

/// Trails of calls in flight, keyed by [`CallKey`]. Cheap to clone.
#[derive(Clone, Default)]
pub struct DecisionLog {
    trails: Arc<Mutex<HashMap<CallKey, Vec<TrailEntry>>>>,
    observer: Option<TrailObserver>,
}

impl DecisionLog {
    /// A log that also tells `observer` of every entry as it is recorded
    /// (the console's live decision trail).
    pub fn observed(observer: impl Fn(&CallKey, &TrailEntry) + Send + Sync + 'static) -> Self {
        Self {
            trails: Arc::default(),
            observer: Some(Arc::new(observer)),
        }
    }

    pub fn record(&self, execution: &ToolExecution, entry: TrailEntry) {
        let key = CallKey::of(execution);
        if let Some(observer) = &self.observer {
            observer(&key, &entry);
        }
        self.trails
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_default()
            .push(entry);
    }

    /// The guard veto forecast for a call waiting for a human, as
    /// `guard <id>: <reason>`.
    pub fn guard_will_veto(&self, key: &CallKey) -> Option<String> {
        self.trails
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)?
            .iter()
            .find_map(|entry| match entry {
                TrailEntry::GuardWillVeto { id, reason } => Some(format!("guard {id}: {reason}")),
                _ => None,
            })
    }

    /// Where the policy says the command of a call waiting for a human is,
    /// for a tool it marks shell-like.
    pub fn shell_command_at(&self, key: &CallKey) -> Option<String> {
        self.trails
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)?
            .iter()
            .find_map(|entry| match entry {
                TrailEntry::ShellCommandAt { pointer } => Some(pointer.to_string()),
                _ => None,
            })
    }

    /// Removes and returns a finished call's trail.
    pub fn take(&self, key: &CallKey) -> Vec<TrailEntry> {
        self.trails
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key)
            .unwrap_or_default()
    }

    /// How many calls have a trail in flight (for leak checks).
    pub fn len(&self) -> usize {
        self.trails.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no call has a trail in flight.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What decided an outcome, from its code and its trail.
pub fn decided_by(outcome: &ToolExecutionOutcome, trail: &[TrailEntry]) -> String {
    let pre_rule = |wanted: &str| {
        trail.iter().find_map(|e| match e {
            TrailEntry::PreRule { id, action } if *action == wanted => Some(format!("rule:{id}")),
            _ => None,
        })
    };
    let post_rule = |wanted: &str| {
        trail.iter().find_map(|e| match e {
            TrailEntry::PostRule { id, action } if *action == wanted => Some(format!("rule:{id}")),
            _ => None,
        })
    };
    let human = trail
        .iter()
        .any(|e| matches!(e, TrailEntry::Human { .. } | TrailEntry::AlwaysRule { .. }));
    match outcome.code() {
        None => post_rule("replace")
            .or_else(|| human.then(|| "human".to_owned()))
            .or_else(|| pre_rule("allow"))
            .unwrap_or_else(|| "body".to_owned()),
        Some(ToolFailureCode::Denied) => pre_rule("deny")
            .or_else(|| {
                trail.iter().find_map(|e| match e {
                    TrailEntry::GuardVeto { id, .. } => Some(format!("guard:{id}")),
                    _ => None,
                })
            })
            .or_else(|| human.then(|| "human".to_owned()))
            .unwrap_or_else(|| "policy".to_owned()),
        Some(ToolFailureCode::Unavailable) => {
            if trail.contains(&TrailEntry::ApprovalTimedOut) {
                "timeout".to_owned()
            } else {
                "no-answerer".to_owned()
            }
        }
        Some(ToolFailureCode::InvalidArgs) => "schema".to_owned(),
        Some(ToolFailureCode::UnknownTool) => "registry".to_owned(),
        Some(ToolFailureCode::ToolError) => "body".to_owned(),
        Some(ToolFailureCode::Blocked) => post_rule("block").unwrap_or_else(|| "policy".to_owned()),
        Some(ToolFailureCode::Aborted) => trail
            .iter()
            .find_map(|e| match e {
                TrailEntry::Deadline { id, fired: true, .. } => Some(format!("rule:{id}")),
                _ => None,
            })
            .unwrap_or_else(|| "cancelled".to_owned()),
        Some(ToolFailureCode::AbortedBeforeDispatch) => "cancelled".to_owned(),
    }
}
