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
}

/// Where a request's one answer goes: the first console to answer takes the
/// sender, and every later answer is refused with that console's name.
#[derive(Clone, Debug)]
pub struct ReplySlot(Arc<Mutex<SlotState>>);

#[derive(Debug)]
enum SlotState {
    Waiting(oneshot::Sender<Answered>),
    Answered(Arc<str>),
}

impl ReplySlot {
    /// A slot and the receiver its answer reaches.
    pub fn channel() -> (Self, oneshot::Receiver<Answered>) {
        let (sender, receiver) = oneshot::channel();
        (Self(Arc::new(Mutex::new(SlotState::Waiting(sender)))), receiver)
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
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
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
