//! A scenario loaded into a registry, ready to run batch by batch. Used by
//! the headless replay and by the console alike.
//! What a call reports is in `report`, a script's answer in `scripted`.

mod report;
mod scripted;

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tether_tools::{
    AgentPipelineScope, ApprovalRequest, BoxError, ExecuteNext, ListenerOrder, Registration, ToolBatchSink,
    ToolDispatch, ToolExecution, ToolExecutionMode, ToolRegistry,
};
use tokio_util::sync::CancellationToken;

use crate::files::policy::Policy;
use crate::files::scenario::{ApprovalScript, NamedAnswer, Scenario};
use crate::session::events::CallList;
use crate::session::journal::Decision;
use crate::session::provenance::{DecisionLog, TrailEntry, decided_by};
use crate::session::review::{ReviewMode, Reviewing};

/// Parallelism of a batch that does not say.
pub const DEFAULT_MAX_PARALLELISM: usize = 4;
/// How long a scripted "timeout" keeps a call waiting, unless the scenario says.
pub const DEFAULT_SCRIPTED_TIMEOUT: Duration = Duration::from_millis(200);

pub use self::report::{CallReport, NO_RECORDED_OUTCOME, report_json};
use self::report::{RECORDED_BLOCK, check_expectation};
pub use self::scripted::{recorded_answer, scripted_answer};

/// A scenario's scopes and tools in a registry, with a policy and an answerer.
pub struct Session {
    pub registry: ToolRegistry,
    pub scenario: Scenario,
    pub scopes: HashMap<String, AgentPipelineScope>,
    pub log: DecisionLog,
    scripts: Arc<Mutex<HashMap<String, ApprovalScript>>>,
    policy: Mutex<Vec<Registration>>,
    /// How the policy's reviewers run (live unless the replay says), and
    /// the policy in force, installed again when that changes.
    reviewing: Mutex<(Reviewing, Option<Policy>)>,
    _fixed: Vec<Registration>,
}

impl Session {
    /// Loads `scenario` into a fresh registry with `policy` (if any).
    ///
    /// # Errors
    /// A scenario that does not build (it should have been checked).
    pub fn new(scenario: Scenario, policy: Option<&Policy>) -> anyhow::Result<Session> {
        Self::with_log(scenario, policy, DecisionLog::default())
    }

    /// Like [`Session::new`], recording decisions in `log`.
    ///
    /// # Errors
    /// A scenario that does not build (it should have been checked).
    pub fn with_log(scenario: Scenario, policy: Option<&Policy>, log: DecisionLog) -> anyhow::Result<Session> {
        let registry = ToolRegistry::new();
        let scopes = scenario.build_scopes().context("building the scope tree")?;
        let mut fixed = scenario
            .register_tools(&registry, &scopes)
            .context("registering the tools")?;
        // Outermost execute wrapper: times the body, deadlines included.
        let body_log = log.clone();
        fixed.push(registry.register_execute(
            None,
            ListenerOrder::Prepend,
            move |e: ToolExecution, d: ToolDispatch, next: ExecuteNext| {
                let log = body_log.clone();
                async move {
                    let started = Instant::now();
                    let result = next.run(d).await;
                    log.record(
                        &e,
                        TrailEntry::Body {
                            elapsed: started.elapsed(),
                        },
                    );
                    result
                }
            },
        ));
        let session = Session {
            registry,
            scenario,
            scopes,
            log,
            scripts: Arc::default(),
            policy: Mutex::new(Vec::new()),
            reviewing: Mutex::default(),
            _fixed: fixed,
        };
        if let Some(policy) = policy {
            session.set_policy(policy);
        }
        Ok(session)
    }

    /// Replaces the policy: the new rules are in place before the old ones go.
    pub fn set_policy(&self, policy: &Policy) {
        let reviewing = {
            let mut state = self.reviewing.lock().unwrap_or_else(PoisonError::into_inner);
            state.1 = Some(policy.clone());
            state.0.clone()
        };
        let handles = crate::session::policy::install_with(&self.registry, policy, &self.log, &reviewing);
        let old = std::mem::replace(
            &mut *self.policy.lock().unwrap_or_else(PoisonError::into_inner),
            handles,
        );
        drop(old);
    }

    /// How reviewers run from now on (the policy in force is installed
    /// again with them).
    pub fn set_reviewing(&self, reviewing: Reviewing) {
        let policy = {
            let mut state = self.reviewing.lock().unwrap_or_else(PoisonError::into_inner);
            state.0 = reviewing;
            state.1.clone()
        };
        if let Some(policy) = policy {
            self.set_policy(&policy);
        }
    }

    /// What the journal recorded each reviewer answering: what a replay
    /// answers without calling it.
    pub fn recorded_reviews(&self) -> ReviewMode {
        crate::session::review::recorded(&self.scenario)
    }

    /// How long a scripted "timeout" keeps a call waiting.
    pub fn approval_timeout(&self) -> Duration {
        self.scenario
            .approval_timeout_ms
            .map_or(DEFAULT_SCRIPTED_TIMEOUT, Duration::from_millis)
    }

    /// Installs the scripted answerer of a headless replay: each call's
    /// scripted answer, else `default`.
    pub fn install_scripted_answerer(&self, default: NamedAnswer) -> Registration {
        let scripts = Arc::clone(&self.scripts);
        let log = self.log.clone();
        let timeout = self.approval_timeout();
        // Who a journal recorded approving each call that needed several.
        let approvers: Arc<HashMap<String, Vec<Arc<str>>>> = Arc::new(
            self.scenario
                .batches
                .iter()
                .flat_map(|b| &b.calls)
                .filter_map(|call| {
                    let decision = Decision::recorded(&call.recorded.as_ref()?.decision)?;
                    let approvers = decision.approvers.iter().map(|a| Arc::from(a.as_str())).collect();
                    Some((call.id.clone(), approvers))
                })
                .collect(),
        );
        self.registry.set_approval_answerer(move |request: ApprovalRequest| {
            let id = request.execution().call_id();
            let script = scripts
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(id)
                .cloned()
                .unwrap_or(ApprovalScript::Named(default));
            let recorded = approvers.get(id).cloned().unwrap_or_default();
            let log = log.clone();
            async move { Ok::<_, BoxError>(recorded_answer(&request, script, timeout, &log, &recorded).await) }
        })
    }

    /// The scope a batch runs in.
    pub fn batch_scope(&self, index: usize) -> Option<&AgentPipelineScope> {
        self.scenario
            .batches
            .get(index)
            .and_then(|b| b.scope.as_ref())
            .and_then(|id| self.scopes.get(id))
    }

    /// Runs one batch through `execute_batch` and reports every call.
    pub async fn run_batch(&self, index: usize, sink: Option<&dyn ToolBatchSink>) -> Vec<CallReport> {
        self.run_batch_until(index, sink, &CancellationToken::new()).await
    }

    /// The calls of a batch, each classified against the view it will run in.
    pub fn classified_calls(&self, index: usize) -> Vec<(tether_tools::ToolCall, ToolExecutionMode)> {
        let Some(spec) = self.scenario.batches.get(index) else {
            return Vec::new();
        };
        let view = self.registry.seal(self.batch_scope(index));
        spec.calls
            .iter()
            .map(|c| {
                let call = c.to_call();
                let mode = view.classify(&call);
                (call, mode)
            })
            .collect()
    }

    /// The same, for the screen: the view is sealed now (so the calls are
    /// classified as the batch about to run sees its tools), the copying
    /// and classifying is left to the console's thread.
    pub fn calls_for_screen(self: &Arc<Self>, index: usize) -> CallList {
        let view = self.registry.seal(self.batch_scope(index));
        let session = Arc::clone(self);
        CallList::Later {
            len: self.scenario.batches.get(index).map_or(0, |b| b.calls.len()),
            // The calls stay in the scenario until built.
            bytes: 0,
            // Called below `len` only, and the scenario does not change.
            call_at: std::sync::Arc::new(move |i| {
                let call = session.scenario.batches[index].calls[i].to_call();
                let mode = view.classify(&call);
                (call, mode)
            }),
        }
    }

    /// The batch's parallelism.
    pub fn max_parallelism(&self, index: usize) -> usize {
        self.scenario
            .batches
            .get(index)
            .and_then(|b| b.max_parallelism)
            .unwrap_or(DEFAULT_MAX_PARALLELISM)
    }

    /// Like [`Session::run_batch`]; cancelling `stop` cancels the batch as
    /// the contract says (the console does so when it quits).
    pub async fn run_batch_until(
        &self,
        index: usize,
        sink: Option<&dyn ToolBatchSink>,
        stop: &CancellationToken,
    ) -> Vec<CallReport> {
        let Some(spec) = self.scenario.batches.get(index) else {
            return Vec::new();
        };
        *self.scripts.lock().unwrap_or_else(PoisonError::into_inner) = self.scenario.scripts(index);
        let scope = self.batch_scope(index).cloned();
        let view = self.registry.seal(scope.as_ref());
        let calls: Vec<_> = spec.calls.iter().map(|c| c.to_call()).collect();
        let cancel = stop.child_token();
        let _timer = spec.cancel_after_ms.map(|ms| {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                cancel.cancel();
            })
            .abort_handle()
        });
        let parallelism = NonZeroUsize::new(self.max_parallelism(index)).unwrap_or(NonZeroUsize::MIN);
        let result = self
            .registry
            .execute_batch(calls, &view, parallelism, sink, &cancel)
            .await;
        for error in &result.sink_errors {
            tracing::error!(%error, "batch sink failed");
        }
        result
            .outcomes
            .into_iter()
            .zip(result.modes)
            .zip(&spec.calls)
            .map(|((outcome, mode), call)| {
                let trail = self.log.take_of(&outcome);
                let mut decided_by = decided_by(&outcome, &trail);
                let decision = Decision::of(&outcome, &trail);
                let recorded = call.recorded.as_ref().and_then(|r| r.outcome.clone());
                let unfinished = call.recorded.as_ref().is_some_and(|r| r.outcome.is_none());
                let answered_as_recorded = call.approval.is_some()
                    && trail.iter().any(|t| matches!(t, TrailEntry::Human { .. }))
                    && call.recorded.is_some();
                let recorded_decision = call.recorded.as_ref().and_then(|r| Decision::recorded(&r.decision));
                // A recorded block withheld the real result, so post-execute
                // policy cannot run on it again: when the call still reaches
                // its body, the recorded block is what the replay reports.
                let mut outcome = outcome;
                if let Some(blocked) = recorded
                    .as_ref()
                    .filter(|r| r.code() == Some(tether_tools::ToolFailureCode::Blocked))
                {
                    if matches!(outcome.code(), None | Some(tether_tools::ToolFailureCode::Blocked)) {
                        outcome = blocked.clone();
                        RECORDED_BLOCK.clone_into(&mut decided_by);
                    }
                }
                let expectation = call
                    .expect
                    .as_ref()
                    .map(|e| check_expectation(e, &outcome, &decided_by));
                CallReport {
                    batch: index,
                    call_id: outcome.call_id().into(),
                    name: outcome.name().to_owned(),
                    mode,
                    outcome,
                    decided_by,
                    trail,
                    expectation,
                    recorded,
                    decision,
                    recorded_decision,
                    arguments: call.to_call().arguments,
                    unfinished,
                    answered_as_recorded,
                }
            })
            .collect()
    }
}
