//! Turns compiled rules into ordinary engine listeners and guards.
//!
//! Pre-execute and post-execute rules are each one listener that walks its
//! stage's rules in file order: the first rule that matches decides and the
//! rest of the waterfall is skipped; with no match, the call goes on to
//! `next`. Each guard rule is a guard of its own, so adding rules only ever
//! makes policy stricter. Execute rules put a deadline on the body by
//! replacing the dispatch token.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tether_tools::{
    ExecuteError, ExecuteNext, ExecutedResult, ListenerOrder, PostExecuteNext, PreExecuteNext, Registration,
    ToolDispatch, ToolExecution, ToolExecutionOutcome, ToolPostDecision, ToolPreDecision, ToolRegistry,
};

use crate::files::policy::{
    Action, Policy, Rule, ShellTool, Stage, UNMATCHED_DENIED, UNPINNED_ASKS, allowed_by_segments, uncovered_commands,
};
use crate::session::events::AppEvent;
use crate::session::journal::{JournalWriter, ReloadedBy};
use crate::session::provenance::{DecisionLog, TrailEntry};
use crate::session::review::{Reviewers, Reviewing};

/// Re-reads the policy file at `path` for `by`; a file with errors changes
/// nothing. A file that loads is handed to `put_in_force`. Either way the
/// journal (if any) records it, and the event to tell every screen is
/// returned.
pub fn reload(
    path: Option<&Path>,
    by: ReloadedBy,
    journal: Option<&JournalWriter>,
    put_in_force: impl FnOnce(&Policy),
) -> AppEvent {
    let Some(path) = path else {
        return AppEvent::PolicyRejected {
            message: "no policy file was given (--policy)".into(),
        };
    };
    let written = match Policy::load(path) {
        Ok(policy) => {
            put_in_force(&policy);
            let event = AppEvent::PolicyReloaded {
                path: path.display().to_string(),
                rules: policy.rules.len(),
                header: policy.header_text(),
            };
            let written = journal.map(|j| j.record_policy_reload(path, policy.rules.len(), by));
            (event, written)
        }
        Err(errors) => {
            let message = errors.first().map(ToString::to_string).unwrap_or_default();
            let written = journal.map(|j| j.record_policy_reload_failed(path, by, &message));
            (AppEvent::PolicyRejected { message }, written)
        }
    };
    if let (_, Some(Err(error))) = &written {
        tracing::error!(%error, "the policy reload could not be written to the journal");
    }
    written.0
}

/// Registers a policy; dropping the returned handles removes it again.
/// Its reviewers are called live, and tell nobody but the trail.
pub fn install(registry: &ToolRegistry, policy: &Policy, log: &DecisionLog) -> Vec<Registration> {
    install_with(registry, policy, log, &Reviewing::default())
}

/// What the pre-execute rules make of a call.
enum Pre {
    Decided(ToolPreDecision),
    /// A `review` rule routed it to a reviewer.
    Review {
        rule: Arc<str>,
        reviewer: String,
        by: Arc<ReviewContext>,
    },
}

/// What a review needs, shared by every call a rule routes (cloned per
/// reviewed call only, so rule-decided calls pay nothing for it).
struct ReviewContext {
    reviewers: Reviewers,
    reviewing: Reviewing,
    log: DecisionLog,
}

/// Registers a policy whose reviewers run as `reviewing` says.
pub fn install_with(
    registry: &ToolRegistry,
    policy: &Policy,
    log: &DecisionLog,
    reviewing: &Reviewing,
) -> Vec<Registration> {
    let of = |stage: Stage| -> Arc<[Rule]> { policy.all_rules().filter(|r| r.stage == stage).cloned().collect() };
    let mut handles = Vec::new();
    let reviewers = Reviewers::new(&policy.reviewers);
    if !reviewers.is_empty() {
        // A reviewer sees the agent's last calls and how they ended.
        let (history, log) = (reviewing.history.clone(), log.clone());
        handles.push(registry.register_result(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, outcome: Arc<ToolExecutionOutcome>| {
                history.record(&e, &outcome, &log);
                async { Ok(()) }
            },
        ));
    }

    let pre = of(Stage::PreExecute);
    log.standing().put_in_force(Arc::clone(&pre));
    if !pre.is_empty() {
        let log = log.clone();
        let review = Arc::new(ReviewContext {
            reviewers,
            reviewing: reviewing.clone(),
            log: log.clone(),
        });
        let guards = of(Stage::Guard);
        let shell_tools: Arc<[ShellTool]> = policy.shell_tools.iter().cloned().collect();
        handles.push(registry.register_pre_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, next: PreExecuteNext| {
                let whole = pre.iter().position(|r| r.matcher.matches(&e));
                // A compound each of whose commands some allow rule covers
                // is allowed by the first of them, unless a rule before it
                // decides.
                let by_segments = allowed_by_segments(&pre, &e)
                    .and_then(|rule| pre.iter().position(|r| std::ptr::eq(r, rule)))
                    .filter(|at| whole.is_none_or(|w| *at < w));
                let start = by_segments.or(whole).unwrap_or(pre.len());
                let mut matching = pre[start..]
                    .iter()
                    .enumerate()
                    .filter(|(i, r)| (*i == 0 && by_segments.is_some()) || r.matcher.matches(&e))
                    .map(|(_, r)| r);
                let decision = match matching.next() {
                    // An unpinned MCP tool is asked before any rule of the
                    // file can allow it; a rule of the file that denies it
                    // still denies.
                    Some(unpinned) if &*unpinned.id == UNPINNED_ASKS => matching
                        .find(|r| matches!(r.action, Action::Deny { .. }) && &*r.id != UNMATCHED_DENIED)
                        .or(Some(unpinned)),
                    first => first,
                };
                let decision = decision.map(|rule| {
                    log.record(
                        &e,
                        TrailEntry::PreRule {
                            id: Arc::clone(&rule.id),
                            action: rule.action.name(),
                        },
                    );
                    match &rule.action {
                        Action::Deny { reason } => Pre::Decided(ToolPreDecision::Deny(reason.clone())),
                        Action::Ask { .. } => {
                            before_asking(&log, &e, &pre, &guards, &shell_tools);
                            Pre::Decided(ToolPreDecision::Ask(rule.ask_reason(&e)))
                        }
                        // Approved with edits: the engine runs this stage
                        // again, and an ask is the question the human just
                        // answered; the reviewer is not asked after them.
                        Action::Review { .. } if e.edited_from().is_some() => Pre::Decided(ToolPreDecision::Ask(None)),
                        Action::Review { reviewer } => {
                            // The reviewer may send it on to the human.
                            before_asking(&log, &e, &pre, &guards, &shell_tools);
                            Pre::Review {
                                rule: Arc::clone(&rule.id),
                                reviewer: reviewer.clone(),
                                by: Arc::clone(&review),
                            }
                        }
                        _ => Pre::Decided(ToolPreDecision::Allow),
                    }
                });
                async move {
                    match decision {
                        Some(Pre::Decided(decision)) => Ok(decision),
                        Some(Pre::Review { rule, reviewer, by }) => {
                            Ok(by.reviewers.review(&e, &rule, &reviewer, &by.log, &by.reviewing).await)
                        }
                        None => next.run().await,
                    }
                }
            },
        ));
    }

    for rule in of(Stage::Guard).iter().cloned() {
        let log = log.clone();
        handles.push(
            registry.register_guard(None, ListenerOrder::Append, move |e: ToolExecution| {
                let veto = match &rule.action {
                    Action::Veto { reason } if rule.matcher.matches(&e) => {
                        log.record(
                            &e,
                            TrailEntry::GuardVeto {
                                id: Arc::clone(&rule.id),
                                reason: reason.clone(),
                            },
                        );
                        Some(reason.clone())
                    }
                    _ => None,
                };
                async move { Ok(veto) }
            }),
        );
    }

    let execute = of(Stage::Execute);
    if !execute.is_empty() {
        let log = log.clone();
        handles.push(registry.register_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, dispatch: ToolDispatch, next: ExecuteNext| {
                let deadline = execute
                    .iter()
                    .find(|r| r.matcher.matches(&e))
                    .and_then(|r| match r.action {
                        Action::Timeout { ms } => Some((Arc::clone(&r.id), ms)),
                        _ => None,
                    });
                let log = log.clone();
                async move {
                    let Some((id, ms)) = deadline else {
                        return next.run(dispatch).await;
                    };
                    with_deadline(e, dispatch, next, &log, id, ms).await
                }
            },
        ));
    }

    let post = of(Stage::PostExecute);
    if !post.is_empty() {
        let log = log.clone();
        handles.push(registry.register_post_execute(
            None,
            ListenerOrder::Append,
            move |e: ToolExecution, result: ExecutedResult, next: PostExecuteNext| {
                let decision = post
                    .iter()
                    .find(|r| r.matcher.matches(&e) && result_matches(r, &result))
                    .map(|rule| {
                        log.record(
                            &e,
                            TrailEntry::PostRule {
                                id: Arc::clone(&rule.id),
                                action: rule.action.name(),
                            },
                        );
                        match &rule.action {
                            Action::Replace { value } => ToolPostDecision::Replace(value.clone()),
                            Action::Block { reason } => ToolPostDecision::Block(reason.clone()),
                            _ => ToolPostDecision::Accept,
                        }
                    });
                async move {
                    match decision {
                        Some(decision) => Ok(decision),
                        None => next.run().await,
                    }
                }
            },
        ));
    }
    handles
}

/// What the human should see before answering a call that may reach them:
/// where a marked shell tool's command is, which commands of a compound no
/// rule covers, and a guard that will veto it even if approved.
fn before_asking(log: &DecisionLog, e: &ToolExecution, pre: &[Rule], guards: &[Rule], shell_tools: &[ShellTool]) {
    if let Some(marked) = shell_tools.iter().find(|s| s.tool == e.name()) {
        log.record(
            e,
            TrailEntry::ShellCommandAt {
                pointer: Arc::from(marked.command.as_str()),
            },
        );
    }
    if let Some(commands) = uncovered_commands(pre, e) {
        log.record(
            e,
            TrailEntry::NotCovered {
                commands: commands.into(),
            },
        );
    }
    let veto = guards.iter().find_map(|g| match &g.action {
        Action::Veto { reason } if g.matcher.matches(e) => Some((g, reason)),
        _ => None,
    });
    if let Some((guard, veto)) = veto {
        log.record(
            e,
            TrailEntry::GuardWillVeto {
                id: Arc::clone(&guard.id),
                reason: veto.clone(),
            },
        );
    }
}

fn result_matches(rule: &Rule, result: &ExecutedResult) -> bool {
    let Some(predicate) = &rule.result else { return true };
    match result.as_ref() {
        Ok(value) => predicate.holds(value),
        Err(failure) => predicate.holds(&Value::String(failure.message.clone())),
    }
}

/// Runs the rest of the stage with a token that also fires after `ms`.
async fn with_deadline(
    execution: ToolExecution,
    dispatch: ToolDispatch,
    next: ExecuteNext,
    log: &DecisionLog,
    id: Arc<str>,
    ms: u64,
) -> Result<Value, ExecuteError> {
    let token = dispatch.cancellation().child_token();
    let run = next.run(dispatch.with_cancellation(token.clone()));
    tokio::pin!(run);
    let result = tokio::select! {
        result = &mut run => Err(result),
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
    };
    match result {
        Err(result) => {
            log.record(&execution, TrailEntry::Deadline { id, ms, fired: false });
            result
        }
        Ok(()) => {
            token.cancel();
            log.record(&execution, TrailEntry::Deadline { id, ms, fired: true });
            match run.await {
                Err(ExecuteError::Aborted { .. }) => Err(ExecuteError::Aborted {
                    reason: format!("timed out after {ms} ms"),
                }),
                other => other,
            }
        }
    }
}
