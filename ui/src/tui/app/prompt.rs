//! The approval queue: first in, first out; a new request never replaces the
//! one on screen, and every request is answered exactly once — by whichever
//! console answers first (the others are refused with its name).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::session::always::AlwaysRule;
use crate::session::events::{ApprovalPrompt, PromptReply, Refused};

#[derive(Debug, Default)]
pub struct PromptQueue {
    queue: VecDeque<ApprovalPrompt>,
}

impl PromptQueue {
    pub fn push(&mut self, prompt: ApprovalPrompt) {
        // A console that attaches is told of every waiting request, and may
        // hear of one twice (before and after it subscribed).
        if self.queue.iter().all(|p| p.id != prompt.id) {
            self.queue.push_back(prompt);
        }
    }

    pub fn current(&self) -> Option<&ApprovalPrompt> {
        self.queue.front()
    }

    pub fn get(&self, id: u64) -> Option<&ApprovalPrompt> {
        self.queue.iter().find(|p| p.id == id)
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &ApprovalPrompt> {
        self.queue.iter()
    }

    /// Answers request `id` (wherever it is in the queue) and forgets it;
    /// returns it, or why the answer was not taken (it is forgotten then
    /// too, unless the request refuses that answer from this console only:
    /// an approval counted already on a call that needs several).
    pub fn answer(&mut self, id: u64, reply: PromptReply, by: &Arc<str>) -> Result<ApprovalPrompt, Refused> {
        let at = self.queue.iter().position(|p| p.id == id).ok_or(Refused::Gone)?;
        if let Some(prompt) = self.queue.get(at) {
            prompt.reply.check(&reply, by)?;
        }
        let prompt = self.queue.remove(at).ok_or(Refused::Gone)?;
        prompt.reply.answer(reply, by).map(|()| prompt)
    }

    /// Answers every queued request that `rule` matches; returns how many
    /// this console answered.
    pub fn answer_matching(&mut self, rule: &AlwaysRule, by: &Arc<str>) -> usize {
        // A call that needs several approvals is never approved by a rule.
        let (matching, rest): (VecDeque<_>, VecDeque<_>) = self
            .queue
            .drain(..)
            .partition(|p| rule.matches_prompt(p) && !p.reply.approvers().several());
        self.queue = rest;
        matching
            .into_iter()
            .filter(|p| {
                p.reply
                    .answer(
                        PromptReply::ApproveAlways {
                            rule: Arc::new(rule.clone()),
                        },
                        by,
                    )
                    .is_ok()
            })
            .count()
    }

    /// Answers each of `ids` still queued with one `reply`, as a group of
    /// as many as are still queued (each through its own reply slot, so a
    /// request answered elsewhere meanwhile is not answered twice); returns
    /// the requests this console answered.
    pub fn answer_group(&mut self, ids: &[u64], reply: &PromptReply, by: &Arc<str>) -> Vec<ApprovalPrompt> {
        // A request that refuses this answer from this console (its approval
        // counted already) stays queued, as it stays on the other screens.
        let (listed, rest): (VecDeque<_>, VecDeque<_>) = self
            .queue
            .drain(..)
            .partition(|p| ids.contains(&p.id) && p.reply.check(reply, by).is_ok());
        self.queue = rest;
        let of = listed.len();
        listed
            .into_iter()
            .filter(|p| p.reply.answer_in_group(reply.clone(), by, of).is_ok())
            .collect()
    }

    /// Forgets a request that ended elsewhere (answered by another console,
    /// timed out, cancelled); returns it.
    pub fn close(&mut self, id: u64) -> Option<ApprovalPrompt> {
        let at = self.queue.iter().position(|p| p.id == id)?;
        self.queue.remove(at)
    }

    /// Answers everything still queued, for example when the console quits.
    pub fn answer_all(&mut self, reply: &PromptReply, by: &Arc<str>) -> usize {
        self.queue
            .drain(..)
            .filter(|p| p.reply.answer(reply.clone(), by).is_ok())
            .count()
    }
}
