//! Decision provenance: every outcome knows what decided it (`rule:<id>`,
//! `guard:<id>`, `reviewer:<name>`, `human`, `script`, `always-rule: <rule>`, `timeout`, `no-answerer`,
//! `schema`, `body`, `cancelled`), gathered through listeners, never by
//! changing the engine's outcome type. The journal's fuller record of the
//! same trail is [`crate::session::journal::Decision`].

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lru::LruCache;
use tether_tools::{ExecutionId, ToolExecution, ToolExecutionOutcome};

use crate::session::always::AlwaysRule;

mod decider;
#[cfg(test)]
mod tests;

pub use decider::{SCRIPTED, answered_at, answerer, approvals_needed, asker, decided_by, reviewed, reviewer_decider};

/// Identifies a call's trail across batches and agents: its execution, not
/// its call id, which a model may give two calls (in one batch, or in two
/// scopes), so no two calls ever share a trail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallKey(pub ExecutionId);

impl CallKey {
    pub fn of(execution: &ToolExecution) -> Self {
        Self(execution.id())
    }

    /// The key of the call an outcome ends.
    pub fn of_outcome(outcome: &ToolExecutionOutcome) -> Self {
        Self(outcome.execution_id())
    }
}

impl From<ExecutionId> for CallKey {
    fn from(id: ExecutionId) -> Self {
        Self(id)
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
    /// Before a human was asked: these commands of a compound (counted
    /// from 0) are the ones no allow rule covers.
    NotCovered { commands: Arc<[usize]> },
    /// A human answered: at the console `by` names (`main`, `attach 2
    /// (pts/5)`; [`SCRIPTED`] for a scripted answer), after waiting this long.
    Human {
        approved: bool,
        reason: Option<String>,
        by: Arc<str>,
        waited: Duration,
    },
    /// The rule that asked says `of` distinct answerers must approve (the
    /// two-person rule); each approval is a [`TrailEntry::Human`].
    NeedsApprovals { of: u8 },
    /// The human's answer was one answer for `of` waiting calls of the
    /// call's batch (`Y` / `N` at the prompt).
    AnsweredInGroup { of: usize },
    /// The human who approved (the [`TrailEntry::Human`] before it) put
    /// these arguments in place of the model's; pre-execute ran again on
    /// them, and the entries after this one are about the edited call.
    Edited {
        from: Arc<serde_json::Value>,
        to: Arc<serde_json::Value>,
        by: Arc<str>,
    },
    /// A human was asked and an "always" rule answered for them.
    AlwaysRule { rule: Arc<AlwaysRule> },
    /// Not asked: the arguments fail the tool's schema, so the call fails
    /// `INVALID_ARGS` at the argument check whatever a human would answer.
    NotAskedInvalidArgs,
    /// Nobody answered in time: the call waited this long (the wait in
    /// force, the rule's own or the console's, as measured).
    ApprovalTimedOut { waited: Duration },
    /// Nobody could answer.
    NoAnswerer,
    /// An execute rule put a deadline on the body.
    Deadline { id: Arc<str>, ms: u64, fired: bool },
    /// The body ran for this long.
    Body { elapsed: Duration },
    /// A post-execute rule decided (`accept`, `replace`, `block`).
    PostRule { id: Arc<str>, action: &'static str },
    /// A reviewer answered (or failed, and the human is asked), after
    /// taking this long; `reason` is its own words, or why it failed.
    Reviewed {
        reviewer: Arc<str>,
        verdict: ReviewVerdict,
        reason: String,
        elapsed: Duration,
    },
}

/// What a reviewer made of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewVerdict {
    /// Allowed: final for this call (guards still run).
    Allow,
    /// Denied: the agent gets the reason.
    Deny,
    /// Sent to the human, with the reason on the prompt.
    Ask,
    /// Gave no usable answer (timed out, failed, answered nonsense): the
    /// human is asked, never allowed.
    Failed,
}

impl ReviewVerdict {
    /// As the journal's `review` field says it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVerdict::Allow => "allow",
            ReviewVerdict::Deny => "deny",
            ReviewVerdict::Ask => "ask",
            ReviewVerdict::Failed => "failed",
        }
    }

    /// Reads the journal's `review` field.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Allow, Self::Deny, Self::Ask, Self::Failed]
            .into_iter()
            .find(|v| v.as_str() == text)
    }
}

impl TrailEntry {
    /// A one-line description for the detail pane.
    pub fn describe(&self) -> String {
        match self {
            TrailEntry::PreRule { id, action } => format!("pre-execute rule {id}: {action}"),
            TrailEntry::GuardVeto { id, reason } => format!("guard {id}: veto ({reason})"),
            TrailEntry::GuardWillVeto { id, reason } => format!("guard {id} will veto if approved ({reason})"),
            TrailEntry::ShellCommandAt { pointer } => format!("policy: a shell tool, its command at {pointer}"),
            TrailEntry::NotCovered { commands } => format!(
                "policy: no allow rule covers command {} of the script",
                commands
                    .iter()
                    .map(|c| (c + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            // Which console answered, named as the journal names it; how
            // long it waited is in the journal.
            TrailEntry::Human { approved: true, by, .. } => format!("{}: approved", answered_at(by)),
            TrailEntry::Human {
                approved: false,
                reason,
                by,
                ..
            } => match reason {
                Some(r) => format!("{}: rejected ({r})", answered_at(by)),
                None => format!("{}: rejected", answered_at(by)),
            },
            // Both versions are the detail pane's Arguments sections.
            TrailEntry::Edited { by, .. } => format!("approved with edits by {}", answered_at(by)),
            TrailEntry::AlwaysRule { rule } => format!("approved by always-rule {}", rule.describe()),
            TrailEntry::NotAskedInvalidArgs => "not asked: the arguments fail the tool's schema".to_owned(),
            TrailEntry::ApprovalTimedOut { .. } => "approval timed out".to_owned(),
            TrailEntry::NoAnswerer => "no answerer".to_owned(),
            TrailEntry::NeedsApprovals { of } => format!("needs {of} approvals from distinct answerers"),
            TrailEntry::AnsweredInGroup { of } => {
                format!("answered as part of a group of {of} (one answer for the waiting calls of its batch)")
            }
            TrailEntry::Deadline { id, ms, fired } => {
                format!(
                    "execute rule {id}: deadline {ms} ms{}",
                    if *fired { " (fired)" } else { "" }
                )
            }
            TrailEntry::Body { elapsed } => format!("body ran {} ms", elapsed.as_millis()),
            TrailEntry::PostRule { id, action } => format!("post-execute rule {id}: {action}"),
            TrailEntry::Reviewed {
                reviewer,
                verdict,
                reason,
                elapsed,
            } => {
                let took = elapsed.as_millis();
                match verdict {
                    ReviewVerdict::Allow => format!("reviewer {reviewer}: allowed in {took} ms ({reason})"),
                    ReviewVerdict::Deny => format!("reviewer {reviewer}: denied in {took} ms ({reason})"),
                    ReviewVerdict::Ask => format!("reviewer {reviewer}: asked the human in {took} ms ({reason})"),
                    ReviewVerdict::Failed => {
                        format!("reviewer {reviewer}: failed after {took} ms ({reason}); the human was asked")
                    }
                }
            }
        }
    }
}

/// How many calls keep a trail at most, by default. A finished call's trail
/// is taken when its outcome is reported, so only calls in flight (and any
/// a front door never reports) stay; far more than a console has in flight.
pub const TRAIL_LIMIT: usize = 65_536;

/// The trails, least recently recorded first (`lru`: a call that is
/// recorded again moves to the back, so the ones dropped at the limit are
/// those untouched the longest; a call waiting for a human was touched when
/// it was asked).
struct Trails {
    by_call: LruCache<CallKey, Vec<TrailEntry>>,
    dropped: u64,
}

impl Trails {
    fn record(&mut self, key: CallKey, entry: TrailEntry) {
        if let Some(trail) = self.by_call.get_mut(&key) {
            trail.push(entry);
        } else if self.by_call.push(key, vec![entry]).is_some() {
            // A new key never replaces its own entry: this is the oldest
            // call's trail, dropped at the limit.
            self.dropped += 1;
        }
    }
}

/// Trails of calls in flight, keyed by [`CallKey`], at most
/// [`TRAIL_LIMIT`] calls (the least recently recorded are dropped). Cheap
/// to clone.
///
/// The screen reads a call's trail from here while the call is in flight
/// (the detail pane asks once a frame for the selected call), and gets the
/// finished trail with the call's outcome, so recording an entry costs the
/// engine no event of its own.
#[derive(Clone)]
pub struct DecisionLog {
    trails: Arc<Mutex<Trails>>,
    /// The pre-execute rules in force, where always-rules are placed.
    standing: crate::session::always::standing::Standing,
}

impl Default for DecisionLog {
    fn default() -> Self {
        Self::with_limit(TRAIL_LIMIT)
    }
}

impl DecisionLog {
    /// A log keeping at most `limit` calls' trails (at least one).
    pub fn with_limit(limit: usize) -> Self {
        Self {
            trails: Arc::new(Mutex::new(Trails {
                by_call: LruCache::new(NonZeroUsize::new(limit).unwrap_or(NonZeroUsize::MIN)),
                dropped: 0,
            })),
            standing: crate::session::always::standing::Standing::default(),
        }
    }

    /// The pre-execute rules in force, as the policy's listener put them.
    pub fn standing(&self) -> &crate::session::always::standing::Standing {
        &self.standing
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Trails> {
        self.trails.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn record(&self, execution: &ToolExecution, entry: TrailEntry) {
        self.record_for(CallKey::of(execution), entry);
    }

    /// Records an entry for the call `key` names.
    pub fn record_for(&self, key: CallKey, entry: TrailEntry) {
        self.lock().record(key, entry);
    }

    /// The first entry of a call's trail that `pick` accepts.
    fn find<T>(&self, key: &CallKey, pick: impl Fn(&TrailEntry) -> Option<T>) -> Option<T> {
        self.lock().by_call.peek(key)?.iter().find_map(pick)
    }

    /// The guard veto forecast for a call waiting for a human, as
    /// `guard <id>: <reason>`.
    pub fn guard_will_veto(&self, key: &CallKey) -> Option<String> {
        self.find(key, |entry| match entry {
            TrailEntry::GuardWillVeto { id, reason } => Some(format!("guard {id}: {reason}")),
            _ => None,
        })
    }

    /// Where the policy says the command of a call waiting for a human is,
    /// for a tool it marks shell-like.
    pub fn shell_command_at(&self, key: &CallKey) -> Option<String> {
        self.find(key, |entry| match entry {
            TrailEntry::ShellCommandAt { pointer } => Some(pointer.to_string()),
            _ => None,
        })
    }

    /// The commands of a compound no allow rule covers, for a call waiting
    /// for a human.
    pub fn not_covered(&self, key: &CallKey) -> Vec<usize> {
        self.find(key, |entry| match entry {
            TrailEntry::NotCovered { commands } => Some(commands.to_vec()),
            _ => None,
        })
        .unwrap_or_default()
    }

    /// A copy of a call's trail so far (empty when it has none), leaving it
    /// in place: what the screen shows of a call in flight, and what it
    /// keeps of a finished one before its front door takes the trail.
    pub fn trail(&self, key: &CallKey) -> Vec<TrailEntry> {
        self.lock().by_call.peek(key).cloned().unwrap_or_default()
    }

    /// What `read` makes of a call's trail so far (empty when it has none),
    /// without copying it: how the journal records what decided a call.
    pub fn with_trail<T>(&self, key: &CallKey, read: impl FnOnce(&[TrailEntry]) -> T) -> T {
        let trails = self.lock();
        read(trails.by_call.peek(key).map_or(&[], Vec::as_slice))
    }

    /// Removes and returns a finished call's trail (empty when it had none,
    /// or it was dropped at the limit).
    pub fn take(&self, key: &CallKey) -> Vec<TrailEntry> {
        self.lock().by_call.pop(key).unwrap_or_default()
    }

    /// Removes and returns the trail of the call `outcome` ends.
    pub fn take_of(&self, outcome: &ToolExecutionOutcome) -> Vec<TrailEntry> {
        self.take(&CallKey::of_outcome(outcome))
    }

    /// How many calls have a trail in flight (for leak checks).
    pub fn len(&self) -> usize {
        self.lock().by_call.len()
    }

    /// Whether no call has a trail in flight.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many calls' trails were dropped at the limit so far.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }
}
