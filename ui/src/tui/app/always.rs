//! Keys of "approve always": the chooser of rules that fit the call on
//! screen, and the Rules view. A rule that would allow every call of a
//! shell tool, or of a tool the policy's own rules ask or deny, is added
//! only on a second press of the same key, its warning on screen.

use std::sync::PoisonError;

use super::{AlwaysRule, App, Command, Overlay};
use crate::tui::keys::Action;

impl App {
    pub(super) fn offer_always(&mut self) {
        let Some(prompt) = self.prompts.current() else { return };
        let approvers = prompt.reply.approvers();
        if approvers.several() {
            let needed = approvers.needed;
            self.note(format!(
                "approve always is not offered: this call needs {needed} approvals from distinct answerers, and a rule would let one approve alone"
            ));
            return;
        }
        let choices = AlwaysRule::choices_for(prompt);
        self.open_for_head(Overlay::Always {
            choices,
            selected: 0,
            confirming: None,
        });
    }

    /// The warning the chosen rule is shown with, when it needs a second key.
    pub fn always_warning(&self, rule: &AlwaysRule) -> Option<String> {
        let prompt = self.prompts.get(self.overlay_prompt?)?;
        rule.warning_for(prompt)
    }

    /// Adds the chosen always-rule for this session and answers the
    /// request on screen and every queued one it matches; `keep` also
    /// asks for it to be written into the policy file. A rule with a
    /// warning is added on the second press of the same key.
    fn add_always(&mut self, action: Action) -> Option<Command> {
        let Overlay::Always {
            choices,
            selected,
            confirming,
        } = &mut self.overlay
        else {
            return None;
        };
        let rule = choices.get(*selected)?.clone();
        if *confirming != Some(action) && rule.warning_for(self.prompts.get(self.overlay_prompt?)?).is_some() {
            *confirming = Some(action);
            return None;
        }
        self.overlay = Overlay::None;
        self.always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(rule.clone());
        self.overlay_prompt = None;
        let me = self.me.clone();
        let answered = self.prompts.answer_matching(&rule, &me);
        self.sync_head("");
        self.note(format!(
            "rule added: {} (answered {answered} pending)",
            crate::sanitize::escape(&rule.describe())
        ));
        (action == Action::KeepRule).then(|| Command::KeepRule(Box::new(rule)))
    }

    pub(super) fn always_action(&mut self, action: Action) -> Option<Command> {
        match action {
            Action::AddRule => return self.add_always(action),
            Action::KeepRule if self.keep_into.is_none() => match self.keep_refused.clone() {
                Some(why) => self.note(format!("{}; Enter adds it for this session", crate::sanitize::escape(&why))),
                None => self.note("s keeps a rule in the policy file, and there is no policy file (--policy): Enter adds it for this session"),
            },
            Action::KeepRule => return self.add_always(action),
            Action::Close => {
                self.overlay_prompt = None;
                self.overlay = Overlay::None;
            }
            _ => {
                if let Overlay::Always {
                    choices,
                    selected,
                    confirming,
                } = &mut self.overlay
                {
                    *selected = super::input::step(*selected, action, choices.len());
                    *confirming = None;
                }
            }
        }
        None
    }

    pub(super) fn rules_action(&mut self, action: Action) {
        let mut rules = self.always.lock().unwrap_or_else(PoisonError::into_inner);
        let Overlay::Rules { selected } = &mut self.overlay else {
            return;
        };
        match action {
            Action::Close => {
                drop(rules);
                self.overlay = Overlay::None;
            }
            Action::Revoke if *selected < rules.len() => {
                let rule = rules.remove(*selected);
                *selected = (*selected).min(rules.len().saturating_sub(1));
                drop(rules);
                self.note(format!("rule revoked: {}", crate::sanitize::escape(&rule.describe())));
            }
            _ => *selected = super::input::step(*selected, action, rules.len()),
        }
    }
}
