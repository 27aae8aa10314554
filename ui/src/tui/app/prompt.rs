//! The approval queue: first in, first out; a new request never replaces the
//! one on screen, and every request is answered exactly once.

use std::collections::VecDeque;

use super::event::{ApprovalPrompt, PromptReply};

/// An "approve always" rule: this tool, in this scope, for this session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlwaysRule {
    pub tool: String,
    pub scope_id: Option<u64>,
    pub scope_label: String,
}

impl AlwaysRule {
    pub fn for_prompt(prompt: &ApprovalPrompt) -> Self {
        Self {
            tool: prompt.tool.clone(),
            scope_id: prompt.scope_id,
            scope_label: prompt.scope_label.clone(),
        }
    }

    pub fn matches(&self, tool: &str, scope_id: Option<u64>) -> bool {
        self.tool == tool && self.scope_id == scope_id
    }

    /// The exact rule, as the prompt and the trail show it.
    pub fn describe(&self) -> String {
        format!(
            "allow tool {:?} in scope {:?} without asking, until this console exits",
            self.tool, self.scope_label
        )
    }
}

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

    /// Answers the request on screen and moves to the next.
    pub fn answer_current(&mut self, reply: PromptReply) -> Option<AlwaysRule> {
        let prompt = self.queue.pop_front()?;
        let rule = AlwaysRule::for_prompt(&prompt);
        answer(prompt, reply);
        Some(rule)
    }

    /// Answers every queued request that `rule` matches; returns how many.
    pub fn answer_matching(&mut self, rule: &AlwaysRule) -> usize {
        let (matching, rest): (VecDeque<_>, VecDeque<_>) =
            self.queue.drain(..).partition(|p| rule.matches(&p.tool, p.scope_id));
        self.queue = rest;
        let n = matching.len();
        for prompt in matching {
            answer(prompt, PromptReply::ApproveAlways { rule: rule.describe() });
        }
        n
    }

    /// Forgets a request the answerer gave up on (it was answered there).
    pub fn close(&mut self, id: u64) -> bool {
        let before = self.queue.len();
        self.queue.retain(|p| p.id != id);
        before != self.queue.len()
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
