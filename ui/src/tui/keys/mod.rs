//! Every key binding, in one table. The footer and the `?` help are
//! generated from it, so they can never disagree with what the keys do.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a key is pressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyContext {
    Global,
    Scopes,
    Batch,
    Detail,
    Events,
    Prompt,
    Reason,
    Edit,
    FullArguments,
    Always,
    Rules,
    PinReview,
    /// The waiting calls of one batch, to answer at once.
    Group,
    Help,
}

impl KeyContext {
    pub fn title(self) -> &'static str {
        match self {
            KeyContext::Global => "Everywhere",
            KeyContext::Scopes => "Scopes pane",
            KeyContext::Batch => "Batch pane",
            KeyContext::Detail => "Detail pane",
            KeyContext::Events => "Events pane",
            KeyContext::Prompt => "Approval prompt",
            KeyContext::Reason => "Typing a rejection reason",
            KeyContext::Edit => "Editing arguments",
            KeyContext::FullArguments => "Full arguments",
            KeyContext::Always => "Approve always",
            KeyContext::Rules => "Always-rules",
            KeyContext::PinReview => "Held MCP tool: old → new definition",
            KeyContext::Group => "Answering a batch at once",
            KeyContext::Help => "Help",
        }
    }
}

/// What a key does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    FocusNext,
    FocusPrev,
    Help,
    Quit,
    RunNextBatch,
    ReloadPolicy,
    /// Pair a phone or browser (`tether serve --web`): a one-time link and its QR code.
    PairWeb,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    PrevBatch,
    NextBatch,
    Approve,
    ApproveAlways,
    RejectWithReason,
    Reject,
    ViewArguments,
    SubmitReason,
    EditArguments,
    ApproveEdited,
    Close,
    Left,
    Right,
    ToggleWrap,
    Search,
    NextMatch,
    Suspend,
    AddRule,
    KeepRule,
    ShowRules,
    Revoke,
    ReviewHeld,
    ApproveDefinition,
    ApproveGroup,
    RejectGroup,
    ConfirmGroup,
}

pub struct Binding {
    pub context: KeyContext,
    pub keys: &'static [(KeyCode, KeyModifiers)],
    /// How the keys are written in the footer and help.
    pub shown: &'static str,
    pub action: Action,
    pub help: &'static str,
    /// Whether the footer shows it (help always does).
    pub in_footer: bool,
}

mod table;
pub use table::BINDINGS;

/// The action a key has in `context`.
pub fn lookup(context: KeyContext, key: &KeyEvent) -> Option<Action> {
    BINDINGS
        .iter()
        .filter(|b| b.context == context)
        .find(|b| {
            b.keys
                .iter()
                .any(|(code, mods)| *code == key.code && *mods == key.modifiers)
        })
        .map(|b| b.action)
}

/// How the footer and help write the key of `action` in `context` (its
/// first binding), for words that name the key: a journal record, a note.
pub fn shown_for(context: KeyContext, action: Action) -> &'static str {
    BINDINGS
        .iter()
        .find(|b| b.context == context && b.action == action)
        .map_or("(unbound)", |b| b.shown)
}

/// Who reloaded the policy, for the journal: the key the table binds to
/// reloading.
pub fn reloaded_by_key() -> crate::session::journal::ReloadedBy {
    crate::session::journal::ReloadedBy::Key(shown_for(KeyContext::Global, Action::ReloadPolicy))
}

/// Who reloaded the policy, for the journal: the key the table binds to
/// keeping an always-rule in the policy file.
pub fn reloaded_by_keeping() -> crate::session::journal::ReloadedBy {
    crate::session::journal::ReloadedBy::KeptRule(shown_for(KeyContext::Always, Action::KeepRule))
}

/// The bindings of a context the footer shows, in the table's order: a
/// view that lists keys of its own (the prompt's key row) takes them here.
pub fn footer_bindings(context: KeyContext) -> impl Iterator<Item = &'static Binding> {
    BINDINGS.iter().filter(move |b| b.context == context && b.in_footer)
}

/// The footer's `(keys, what)` pairs for a context, each shown once.
pub fn footer(context: KeyContext) -> Vec<(&'static str, &'static str)> {
    let mut seen = Vec::new();
    for binding in BINDINGS.iter().filter(|b| b.context == context && b.in_footer) {
        if !seen.iter().any(|(shown, _)| *shown == binding.shown) {
            seen.push((binding.shown, binding.help));
        }
    }
    seen
}

/// Help's `(keys, what)` rows for a context: every binding, but keys shown
/// alike (`↑↓` for up and for down) once, with the first one's text.
pub fn help_rows(context: KeyContext) -> Vec<(&'static str, &'static str)> {
    let mut rows: Vec<(&'static str, &'static str)> = Vec::new();
    for binding in BINDINGS.iter().filter(|b| b.context == context) {
        if !rows.iter().any(|(shown, _)| *shown == binding.shown) {
            rows.push((binding.shown, binding.help));
        }
    }
    rows
}

/// Lines the help shows: per context its title, its rows and a blank line.
pub fn help_line_count() -> usize {
    HELP_ORDER.iter().map(|&c| help_rows(c).len() + 2).sum()
}

/// Contexts in the order help lists them.
pub const HELP_ORDER: [KeyContext; 14] = [
    KeyContext::Global,
    KeyContext::Prompt,
    KeyContext::Group,
    KeyContext::Always,
    KeyContext::Reason,
    KeyContext::Edit,
    KeyContext::FullArguments,
    KeyContext::Rules,
    KeyContext::PinReview,
    KeyContext::Scopes,
    KeyContext::Batch,
    KeyContext::Detail,
    KeyContext::Events,
    KeyContext::Help,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_key_means_two_things_in_one_context() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                if a.context == b.context {
                    for key in a.keys {
                        assert!(!b.keys.contains(key), "{key:?} bound twice in {:?}", a.context);
                    }
                }
            }
        }
    }

    #[test]
    fn the_footer_comes_from_the_table() {
        let prompt = footer(KeyContext::Prompt);
        assert_eq!(
            prompt.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            ["y", "a", "n", "Esc", "v", "e"]
        );
        let key = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE);
        assert_eq!(lookup(KeyContext::Prompt, &key), Some(Action::Approve));
        assert_eq!(lookup(KeyContext::Batch, &key), None);
    }
}
