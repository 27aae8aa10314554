//! The reviewer tier: a call a `review` rule routes is answered by the
//! policy's reviewer before any human (docs/policy.md, "Reviewers"). It can
//! only narrow: the reviewer sees only calls no earlier rule decided, its
//! allow is final for that call alone (guards still run), and anything short
//! of a clear answer — a timeout, a failure, output of the wrong shape —
//! asks the human, never allows.

mod command;
pub mod model;
pub mod request;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use tether_tools::{ToolExecution, ToolPreDecision};
use tokio::sync::Semaphore;

use crate::files::policy::{Reviewer, ReviewerKind};
use crate::files::scenario::Scenario;
use crate::session::events::{AppEvent, AppEventSender};
use crate::session::provenance::{DecisionLog, ReviewVerdict, TrailEntry};
pub use request::History;

/// A reviewer's answer, as it must be written: exactly these two fields.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    pub decision: Decision,
    pub reason: String,
}

/// What a reviewer may decide.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Deny,
    Ask,
}

impl Answer {
    /// Reads one JSON object (surrounding white space allowed), strictly.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value: Value = serde_json::from_str(text.trim()).map_err(|_| not_expected(text))?;
        Self::from_value(value).map_err(|_| not_expected(text))
    }

    /// Reads an already parsed object, strictly.
    pub fn from_value(value: Value) -> Result<Self, String> {
        Answer::deserialize(&value).map_err(|e| format!("its answer is not the expected JSON: {e}"))
    }
}

fn not_expected(text: &str) -> String {
    let shown: String = text.trim().chars().take(120).collect();
    format!(
        "its output is not {{\"decision\": \"allow\" | \"deny\" | \"ask\", \"reason\": \"…\"}}: {:?}",
        crate::sanitize::escape(&shown)
    )
}

/// A reviewer ready to run: its slots bound how many calls it reviews at once.
struct Running {
    config: Reviewer,
    slots: Semaphore,
    client: Option<reqwest::Client>,
}

/// How a replay treats reviewers (`tether replay --review`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ReviewReplay {
    /// The verdict the journal recorded; nothing is called.
    #[default]
    Recorded,
    /// Call the reviewer again.
    Live,
}

/// What a replay does with a call a rule routes to a reviewer.
#[derive(Clone, Debug, Default)]
pub enum ReviewMode {
    /// Call the reviewer (a live console, `tether replay --review live`).
    #[default]
    Live,
    /// Answer with the verdict the journal recorded for the call, keyed by
    /// (journal batch, call id); a call with none is asked.
    Recorded(Arc<HashMap<(usize, String), (ReviewVerdict, String)>>),
}

/// How reviews run in a session: live or from a record, told to whoever
/// watches, remembering each agent's last calls. Cheap to clone.
#[derive(Clone, Default)]
pub struct Reviewing {
    pub mode: ReviewMode,
    pub events: Option<AppEventSender>,
    pub history: History,
}

/// What keeps each of `reviewers` from working, known before any call
/// (a model reviewer whose key variable holds no key): `(name, why)`. Each
/// of its reviews would fail and ask the human.
pub fn problems(reviewers: &[Reviewer]) -> Vec<(String, String)> {
    reviewers
        .iter()
        .filter_map(|r| match &r.kind {
            ReviewerKind::Model(model) => model::api_key(model).err().map(|why| (r.name.clone(), why)),
            ReviewerKind::Command(_) => None,
        })
        .collect()
}

/// A policy's reviewers, running.
#[derive(Clone, Default)]
pub struct Reviewers {
    by_name: Arc<HashMap<String, Arc<Running>>>,
}

impl Reviewers {
    /// Readies `reviewers`. A model reviewer whose HTTP client cannot be
    /// built still exists: each of its reviews fails, and asks the human.
    pub fn new(reviewers: &[Reviewer]) -> Self {
        let client = reviewers
            .iter()
            .any(|r| matches!(r.kind, ReviewerKind::Model(_)))
            .then(model::client);
        let client = match client {
            Some(Ok(client)) => Some(client),
            Some(Err(error)) => {
                tracing::error!(%error, "model reviewers will fail and ask the human");
                None
            }
            None => None,
        };
        let by_name = reviewers
            .iter()
            .map(|r| {
                let running = Running {
                    config: r.clone(),
                    slots: Semaphore::new(r.max_concurrent.get()),
                    client: client.clone(),
                };
                (r.name.clone(), Arc::new(running))
            })
            .collect();
        Self {
            by_name: Arc::new(by_name),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Has `reviewer` review the call `rule` routed to it, and turns its
    /// answer into the pre-execute decision; the trail records it.
    pub async fn review(
        &self,
        execution: &ToolExecution,
        rule: &str,
        reviewer: &str,
        log: &DecisionLog,
        reviewing: &Reviewing,
    ) -> ToolPreDecision {
        let started = Instant::now();
        let result = match (&reviewing.mode, self.by_name.get(reviewer)) {
            (ReviewMode::Recorded(recorded), _) => recorded_answer(recorded, execution),
            // The loader checks every name; a policy built by hand may not.
            (ReviewMode::Live, None) => Err(format!("the policy has no reviewer {reviewer:?}")),
            (ReviewMode::Live, Some(running)) => {
                let call = request::describe(execution, reviewer, rule, &reviewing.history);
                let timeout = running.config.timeout;
                tokio::select! {
                    result = tokio::time::timeout(timeout, running.review(&call)) => {
                        result.unwrap_or_else(|_| Err(format!("no answer within {} ms", timeout.as_millis())))
                    }
                    // The call was cancelled: the engine sees it next.
                    () = execution.cancellation().cancelled() => Err("the call was cancelled".to_owned()),
                }
            }
        };
        let elapsed = started.elapsed();
        let (verdict, reason) = match result {
            Ok(Answer { decision, reason }) => (
                match decision {
                    Decision::Allow => ReviewVerdict::Allow,
                    Decision::Deny => ReviewVerdict::Deny,
                    Decision::Ask => ReviewVerdict::Ask,
                },
                reason,
            ),
            Err(why) => {
                tracing::warn!(reviewer, call_id = execution.call_id(), %why, "reviewer failed; asking the human");
                (ReviewVerdict::Failed, why)
            }
        };
        let reason = shortened(&crate::sanitize::escape(&reason));
        log.record(
            execution,
            TrailEntry::Reviewed {
                reviewer: Arc::from(reviewer),
                verdict,
                reason: reason.clone(),
                elapsed,
            },
        );
        if let Some(events) = &reviewing.events {
            events.send(AppEvent::Reviewed {
                reviewer: Arc::from(reviewer),
                tool: execution.name().to_owned(),
                call_id: execution.call_id().to_owned(),
                verdict,
                reason: reason.clone(),
                elapsed,
            });
        }
        decision_of(reviewer, verdict, reason)
    }
}

/// The most of a reviewer's reason the prompt, the journal and the agent
/// get: a sentence is asked for, and a reviewer printing pages has no
/// business filling the record with them.
const REASON_CHARS: usize = 500;

fn shortened(reason: &str) -> String {
    match reason.char_indices().nth(REASON_CHARS) {
        Some((cut, _)) => format!("{}…", &reason[..cut]),
        None => reason.to_owned(),
    }
}

/// The pre-execute decision a verdict makes.
fn decision_of(reviewer: &str, verdict: ReviewVerdict, reason: String) -> ToolPreDecision {
    match verdict {
        ReviewVerdict::Allow => ToolPreDecision::Allow,
        ReviewVerdict::Deny => ToolPreDecision::Deny(format!("reviewer {reviewer}: {reason}")),
        ReviewVerdict::Ask => ToolPreDecision::Ask(Some(format!("reviewer: {reason}"))),
        ReviewVerdict::Failed => ToolPreDecision::Ask(Some(format!("reviewer {reviewer} failed: {reason}"))),
    }
}

/// What a journal recorded each reviewer answering, by (journal batch,
/// call id), read from its `tool/result` lines (`review`, `review_reason`).
pub fn recorded(scenario: &Scenario) -> ReviewMode {
    let mut recorded = HashMap::new();
    for call in scenario.batches.iter().flat_map(|b| &b.calls) {
        let Some(at) = &call.recorded else { continue };
        let field = |name: &str| at.decision.get(name).and_then(Value::as_str);
        if let Some(verdict) = field("review").and_then(ReviewVerdict::parse) {
            let reason = field("review_reason").unwrap_or_default().to_owned();
            recorded.insert((at.batch, call.id.clone()), (verdict, reason));
        }
    }
    ReviewMode::Recorded(Arc::new(recorded))
}

/// What the journal says the reviewer answered for this call.
fn recorded_answer(
    recorded: &HashMap<(usize, String), (ReviewVerdict, String)>,
    execution: &ToolExecution,
) -> Result<Answer, String> {
    let batch = execution
        .invocation_context()
        .and_then(|c| c.get("journal_batch"))
        .and_then(Value::as_u64)
        .and_then(|b| usize::try_from(b).ok());
    let found = batch.and_then(|b| recorded.get(&(b, execution.call_id().to_owned())));
    match found {
        Some((verdict, reason)) => {
            let decision = match verdict {
                ReviewVerdict::Allow => Decision::Allow,
                ReviewVerdict::Deny => Decision::Deny,
                ReviewVerdict::Ask | ReviewVerdict::Failed => Decision::Ask,
            };
            Ok(Answer {
                decision,
                reason: format!("recorded: {reason}"),
            })
        }
        None => Err("not called in a replay, and none was recorded for this call (--review live calls it)".to_owned()),
    }
}

impl Running {
    /// One review, once a slot is free (the caller's timeout covers the wait).
    async fn review(&self, call: &Value) -> Result<Answer, String> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| "the reviewer was unloaded".to_owned())?;
        match &self.config.kind {
            ReviewerKind::Command(command) => command::review(command, call).await,
            ReviewerKind::Model(reviewer) => match &self.client {
                Some(client) => model::review(client, reviewer, call).await,
                None => Err("no HTTP client (see the log)".to_owned()),
            },
        }
    }
}

/// How long a review took, as the screen says it.
pub fn took(elapsed: Duration) -> String {
    if elapsed >= Duration::from_secs(1) {
        format!("{:.1} s", elapsed.as_secs_f64())
    } else {
        format!("{} ms", elapsed.as_millis())
    }
}
