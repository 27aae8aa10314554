//! The console's approval answerer: the engine's `Ask` becomes a prompt in
//! the FIFO queue, with a countdown. Only the human at the console answers;
//! nothing on the agent link can.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tether_tools::{ApprovalAnswer, ApprovalAnswerer, ApprovalRequest, BoxError, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::session::always::AlwaysRules;
use crate::session::events::{AppEvent, AppEventSender, ApprovalPrompt, Approvers, ReplySlot, Stage};
use crate::session::notify::NotifyCommand;
use crate::session::provenance::{CallKey, DecisionLog, TrailEntry};

mod closing;
mod notifier;
mod said;
mod settle;
mod wait;
pub use notifier::Escalation;
use notifier::Notifier;
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

    /// Puts `new` in `old`'s place (a call asked again keeps its place).
    fn replace(&self, old: u64, new: u64) {
        let mut ids = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match ids.iter_mut().find(|i| **i == old) {
            Some(at) => *at = new,
            None => ids.push(new),
        }
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
        // The two-person rule: a call its rule says several must approve is
        // never approved by a rule, whoever made it.
        let needed = standing.approvals(&execution, asker.as_deref()).get();
        let matched = if needed > 1 {
            None
        } else {
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
        let (reply, answer) = ReplySlot::after(Approvers {
            needed,
            given: Vec::new(),
        });
        if needed > 1 {
            log.record(&execution, TrailEntry::NeedsApprovals { of: needed });
        }
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
            editing: if needed > 1 {
                // Each answerer must approve what the others approved.
                crate::session::editing::Editing::Unsupported(format!(
                    "this call needs {needed} approvals from distinct answerers, and each must approve the same arguments"
                ))
            } else {
                crate::session::editing::of(&self.registry, &execution)
            },
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
            approvers: Approvers {
                needed,
                given: Vec::new(),
            },
            escalated: false,
        });
        let (prompt_reason, prompt_deadline) = (prompt.reason.clone(), prompt.deadline);
        // Kept to ask again only when several must approve.
        let again = (needed > 1).then(|| prompt.clone());
        let first = prompt.id;
        self.events.send(AppEvent::ApprovalRequested(Box::new(prompt)));
        let events = self.events.clone();
        let escalation = self.escalation.clone();
        let escalator = escalation.escalate.as_ref().map(|(_, command)| Notifier {
            command: command.clone(),
            id,
            execution: execution.clone(),
            reason: prompt_reason,
            deadline: prompt_deadline,
            waiting: self.waiting.clone(),
            // Told only its `approval/escalated`, whatever came before.
            told: false,
            approvers: Approvers {
                needed,
                given: Vec::new(),
            },
            escalated: false,
        });
        Box::pin(async move {
            Ok(wait::wait(wait::Asked {
                id: first,
                again,
                answer,
                execution,
                log,
                events,
                waiting,
                notifier,
                escalator,
                escalation,
                timeout,
                asked,
            })
            .await)
        })
    }
}

#[cfg(test)]
mod tests;
