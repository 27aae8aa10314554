//! Answering at once (`Y` / `N` on a prompt): the waiting calls of the
//! agent session the request on screen comes from (the same hook
//! `session_id`, link connection or gateway client: an agent's parallel
//! calls each arrive on their own), or of its batch when no agent session
//! sent it; listed first and answered only on `Enter`. The list is fixed
//! when it is shown, so a call that arrives later is never covered; each
//! call is answered through its own reply slot, so one that left the queue
//! meanwhile is not answered twice, and each call's trail says it was one
//! of a group.

use tui_textarea::TextArea;

use super::{App, Command, Overlay, PromptReply};
use crate::tui::keys::Action;

/// One answer for several calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupVerdict {
    Approve,
    Reject { reason: Option<String> },
}

/// What the calls answered at once have in common.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupOf {
    /// One agent session, by its id (as the agent wrote it).
    Session(String),
    /// One batch of a session-less caller (a replay), by the screen's
    /// batch number (0-based).
    Batch(usize),
}

impl GroupOf {
    /// `of agent session sess-1` / `of batch 2`, escaped.
    pub fn words(&self) -> String {
        match self {
            GroupOf::Session(id) => format!("of agent session {}", crate::sanitize::escape(id)),
            GroupOf::Batch(batch) => format!("of batch {}", batch + 1),
        }
    }
}

/// The waiting calls of one agent session (or batch), as listed when `Y`
/// or `N` was pressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub of: GroupOf,
    /// The requests listed, in queue order.
    pub ids: Vec<u64>,
    pub verdict: GroupVerdict,
}

impl App {
    /// The waiting requests of the agent session the request on screen
    /// comes from (of its batch, when no session sent it), in queue order,
    /// when there are two or more: what `Y` and `N` answer.
    pub fn head_group(&self) -> Option<(GroupOf, Vec<u64>)> {
        let head = self.prompts.current()?;
        let of = match &head.agent {
            Some(session) => GroupOf::Session(session.clone()),
            None => GroupOf::Batch(*self.prompt_batches.get(&head.id)?),
        };
        let ids: Vec<u64> = self
            .prompts
            .iter()
            .filter(|p| match &of {
                GroupOf::Session(session) => p.agent.as_ref() == Some(session),
                GroupOf::Batch(batch) => p.agent.is_none() && self.prompt_batches.get(&p.id) == Some(batch),
            })
            .map(|p| p.id)
            .collect();
        (ids.len() > 1).then_some((of, ids))
    }

    /// `Y`: the list of the batch's waiting calls, approved on `Enter`.
    pub(super) fn offer_group_approval(&mut self) {
        match self.head_group() {
            Some((of, ids)) => {
                self.overlay = Overlay::Group(Group {
                    of,
                    ids,
                    verdict: GroupVerdict::Approve,
                });
            }
            None => self.note("only this call of its agent session (or batch) is waiting: y approves it"),
        }
    }

    /// `N`: one reason editor for the batch's waiting calls; `Ctrl+S` shows
    /// the list, `Enter` then rejects them all.
    pub(super) fn offer_group_rejection(&mut self) {
        match self.head_group() {
            Some((of, ids)) => {
                let mut textarea = TextArea::default();
                textarea.set_placeholder_text(format!(
                    "why? (optional; the model reads this for each of the {} calls)",
                    ids.len()
                ));
                self.group_reason = Some(Group {
                    of,
                    ids,
                    verdict: GroupVerdict::Reject { reason: None },
                });
                self.open_for_head(Overlay::Reason(Box::new(textarea)));
            }
            None => self.note("only this call of its agent session (or batch) is waiting: n rejects it"),
        }
    }

    /// `Ctrl+S` in the group's reason editor: the list, with the reason.
    pub(super) fn group_reason_done(&mut self) {
        let reason = match &self.overlay {
            Overlay::Reason(textarea) => textarea.lines().join("\n").trim().to_owned(),
            _ => String::new(),
        };
        self.overlay_prompt = None;
        self.overlay = match self.group_reason.take() {
            Some(group) => Overlay::Group(Group {
                verdict: GroupVerdict::Reject {
                    reason: (!reason.is_empty()).then_some(reason),
                },
                ..group
            }),
            None => Overlay::None,
        };
    }

    /// `Esc` in the group's reason editor: back to the prompt.
    pub(super) fn group_reason_closed(&mut self) {
        self.group_reason = None;
        self.overlay_prompt = None;
        self.overlay = Overlay::None;
    }

    pub(super) fn group_action(&mut self, action: Action) -> Option<Command> {
        match action {
            Action::Close => self.overlay = Overlay::None,
            Action::ConfirmGroup => self.answer_group(),
            _ => {}
        }
        None
    }

    /// `Enter` on the list: every listed call still waiting gets the answer.
    fn answer_group(&mut self) {
        let Overlay::Group(group) = std::mem::take(&mut self.overlay) else {
            return;
        };
        let (reply, said) = match group.verdict {
            GroupVerdict::Approve => (PromptReply::Approve, "approved"),
            GroupVerdict::Reject { reason } => (PromptReply::Reject { reason }, "rejected"),
        };
        let me = self.me.clone();
        let answered = self.prompts.answer_group(&group.ids, &reply, &me);
        let missed = group.ids.len() - answered.len();
        let mut note = format!(
            "{} {} {said} {} at once",
            super::plural(answered.len(), "call"),
            group.of.words(),
            self.by_you()
        );
        if missed > 0 {
            note.push_str(&format!(
                "; {} not answered (no longer waiting, or your approval of it counted already)",
                super::plural(missed, "call")
            ));
        }
        self.note(note);
        self.sync_head("");
    }
}
