//! The approval capability (SPEC §8): what happens to a call whose
//! pre-execute decision is `Ask`.

use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::callback;
use crate::error::BoxError;
use crate::execution::ToolExecution;
use crate::sync::{Ids, read, write};

/// One call waiting for an answer.
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    id: u64,
    execution: ToolExecution,
    reason: Option<String>,
    argument_check: Result<(), String>,
}

impl ApprovalRequest {
    /// A registry-unique id for this request.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The call waiting for approval.
    pub fn execution(&self) -> &ToolExecution {
        &self.execution
    }

    /// The reason the `Ask` gave, if any.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The argument check (SPEC §7 step 5) against the tool this call
    /// resolved to, done now: `Err` holds the `INVALID_ARGS` message the call
    /// will fail with at step 5 if it is approved. The check is the one step 5
    /// runs, on the same immutable arguments and the same tool, so an answerer
    /// may approve such a call without asking anyone: it cannot reach a body.
    pub fn argument_check(&self) -> Result<(), &str> {
        match &self.argument_check {
            Ok(()) => Ok(()),
            Err(message) => Err(message),
        }
    }
}

/// An answerer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Go on to the guards and dispatch.
    Approved,
    /// Approved with the approver's arguments in place of the model's: the
    /// pre-execute waterfall runs again on them (a `Deny` still denies, an
    /// `Ask` is answered by this approval), then the guards, the argument
    /// check and the body see only these (SPEC §8, docs/engine.md).
    ApprovedWithEdits {
        /// The replacement arguments.
        arguments: serde_json::Value,
    },
    /// The call fails `DENIED`; the reason, if given, goes back to the model.
    Rejected {
        /// Why, in the answerer's words.
        reason: Option<String>,
    },
    /// The answerer could not answer (for example its own countdown ran out):
    /// the call fails `UNAVAILABLE` with this reason.
    Unavailable {
        /// What went wrong, for the model.
        reason: String,
    },
}

/// The approval capability installed on a registry. A failure, a panic or a
/// dropped answer all count as "unavailable", never as "rejected".
///
/// Implemented for every `Fn(ApprovalRequest) -> impl Future<Output = Result<ApprovalAnswer, BoxError>>`.
pub trait ApprovalAnswerer: Send + Sync + 'static {
    /// Answers one request.
    fn answer(&self, request: ApprovalRequest) -> BoxFuture<'static, Result<ApprovalAnswer, BoxError>>;
}

impl<F, Fut> ApprovalAnswerer for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ApprovalAnswer, BoxError>> + Send + 'static,
{
    fn answer(&self, request: ApprovalRequest) -> BoxFuture<'static, Result<ApprovalAnswer, BoxError>> {
        Box::pin(self(request))
    }
}

/// A request handed to whoever holds the receiving end of [`channel`], with
/// the one-shot to answer it on. Dropping it unanswered makes the call
/// `UNAVAILABLE`.
#[derive(Debug)]
pub struct PendingApproval {
    /// The request.
    pub request: ApprovalRequest,
    /// Where the answer goes.
    pub reply: oneshot::Sender<ApprovalAnswer>,
}

/// An answerer that forwards every request down a channel, for a UI or a
/// test to answer in its own time.
#[derive(Clone, Debug)]
pub struct ChannelAnswerer {
    sender: mpsc::UnboundedSender<PendingApproval>,
}

/// An answerer and the stream of requests it forwards.
pub fn channel() -> (ChannelAnswerer, mpsc::UnboundedReceiver<PendingApproval>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    (ChannelAnswerer { sender }, receiver)
}

impl ApprovalAnswerer for ChannelAnswerer {
    fn answer(&self, request: ApprovalRequest) -> BoxFuture<'static, Result<ApprovalAnswer, BoxError>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.sender.send(PendingApproval { request, reply });
        Box::pin(async move {
            sent.map_err(|_| "the approval channel is closed")?;
            answer
                .await
                .map_err(|_| "the approval request was dropped unanswered".into())
        })
    }
}

struct InstalledAnswerer {
    id: u64,
    answerer: Arc<dyn ApprovalAnswerer>,
    unloaded: CancellationToken,
}

/// How an `Ask` ended.
pub(crate) enum ApprovalOutcome {
    Approved,
    Edited(serde_json::Value),
    Rejected(String),
    Unavailable(String),
    Cancelled,
}

/// The approval capability of one registry: the installed answerer, if any,
/// and how long a call waits for it.
#[derive(Default)]
pub(crate) struct Approval {
    answerer: RwLock<Option<InstalledAnswerer>>,
    timeout: RwLock<Option<Duration>>,
}

impl Approval {
    /// Installs `answerer` under a registry-unique `id`, unloading any other.
    pub(crate) fn install(&self, id: u64, answerer: Arc<dyn ApprovalAnswerer>) {
        let installed = InstalledAnswerer {
            id,
            answerer,
            unloaded: CancellationToken::new(),
        };
        if let Some(previous) = write(&self.answerer).replace(installed) {
            previous.unloaded.cancel();
        }
    }

    /// Unloads the answerer installed under `id`, if it still is: calls
    /// waiting on it fail `UNAVAILABLE`.
    pub(crate) fn unload(&self, id: u64) {
        let mut slot = write(&self.answerer);
        if slot.as_ref().is_some_and(|a| a.id == id) {
            if let Some(removed) = slot.take() {
                removed.unloaded.cancel();
            }
        }
    }

    pub(crate) fn is_installed(&self) -> bool {
        read(&self.answerer).is_some()
    }

    pub(crate) fn set_timeout(&self, timeout: Option<Duration>) {
        *write(&self.timeout) = timeout;
    }

    pub(crate) async fn ask(
        &self,
        ids: &Ids,
        execution: &ToolExecution,
        reason: Option<String>,
        argument_check: Result<(), String>,
    ) -> ApprovalOutcome {
        let installed = read(&self.answerer)
            .as_ref()
            .map(|a| (Arc::clone(&a.answerer), a.unloaded.clone()));
        let Some((answerer, unloaded)) = installed else {
            return ApprovalOutcome::Unavailable("approval unavailable: no approval answerer is installed".to_owned());
        };
        let timeout = *read(&self.timeout);
        let request = ApprovalRequest {
            id: ids.next(),
            execution: execution.clone(),
            reason,
            argument_check,
        };
        let deadline = async {
            match timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let caller = execution.cancellation();
        // An answer that is already there wins: a call whose answer arrived
        // is no longer waiting, even if its caller is cancelled a moment later
        // (a cancelled caller then stops it before dispatch, at step 4).
        tokio::select! {
            biased;
            answer = callback::run_fallible(|| answerer.answer(request)) => match answer {
                Ok(ApprovalAnswer::Approved) => ApprovalOutcome::Approved,
                Ok(ApprovalAnswer::ApprovedWithEdits { arguments }) => ApprovalOutcome::Edited(arguments),
                Ok(ApprovalAnswer::Rejected { reason: Some(reason) }) => {
                    ApprovalOutcome::Rejected(format!("rejected by the approver: {reason}"))
                }
                Ok(ApprovalAnswer::Rejected { reason: None }) => {
                    ApprovalOutcome::Rejected("rejected by the approver".to_owned())
                }
                Ok(ApprovalAnswer::Unavailable { reason }) => ApprovalOutcome::Unavailable(reason),
                Err(error) => ApprovalOutcome::Unavailable(format!("approval unavailable: the answerer failed: {error}")),
            },
            () = caller.cancelled() => ApprovalOutcome::Cancelled,
            () = unloaded.cancelled() => ApprovalOutcome::Unavailable(
                "approval unavailable: the approval answerer was unloaded while the call waited".to_owned(),
            ),
            () = deadline => ApprovalOutcome::Unavailable(format!(
                "approval timed out after {}",
                format_duration(timeout.unwrap_or_default())
            )),
        }
    }
}

fn format_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
