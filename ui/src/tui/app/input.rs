//! Keys: what each action does to the app. Only `handle_key` and the
//! helpers here change state in answer to a key.

use crossterm::event::{KeyEvent, KeyEventKind};
use tui_textarea::TextArea;

use super::{App, Command, Overlay, PromptReply, ScreenRole};
use crate::session::events::Refused;
use crate::tui::keys::{self, Action, KeyContext};

impl App {
    /// Handles one key press; returns what the world outside must do.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<Command> {
        if key.kind != KeyEventKind::Press {
            return None;
        }
        if let Some(last) = self.typed_for_closed
            && !is_ctrl_c(&key)
        {
            if self.now.saturating_duration_since(last) < super::ANSWER_GUARD {
                self.typed_for_closed = Some(self.now);
                return None;
            }
            self.typed_for_closed = None;
        }
        let context = self.key_context();
        if is_ctrl_c(&key) && self.typing_text() {
            // Ctrl+C is where a hand goes to stop: never typed as a `c`, never
            // silently swallowed; say how to get out.
            self.note("Ctrl+C does not quit while you type: Esc leaves the text, then q (or Ctrl+C) quits");
            return None;
        }
        if let (Overlay::FullArguments(view), Some(prompt)) = (&mut self.overlay, self.prompts.current()) {
            if view.type_key(&key, &crate::sanitize::argument_lines(&prompt.arguments), self.screen) {
                return None;
            }
        }
        let action = keys::lookup(context, &key).or_else(|| match context {
            // Typing a reason or arguments takes every other key.
            KeyContext::Reason | KeyContext::Edit => None,
            _ => keys::lookup(KeyContext::Global, &key),
        });
        if self.confirm_quit {
            self.confirm_quit = false;
            // Not `y`: the approve key is where a hand already is, and a
            // reflexive approval must not end every pending request.
            let again = action == Some(Action::Quit) || key.code == crossterm::event::KeyCode::Enter;
            if again {
                return self.quit_now();
            }
            self.note("not quitting");
            return None;
        }
        let Some(action) = action else {
            match &mut self.overlay {
                Overlay::Reason(textarea) => {
                    textarea.input(key);
                }
                Overlay::Edit(editor) => editor.input(key),
                _ => {}
            }
            return None;
        };
        if context == KeyContext::Prompt && answers(action) {
            if self.role == (ScreenRole::Attached { read_only: true }) {
                self.note("this console only views (tether attach --view): it cannot answer");
                return None;
            }
            if self.prompt_is_new() {
                self.note("key ignored: that request just reached the head of the queue; look, then answer");
                return None;
            }
        }
        self.act(context, action)
    }

    /// Whether keys are being typed as text (a reason, a search).
    pub(super) fn typing_text(&self) -> bool {
        match &self.overlay {
            Overlay::Reason(_) => true,
            Overlay::FullArguments(view) => view.typing.is_some(),
            _ => false,
        }
    }

    /// Whether anything is left that quitting would end: approvals waiting,
    /// agents connected.
    fn quitting_ends_something(&self) -> bool {
        !self.prompts.is_empty() || self.info.agents.is_some_and(|n| n > 0)
    }

    fn act(&mut self, context: KeyContext, action: Action) -> Option<Command> {
        match (context, action) {
            (_, Action::Quit) if matches!(self.role, ScreenRole::Attached { .. }) => {
                // Detaching changes nothing: the requests stay with the others.
                self.quit = true;
                return Some(Command::Quit);
            }
            (_, Action::Quit) if self.quitting_ends_something() => {
                self.confirm_quit = true;
            }
            (_, Action::Quit) => return self.quit_now(),
            (_, Action::Help) => self.overlay = Overlay::Help { scroll: 0 },
            (_, Action::Suspend) if matches!(self.role, ScreenRole::Attached { .. }) => {
                // This screen's terminal is the attach client's, not ours.
                self.note("Ctrl+Z suspends only the console serve runs in; q detaches this one");
            }
            (_, Action::Suspend) => return Some(Command::Suspend),
            (KeyContext::Help, Action::Close) => self.overlay = Overlay::None,
            (KeyContext::Help, Action::Up) => self.scroll_help(-1),
            (KeyContext::Help, Action::Down) => self.scroll_help(1),
            (KeyContext::Help, a @ (Action::PageUp | Action::PageDown | Action::Home | Action::End)) => {
                self.page_help(a)
            }
            (_, Action::RunNextBatch) => return Some(Command::RunNextBatch),
            (_, Action::ReloadPolicy) => return Some(Command::ReloadPolicy),
            (_, Action::PairWeb) => return Some(Command::PairWeb),
            (_, Action::FocusNext) => self.focus = self.focus.step(true),
            (_, Action::FocusPrev) => self.focus = self.focus.step(false),
            (KeyContext::Prompt, Action::Approve) => self.answer(PromptReply::Approve),
            (KeyContext::Prompt, Action::Reject) => self.answer(PromptReply::Reject { reason: None }),
            (KeyContext::Prompt, Action::ApproveAlways) => self.offer_always(),
            (KeyContext::Prompt, Action::ApproveGroup) => self.offer_group_approval(),
            (KeyContext::Prompt, Action::RejectGroup) => self.offer_group_rejection(),
            (KeyContext::Group, action) => return self.group_action(action),
            (KeyContext::Reason, Action::SubmitReason) if self.group_reason.is_some() => self.group_reason_done(),
            (KeyContext::Reason, Action::Close) if self.group_reason.is_some() => self.group_reason_closed(),
            (KeyContext::Always, action) => return self.always_action(action),
            (KeyContext::Rules, action) => self.rules_action(action),
            (KeyContext::PinReview, action) => return self.pin_review_action(action),
            (_, Action::ReviewHeld) => self.review_held(),
            (_, Action::ShowRules) => self.overlay = Overlay::Rules { selected: 0 },
            (KeyContext::Prompt, Action::RejectWithReason) => {
                self.group_reason = None;
                let mut textarea = TextArea::default();
                textarea.set_placeholder_text("why? (optional; the model reads this)");
                self.open_for_head(Overlay::Reason(Box::new(textarea)));
            }
            (KeyContext::Prompt, Action::EditArguments) => self.open_editor(),
            (KeyContext::Edit, Action::ApproveEdited) => self.approve_edited(),
            (KeyContext::Prompt, Action::ViewArguments) => {
                self.open_for_head(Overlay::FullArguments(super::FullView::default()));
            }
            (KeyContext::Reason, Action::SubmitReason) => {
                let reason = match &self.overlay {
                    Overlay::Reason(textarea) => textarea.lines().join("\n").trim().to_owned(),
                    _ => String::new(),
                };
                self.overlay = Overlay::None;
                self.answer(PromptReply::Reject {
                    reason: (!reason.is_empty()).then_some(reason),
                });
            }
            (KeyContext::Reason | KeyContext::FullArguments | KeyContext::Edit, Action::Close) => {
                self.overlay_prompt = None;
                self.overlay = Overlay::None;
            }
            (KeyContext::FullArguments, action) => self.scroll_arguments(action),
            (KeyContext::Scopes, action) => self.scopes_action(action),
            (KeyContext::Batch, action) => self.batch_action(action),
            (KeyContext::Detail, action) => self.detail_scroll = scroll(self.detail_scroll, action, 10),
            (KeyContext::Events, action) => self.events_action(action),
            _ => {}
        }
        None
    }

    /// Quits: every request still waiting is answered unavailable, so no
    /// call waits for a console that is gone.
    fn quit_now(&mut self) -> Option<Command> {
        let me = self.me.clone();
        let n = self.prompts.answer_all(
            &PromptReply::Unavailable {
                reason: "approval unavailable: the console was closed".to_owned(),
            },
            &me,
        );
        if n > 0 {
            self.note(format!("{n} pending approvals answered unavailable on quit"));
        }
        self.quit = true;
        Some(Command::Quit)
    }

    /// Opens an overlay that belongs to the request on screen: it closes if
    /// that request leaves the head of the queue (see `App::sync_head`).
    pub(super) fn open_for_head(&mut self, overlay: Overlay) {
        self.overlay_prompt = self.prompts.current().map(|p| p.id);
        self.overlay = overlay;
    }

    /// Answers the request the open overlay belongs to, or the one on screen.
    pub(super) fn answer(&mut self, reply: PromptReply) {
        let Some(id) = self
            .overlay_prompt
            .take()
            .or_else(|| self.prompts.current().map(|p| p.id))
        else {
            return;
        };
        let mut description = crate::session::approval::describe(&reply);
        let tool = self.prompts.get(id).map(|p| crate::sanitize::escape(&p.tool));
        // The two-person rule: an approval that is not the last is one of several.
        if let Some(approvers) = self.prompts.get(id).map(|p| p.reply.approvers())
            && reply == PromptReply::Approve
            && approvers.given.len() + 1 < usize::from(approvers.needed)
        {
            description = format!(
                "approved ({} of {} approvals; the call waits for another answerer)",
                approvers.given.len() + 1,
                approvers.needed
            );
        }
        let me = self.me.clone();
        match self.prompts.answer(id, reply, &me) {
            Ok(prompt) => self.note(format!(
                "{} ({}) {} {}",
                crate::sanitize::escape(&prompt.tool),
                crate::sanitize::escape(&prompt.call_id),
                crate::sanitize::escape(&description),
                self.by_you()
            )),
            Err(Refused::AnsweredBy(first)) => self.note(format!(
                "{} was already answered by {}; your answer was not taken",
                tool.unwrap_or_default(),
                crate::sanitize::escape(&first)
            )),
            Err(Refused::Gone) => self.note(format!(
                "{} is no longer waiting; your answer was not taken",
                tool.unwrap_or_default()
            )),
            Err(refused) => self.note(format!("{}: not taken, {refused}", tool.unwrap_or_default())),
        }
        self.sync_head("");
    }

    fn scroll_help(&mut self, delta: i32) {
        if let Overlay::Help { scroll } = &mut self.overlay {
            *scroll = scroll.saturating_add_signed(delta as i16);
        }
    }

    fn scroll_arguments(&mut self, action: Action) {
        if let (Overlay::FullArguments(view), Some(prompt)) = (&mut self.overlay, self.prompts.current()) {
            view.act(action, &crate::sanitize::argument_lines(&prompt.arguments), self.screen);
        }
    }

    fn scopes_action(&mut self, action: Action) {
        let last = self.scopes.len().saturating_sub(1);
        let before = self.selected_scope;
        match action {
            Action::Up => self.selected_scope = self.selected_scope.saturating_sub(1),
            Action::Down => self.selected_scope = (self.selected_scope + 1).min(last),
            Action::PageUp | Action::PageDown => {
                self.declarations_scroll = scroll(self.declarations_scroll, action, 10);
            }
            _ => {}
        }
        if before != self.selected_scope {
            self.declarations_scroll = 0;
            self.refresh_declarations();
        }
    }

    fn batch_action(&mut self, action: Action) {
        let rows = self.current_batch().map_or(0, |b| b.len());
        let last = rows.saturating_sub(1);
        let page = self.batch_page.max(1);
        let before = (self.shown_batch, self.selected_call);
        match action {
            Action::Up => self.selected_call = self.selected_call.saturating_sub(1),
            Action::Down => self.selected_call = (self.selected_call + 1).min(last),
            Action::PageUp => self.selected_call = self.selected_call.saturating_sub(page),
            Action::PageDown => self.selected_call = (self.selected_call + page).min(last),
            Action::Home => self.selected_call = 0,
            Action::End => self.selected_call = last,
            Action::PrevBatch => self.show_batch(self.shown_batch.saturating_sub(1)),
            Action::NextBatch => self.show_batch((self.shown_batch + 1).min(self.batches.len().saturating_sub(1))),
            _ => {}
        }
        if before != (self.shown_batch, self.selected_call) {
            self.detail_scroll = 0;
        }
    }

    fn events_action(&mut self, action: Action) {
        let newest = self.events.len().saturating_sub(1);
        let at = self.events_scroll.unwrap_or(newest);
        self.events_scroll = match action {
            Action::Up => Some(at.saturating_sub(1)),
            Action::Down if at + 1 >= newest => None,
            Action::Down => Some(at + 1),
            Action::End => None,
            _ => self.events_scroll,
        };
    }
}

/// Whether a prompt key answers (or begins answering) the request on screen.
fn answers(action: Action) -> bool {
    matches!(
        action,
        Action::Approve
            | Action::Reject
            | Action::RejectWithReason
            | Action::ApproveAlways
            | Action::ApproveGroup
            | Action::RejectGroup
            | Action::EditArguments
    )
}

/// A selection in a list of `len` moved by `action`.
pub(super) fn step(selected: usize, action: Action, len: usize) -> usize {
    let last = len.saturating_sub(1);
    match action {
        Action::Up => selected.saturating_sub(1),
        Action::Down => (selected + 1).min(last),
        Action::Home => 0,
        Action::End => last,
        _ => selected,
    }
}

fn scroll(offset: u16, action: Action, page: u16) -> u16 {
    match action {
        Action::Up => offset.saturating_sub(1),
        Action::Down => offset.saturating_add(1),
        Action::PageUp => offset.saturating_sub(page),
        Action::PageDown => offset.saturating_add(page),
        Action::Home => 0,
        _ => offset,
    }
}

fn is_ctrl_c(key: &KeyEvent) -> bool {
    key.code == crossterm::event::KeyCode::Char('c') && key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL)
}
