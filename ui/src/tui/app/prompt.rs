//! The approval queue: first in, first out; a new request never replaces the
//! one on screen, and every request is answered exactly once.

use std::collections::VecDeque;

use crate::session::always::AlwaysRule;
use crate::session::events::{ApprovalPrompt, PromptReply};

#[derive(Debug, Default)]
pub struct PromptQueue {
    queue: VecDeque<ApprovalPrompt>,
}

impl PromptQueue {
    pub fn push(&mut self, prompt: ApprovalPrompt) {
        self.queue.push_back(prompt);
    }

    pub fn current(&self) -> Option<&ApprovalPrompt> {
        self.queue.front()
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

    /// Answers the request on screen and moves to the next; returns its tool.
    pub fn answer_current(&mut self, reply: PromptReply) -> Option<String> {
        let prompt = self.queue.pop_front()?;
        let tool = prompt.tool.clone();
        answer(prompt, reply);
        Some(tool)
    }

    /// Answers every queued request that `rule` matches; returns how many.
    pub fn answer_matching(&mut self, rule: &AlwaysRule) -> usize {
        let (matching, rest): (VecDeque<_>, VecDeque<_>) = self.queue.drain(..).partition(|p| rule.matches_prompt(p));
        self.queue = rest;
        let n = matching.len();
        for prompt in matching {
            answer(
                prompt,
                PromptReply::ApproveAlways {
                    rule: std::sync::Arc::new(rule.clone()),
                },
            );
        }
        n
    }

    /// Forgets a request the answerer gave up on (it was answered there);
    /// returns its tool and call id.
    pub fn close(&mut self, id: u64) -> Option<ApprovalPrompt> {
        let at = self.queue.iter().position(|p| p.id == id)?;
        self.queue.remove(at)
    }

    /// Answers everything still queued, for example when the console quits.
    pub fn answer_all(&mut self, reply: &PromptReply) -> usize {
        let n = self.queue.len();
        for prompt in self.queue.drain(..) {
            answer(prompt, reply.clone());
        }
        n
    }
}

fn answer(prompt: ApprovalPrompt, reply: PromptReply) {
    // A closed channel means the call already ended (cancelled or timed
    // out): there is nobody left to answer.
    let _ = prompt.reply.send(reply);
}
