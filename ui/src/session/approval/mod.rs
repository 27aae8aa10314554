//! The console's approval answerer: the engine's `Ask` becomes a prompt in
//! the FIFO queue, with a countdown. Only the human at the console answers;
//! nothing on the agent link can.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tether_tools::{ApprovalAnswer, ApprovalAnswerer, ApprovalRequest, BoxError, ToolExecution, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::session::always::AlwaysRules;
use crate::session::events::{Answered, AppEvent, AppEventSender, ApprovalPrompt, PromptReply, ReplySlot, Stage};
use crate::session::notify::{Lifecycle, NotifyCommand};
use crate::session::provenance::{CallKey, DecisionLog, TrailEntry};

mod notifier;
mod said;
pub use notifier::Escalation;
use notifier::{Next, Notifier, Timer};
pub use said::describe;
use said::{outcome_word, span};

/// Asks the human at the console.
pub struct ConsoleAnswerer {
    pub events: AppEventSender,
    pub timeout: Duration,
    pub always: AlwaysRules,
    pub log: DecisionLog,
    pub registry: ToolRegistry,
    /// The user's notify command (`--notify-cmd`), told when a request
    /// starts waiting, a quarter of its time is left, and it ends.
    pub notify: Option<NotifyCommand>,
    /// The requests waiting now, oldest first (their place in the queue).
    pub waiting: Waiting,
    /// When an unanswered request is reminded and escalated.
    pub escalation: Escalation,
}

/// The ids of the requests waiting, oldest first.
#[derive(Clone, Debug, Default)]
pub struct Waiting(Arc<Mutex<Vec<u64>>>);

impl Waiting {
    fn add(&self, id: u64) -> (usize, usize) {
        let mut ids = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        ids.push(id);
        (ids.len(), ids.len())
    }

    /// `(position, length)`, 1-based; `(0, length)` once it left.
    fn place(&self, id: u64) -> (usize, usize) {
        let ids = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        (ids.iter().position(|i| *i == id).map_or(0, |at| at + 1), ids.len())
    }

    fn remove(&self, id: u64) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|i| *i != id);
    }
}

static NEXT_PROMPT: AtomicU64 = AtomicU64::new(1);

/// An agent's connection, as the answerer sees it: a front door attaches
/// one to the agent's session scope (the engine's opaque session object) so
/// that a prompt closed by the agent going away says so. `closed` is
/// cancelled when the connection ends.
#[derive(Clone, Debug)]
pub struct AgentConnection {
    pub closed: CancellationToken,
}

/// Closes the prompt if the call stops waiting without an answer (the
/// engine dropped us: the caller was cancelled, or the answerer unloaded),
/// and tells the notify command how the wait ended in every case.
struct CloseOnDrop {
    id: u64,
    events: AppEventSender,
    armed: bool,
    execution: ToolExecution,
    /// Set when the reason is known before the drop (a timeout).
    reason: Option<String>,
    waiting: Waiting,
    notifier: Option<Notifier>,
    /// How it ended, for the notify command: (`approved`…, by whom).
    ended: Option<(&'static str, Arc<str>)>,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        let timed_out = self.reason.is_some();
        if self.armed {
            let reason = self.reason.take().unwrap_or_else(|| why_dropped(&self.execution));
            self.events.send(AppEvent::ApprovalClosed { id: self.id, reason });
        }
        self.waiting.remove(self.id);
        if let Some(notifier) = &mut self.notifier {
            let (answer, by) = match &self.ended {
                Some((answer, by)) => (*answer, by.as_ref()),
                None if timed_out => ("timed out", "timeout"),
                None => ("closed", "nobody"),
            };
            notifier.tell(Lifecycle::Closed, Some((answer, by)));
        }
    }
}

/// Why a call stopped waiting for its answer, read when it stops: its
/// agent's connection closed, its hook bridge went away, its batch was
/// cancelled, or (none of those) the answerer itself was replaced.
fn why_dropped(execution: &ToolExecution) -> String {
    let scope = execution.scope();
    let connection = scope
        .and_then(|s| s.session())
        .and_then(|s| s.downcast_ref::<AgentConnection>());
    // The session object is inherited: the scope it was set on is the
    // highest one that still has it, and that scope's label names the agent
    // (a call may run in a child scope the agent opened).
    let agent = scope
        .and_then(|s| s.chain().filter(|s| s.session().is_some()).last().or(Some(s)))
        .and_then(|s| s.label())
        .unwrap_or("agent");
    if connection.is_some_and(|c| c.closed.is_cancelled()) {
        return format!("agent {agent} disconnected");
    }
    let cancelled = execution.cancellation().is_cancelled();
    let hook = execution.metadata().get("hook") == Some(&serde_json::Value::Bool(true));
    match (cancelled, hook) {
        (true, true) => format!("the hook of {agent} disconnected"),
        (true, false) => "its batch was cancelled".to_owned(),
        (false, _) => "the call stopped waiting (the answerer was replaced)".to_owned(),
    }
}

impl ApprovalAnswerer for ConsoleAnswerer {
    fn answer(&self, request: ApprovalRequest) -> BoxFuture<'static, Result<ApprovalAnswer, BoxError>> {
        let execution = request.execution().clone();
        let key = CallKey::of(&execution);
        let tool = execution.name().to_owned();
        let scope_id = execution.scope().map(|s| s.id());
        let log = self.log.clone();

        // Approving is safe: the engine's argument check (SPEC §7 step 5) runs
        // the same check on the same tool and fails the call `INVALID_ARGS`
        // before any body; asking would have the human approve a call that
        // fails anyway.
        if request.argument_check().is_err() {
            log.record(&execution, TrailEntry::NotAskedInvalidArgs);
            return Box::pin(async { Ok(ApprovalAnswer::Approved) });
        }

        // An always-rule is consulted where it stands among the policy's
        // rules: a call a rule before it asked never reaches it.
        let standing = log.standing();
        let asker = log.with_trail(&key, crate::session::provenance::asker);
        let matched = {
            let rules = self.always.lock().unwrap_or_else(PoisonError::into_inner);
            let reached: Vec<_> = rules
                .iter()
                .filter(|r| standing.reaches(r.anchor.as_deref(), &execution, asker.as_deref()))
                .cloned()
                .collect();
            reached
                .iter()
                .find(|r| r.matches_execution(&execution))
                .or_else(|| crate::session::always::covering_each_command(&reached, &execution))
                .map(|r| std::sync::Arc::new(r.clone()))
        };
        if let Some(rule) = matched {
            log.record(&execution, TrailEntry::AlwaysRule { rule });
            return Box::pin(async { Ok(ApprovalAnswer::Approved) });
        }

        let id = NEXT_PROMPT.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = ReplySlot::channel();
        let scope = execution.scope();
        let asked = Instant::now();
        let command_at = log.shell_command_at(&CallKey::of(&execution));
        let anchor = standing.anchor_for(&execution, asker.as_deref());
        // The rule that asked may set its own wait (`"timeout": "10m"`).
        let timeout = standing.ask_timeout(asker.as_deref()).unwrap_or(self.timeout);
        let passed_over = standing.passed_over(execution.name(), anchor.as_deref());
        let prompt = ApprovalPrompt {
            id,
            key,
            tool,
            call_id: execution.call_id().to_owned(),
            scope_label: scope.and_then(|s| s.label()).unwrap_or("global").to_owned(),
            scope_id,
            owner: execution.owner().map(str::to_owned),
            agent: execution.session_id().map(str::to_owned),
            reason: request.reason().map(str::to_owned),
            arguments: execution.raw_arguments().to_owned(),
            // The schema compiled at registration decides, with the message
            // the call will fail with if it is approved.
            validation: self.registry.seal(execution.scope()).check_arguments(&execution),
            guard_veto: log.guard_will_veto(&CallKey::of(&execution)),
            command_at: command_at.clone(),
            cwd: crate::paths::runs_in(&execution).map(|c| c.display().to_string()),
            subagent: crate::subagent::Subagent::of(&execution),
            commands: crate::session::events::command_lines(
                execution.name(),
                execution.arguments(),
                command_at.as_deref(),
                &log.not_covered(&CallKey::of(&execution)),
            ),
            deadline: asked + timeout,
            editing: crate::session::editing::of(&self.registry, &execution),
            asked_at: asked,
            anchor,
            passed_over,
            agent_name: crate::subagent::agent_of(&execution),
            reply,
        };
        self.events.send(AppEvent::Stage {
            execution: execution.clone(),
            stage: Stage::AwaitingApproval,
            at: Instant::now(),
        });
        let waiting = self.waiting.clone();
        waiting.add(id);
        let notifier = self.notify.as_ref().map(|command| Notifier {
            command: command.clone(),
            id,
            execution: execution.clone(),
            reason: prompt.reason.clone(),
            deadline: prompt.deadline,
            waiting: waiting.clone(),
            told: false,
        });
        let (prompt_reason, prompt_deadline) = (prompt.reason.clone(), prompt.deadline);
        self.events.send(AppEvent::ApprovalRequested(Box::new(prompt)));
        let events = self.events.clone();
        let escalation = self.escalation.clone();
        let mut escalator = escalation.escalate.as_ref().map(|(_, command)| Notifier {
            command: command.clone(),
            id,
            execution: execution.clone(),
            reason: prompt_reason,
            deadline: prompt_deadline,
            waiting: self.waiting.clone(),
            told: true,
        });
        Box::pin(async move {
            let mut guard = CloseOnDrop {
                id,
                events,
                armed: true,
                execution: execution.clone(),
                reason: None,
                waiting,
                notifier,
                ended: None,
            };
            // One timer: the notify grace, the reminder, the deadline in turn.
            let mut timer = Timer::new(
                tokio::time::Instant::now(),
                timeout,
                guard.notifier.is_some(),
                &escalation,
            );
            let sleep = tokio::time::sleep_until(timer.at());
            tokio::pin!(sleep);
            let mut answer = answer;
            let reply = loop {
                tokio::select! {
                    reply = &mut answer => break Some(reply),
                    () = &mut sleep => {
                        let lifecycle = match timer.next() {
                            Next::Deadline => break None,
                            Next::Grace => Lifecycle::Waiting,
                            Next::Reminder => Lifecycle::Reminder,
                            Next::Escalate => Lifecycle::Escalated,
                        };
                        match lifecycle {
                            Lifecycle::Escalated => {
                                if let Some(escalator) = &mut escalator {
                                    escalator.tell(lifecycle, None);
                                }
                            }
                            _ => {
                                if let Some(notifier) = &mut guard.notifier {
                                    notifier.tell(lifecycle, None);
                                }
                            }
                        }
                        // `--remind-after`: every screen rings again.
                        if lifecycle == Lifecycle::Reminder && escalation.remind_after.is_some() {
                            guard.events.send(AppEvent::ApprovalReminder { id });
                        }
                        timer.advance();
                        sleep.as_mut().reset(timer.at());
                    }
                }
            };
            let answer = match reply {
                Some(reply) => {
                    guard.armed = false;
                    match reply {
                        Ok(Answered { reply, by, group }) => {
                            let said = describe(&reply);
                            if let Some(of) = group {
                                log.record(&execution, TrailEntry::AnsweredInGroup { of });
                            }
                            guard.ended = Some((outcome_word(&reply), Arc::clone(&by)));
                            let human = |approved, reason| TrailEntry::Human {
                                approved,
                                reason,
                                by: Arc::clone(&by),
                                waited: asked.elapsed(),
                            };
                            let answer = match reply {
                                PromptReply::Approve | PromptReply::ApproveAlways { .. } => {
                                    guard.events.send(AppEvent::Stage {
                                        execution: execution.clone(),
                                        stage: Stage::Guards,
                                        at: Instant::now(),
                                    });
                                    log.record(&execution, human(true, None));
                                    // A human who answered by adding a rule: both are the record.
                                    if let PromptReply::ApproveAlways { rule } = reply {
                                        log.record(&execution, TrailEntry::AlwaysRule { rule });
                                    }
                                    ApprovalAnswer::Approved
                                }
                                PromptReply::ApproveEdited { arguments } => {
                                    guard.events.send(AppEvent::Stage {
                                        execution: execution.clone(),
                                        stage: Stage::Guards,
                                        at: Instant::now(),
                                    });
                                    log.record(&execution, human(true, None));
                                    log.record(
                                        &execution,
                                        TrailEntry::Edited {
                                            from: Arc::new(execution.arguments().clone()),
                                            to: Arc::new(arguments.clone()),
                                            by: Arc::clone(&by),
                                        },
                                    );
                                    ApprovalAnswer::ApprovedWithEdits { arguments }
                                }
                                PromptReply::Reject { reason } => {
                                    log.record(&execution, human(false, reason.clone()));
                                    ApprovalAnswer::Rejected { reason }
                                }
                                PromptReply::Unavailable { reason } => {
                                    log.record(&execution, TrailEntry::NoAnswerer);
                                    ApprovalAnswer::Unavailable { reason }
                                }
                            };
                            guard.events.send(AppEvent::ApprovalAnswered { id, by, answer: said });
                            answer
                        }
                        Err(_) => {
                            log.record(&execution, TrailEntry::NoAnswerer);
                            ApprovalAnswer::Unavailable {
                                reason: "approval unavailable: the prompt was closed".to_owned(),
                            }
                        }
                    }
                }
                None => {
                    guard.reason = Some(format!("no answer in {}", span(timeout)));
                    log.record(&execution, TrailEntry::ApprovalTimedOut);
                    // UNAVAILABLE, never a rejection: nobody said no.
                    ApprovalAnswer::Unavailable {
                        reason: format!("approval timed out: nobody answered within {}", span(timeout)),
                    }
                }
            };
            Ok(answer)
        })
    }
}

#[cfg(test)]
mod tests;
