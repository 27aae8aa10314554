//! A request's one answer: the slot the first console to answer takes, the
//! answer and who gave it, and why a later answer is refused.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

/// A human's answer and the console it came from (`main`, `attach 2 (pts/5)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answered {
    pub reply: PromptReply,
    pub by: Arc<str>,
    /// How many calls of one batch this one answer was given for (the
    /// batch answered at once, `Y` / `N`); `None` for a single answer.
    pub group: Option<usize>,
}

/// Why an answer was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Another console answered first.
    AnsweredBy(Arc<str>),
    /// The call stopped waiting (timed out, cancelled, its agent left).
    Gone,
    /// This answerer's approval of a call that needs several is counted
    /// already: another must approve (the two-person rule).
    ApprovedAlready { needed: u8 },
    /// A call that needs several approvals takes a plain approval or a
    /// rejection only: an always-rule or an edit would let one answerer
    /// decide for the others.
    OnlyPlainAnswers { needed: u8 },
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::AnsweredBy(first) => write!(f, "answered by {first}"),
            Refused::Gone => write!(f, "it stopped waiting"),
            Refused::ApprovedAlready { needed } => write!(
                f,
                "your approval is counted already: this call needs {needed} approvals from distinct answerers, so another must approve"
            ),
            Refused::OnlyPlainAnswers { needed } => write!(
                f,
                "this call needs {needed} approvals from distinct answerers: only approve or reject is taken (no always-rule, no edit)"
            ),
        }
    }
}

/// Who approved a call that needs several approvals before its prompt was
/// shown, and how many must (the two-person rule: an ask's `"approvals"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approvers {
    pub needed: u8,
    /// Each answerer who approved, once (`main`, `web:phone`).
    pub given: Vec<Arc<str>>,
}

impl Default for Approvers {
    fn default() -> Self {
        Self {
            needed: 1,
            given: Vec::new(),
        }
    }
}

impl Approvers {
    /// Whether the call needs more than one approval.
    pub fn several(&self) -> bool {
        self.needed > 1
    }

    /// What every screen shows on a call that needs several approvals:
    /// `1 of 2 approvals: human@main`.
    pub fn line(&self) -> Option<String> {
        if !self.several() {
            return None;
        }
        let count = format!("{} of {} approvals", self.given.len(), self.needed);
        Some(if self.given.is_empty() {
            format!("{count}: {} distinct answerers must approve", self.needed)
        } else {
            let who: Vec<String> = self
                .given
                .iter()
                .map(|by| crate::session::provenance::answered_at(by))
                .collect();
            format!("{count}: {}", who.join(", "))
        })
    }

    /// Why `reply` from `by` is not taken on a prompt with these
    /// approvers, if it is not.
    fn refuses(&self, reply: &PromptReply, by: &str) -> Option<Refused> {
        if !self.several() {
            return None;
        }
        let needed = self.needed;
        match reply {
            PromptReply::Approve if self.given.iter().any(|g| &**g == by) => Some(Refused::ApprovedAlready { needed }),
            PromptReply::ApproveAlways { .. } | PromptReply::ApproveEdited { .. } => {
                Some(Refused::OnlyPlainAnswers { needed })
            }
            _ => None,
        }
    }
}

/// Where a request's one answer goes: the first console to answer takes the
/// sender, and every later answer is refused with that console's name.
#[derive(Clone, Debug)]
pub struct ReplySlot {
    state: Arc<Mutex<SlotState>>,
    approvers: Arc<Approvers>,
}

#[derive(Debug)]
enum SlotState {
    Waiting(oneshot::Sender<Answered>),
    Answered(Arc<str>),
}

impl ReplySlot {
    /// A slot and the receiver its answer reaches.
    pub fn channel() -> (Self, oneshot::Receiver<Answered>) {
        Self::after(Approvers::default())
    }

    /// A slot for a call that needs `approvers.needed` approvals, of which
    /// `approvers.given` approved already: their approval again is refused.
    pub fn after(approvers: Approvers) -> (Self, oneshot::Receiver<Answered>) {
        let (sender, receiver) = oneshot::channel();
        let slot = Self {
            state: Arc::new(Mutex::new(SlotState::Waiting(sender))),
            approvers: Arc::new(approvers),
        };
        (slot, receiver)
    }

    /// Who approved before this prompt, and how many must.
    pub fn approvers(&self) -> &Approvers {
        &self.approvers
    }

    /// Whether `reply` from `by` would be taken if nobody answered first:
    /// `Err` when this slot never takes it.
    pub fn check(&self, reply: &PromptReply, by: &str) -> Result<(), Refused> {
        self.approvers.refuses(reply, by).map_or(Ok(()), Err)
    }

    /// Answers the request unless another console already did.
    pub fn answer(&self, reply: PromptReply, by: &Arc<str>) -> Result<(), Refused> {
        self.answer_as(reply, by, None)
    }

    /// Answers the request as one of a group of `of` calls given one
    /// answer, unless another console already answered it.
    pub fn answer_in_group(&self, reply: PromptReply, by: &Arc<str>, of: usize) -> Result<(), Refused> {
        self.answer_as(reply, by, Some(of))
    }

    fn answer_as(&self, reply: PromptReply, by: &Arc<str>, group: Option<usize>) -> Result<(), Refused> {
        self.check(&reply, by)?;
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut *state, SlotState::Answered(Arc::clone(by))) {
            SlotState::Waiting(sender) => sender
                .send(Answered {
                    reply,
                    by: Arc::clone(by),
                    group,
                })
                .map_err(|_| Refused::Gone),
            SlotState::Answered(first) => {
                *state = SlotState::Answered(Arc::clone(&first));
                Err(Refused::AnsweredBy(first))
            }
        }
    }
}

/// What the human decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptReply {
    Approve,
    /// Approved with the human's arguments in place of the model's (the
    /// engine runs pre-execute again on them: a deny still denies).
    ApproveEdited {
        arguments: serde_json::Value,
    },
    /// Approved by an "always" rule (the one just added, or an older one).
    ApproveAlways {
        rule: std::sync::Arc<crate::session::always::AlwaysRule>,
    },
    Reject {
        reason: Option<String>,
    },
    /// The console is closing, or the prompt could not be shown.
    Unavailable {
        reason: String,
    },
}
