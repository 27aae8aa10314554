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

const NONE: KeyModifiers = KeyModifiers::NONE;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;

macro_rules! bind {
    ($ctx:ident, [$($key:expr),+], $shown:literal, $action:ident, $help:literal, $footer:literal) => {
        Binding {
            context: KeyContext::$ctx,
            keys: &[$($key),+],
            shown: $shown,
            action: Action::$action,
            help: $help,
            in_footer: $footer,
        }
    };
}

pub const BINDINGS: &[Binding] = &[
    bind!(Prompt, [(KeyCode::Char('y'), NONE)], "y", Approve, "approve once", true),
    bind!(
        Prompt,
        [(KeyCode::Char('a'), NONE)],
        "a",
        ApproveAlways,
        "always: pick a rule that fits the call",
        true
    ),
    bind!(
        Prompt,
        [(KeyCode::Char('n'), NONE)],
        "n",
        RejectWithReason,
        "reject with a reason",
        true
    ),
    bind!(
        Prompt,
        [(KeyCode::Esc, NONE)],
        "Esc",
        Reject,
        "reject (the safe choice)",
        true
    ),
    bind!(
        Prompt,
        [(KeyCode::Char('v'), NONE)],
        "v",
        ViewArguments,
        "view all arguments",
        true
    ),
    bind!(
        Prompt,
        [(KeyCode::Char('Y'), SHIFT), (KeyCode::Char('Y'), NONE)],
        "Y",
        ApproveGroup,
        "approve every waiting call of this batch (the list first)",
        false
    ),
    bind!(
        Prompt,
        [(KeyCode::Char('N'), SHIFT), (KeyCode::Char('N'), NONE)],
        "N",
        RejectGroup,
        "reject every waiting call of this batch with one reason",
        false
    ),
    bind!(
        Group,
        [(KeyCode::Enter, NONE)],
        "Enter",
        ConfirmGroup,
        "answer every call listed (none that arrived later)",
        true
    ),
    bind!(Group, [(KeyCode::Esc, NONE)], "Esc", Close, "back to the prompt", true),
    bind!(
        Prompt,
        [(KeyCode::Char('e'), NONE)],
        "e",
        EditArguments,
        "edit, approve",
        true
    ),
    bind!(
        Edit,
        [(KeyCode::Char('s'), CTRL)],
        "Ctrl+S",
        ApproveEdited,
        "approve the edit (policy judges it again)",
        true
    ),
    bind!(Edit, [(KeyCode::Esc, NONE)], "Esc", Close, "back, unchanged", true),
    bind!(
        Reason,
        [(KeyCode::Char('s'), CTRL)],
        "Ctrl+S",
        SubmitReason,
        "send the rejection with this reason",
        true
    ),
    bind!(Reason, [(KeyCode::Esc, NONE)], "Esc", Close, "back to the prompt", true),
    bind!(
        FullArguments,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑/k",
        Up,
        "scroll up",
        true
    ),
    bind!(
        FullArguments,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↓/j",
        Down,
        "scroll down",
        true
    ),
    bind!(
        FullArguments,
        [(KeyCode::PageUp, NONE)],
        "PgUp",
        PageUp,
        "page up",
        true
    ),
    bind!(
        FullArguments,
        [(KeyCode::PageDown, NONE), (KeyCode::Char(' '), NONE)],
        "PgDn",
        PageDown,
        "page down",
        true
    ),
    bind!(
        FullArguments,
        [(KeyCode::Left, NONE), (KeyCode::Char('h'), NONE)],
        "←/h",
        Left,
        "scroll left",
        false
    ),
    bind!(
        FullArguments,
        [(KeyCode::Right, NONE), (KeyCode::Char('l'), NONE)],
        "→/l",
        Right,
        "scroll right (when not wrapping)",
        false
    ),
    bind!(
        FullArguments,
        [(KeyCode::Char('w'), NONE)],
        "w",
        ToggleWrap,
        "wrap long lines on/off",
        true
    ),
    bind!(
        FullArguments,
        [(KeyCode::Char('/'), NONE)],
        "/",
        Search,
        "search (Enter finds)",
        true
    ),
    bind!(
        FullArguments,
        [(KeyCode::Char('n'), NONE)],
        "n",
        NextMatch,
        "next match",
        true
    ),
    bind!(
        FullArguments,
        [(KeyCode::Home, NONE), (KeyCode::Char('g'), NONE)],
        "Home",
        Home,
        "first line",
        false
    ),
    bind!(
        FullArguments,
        [
            (KeyCode::End, NONE),
            (KeyCode::Char('G'), SHIFT),
            (KeyCode::Char('G'), NONE)
        ],
        "End",
        End,
        "last line",
        false
    ),
    bind!(
        FullArguments,
        [
            (KeyCode::Esc, NONE),
            (KeyCode::Char('v'), NONE),
            (KeyCode::Char('q'), NONE)
        ],
        "Esc",
        Close,
        "back to the prompt",
        true
    ),
    bind!(
        Help,
        [
            (KeyCode::Esc, NONE),
            (KeyCode::Char('?'), NONE),
            (KeyCode::Char('q'), NONE)
        ],
        "Esc",
        Close,
        "close help",
        true
    ),
    bind!(
        Help,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑/k",
        Up,
        "scroll up",
        false
    ),
    bind!(
        Help,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↓/j",
        Down,
        "scroll down",
        false
    ),
    bind!(Help, [(KeyCode::PageUp, NONE)], "PgUp/PgDn", PageUp, "page", false),
    bind!(
        Help,
        [(KeyCode::PageDown, NONE), (KeyCode::Char(' '), NONE)],
        "PgUp/PgDn",
        PageDown,
        "page",
        false
    ),
    bind!(Help, [(KeyCode::Home, NONE)], "Home/End", Home, "top/bottom", false),
    bind!(Help, [(KeyCode::End, NONE)], "Home/End", End, "top/bottom", false),
    bind!(
        Scopes,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑↓",
        Up,
        "select a scope",
        true
    ),
    bind!(
        Scopes,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↑↓",
        Down,
        "select the scope below",
        false
    ),
    bind!(
        Scopes,
        [(KeyCode::PageUp, NONE)],
        "PgUp/PgDn",
        PageUp,
        "scroll declarations",
        true
    ),
    bind!(
        Scopes,
        [(KeyCode::PageDown, NONE)],
        "PgUp/PgDn",
        PageDown,
        "scroll the declarations",
        false
    ),
    bind!(
        Batch,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑↓",
        Up,
        "select a call",
        true
    ),
    bind!(
        Batch,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↑↓",
        Down,
        "select the call below",
        false
    ),
    bind!(Batch, [(KeyCode::PageUp, NONE)], "PgUp/PgDn", PageUp, "page", true),
    bind!(
        Batch,
        [(KeyCode::PageDown, NONE)],
        "PgUp/PgDn",
        PageDown,
        "a page down",
        false
    ),
    bind!(
        Batch,
        [(KeyCode::Home, NONE), (KeyCode::Char('g'), NONE)],
        "Home/End",
        Home,
        "first/last",
        true
    ),
    bind!(
        Batch,
        [
            (KeyCode::End, NONE),
            (KeyCode::Char('G'), SHIFT),
            (KeyCode::Char('G'), NONE)
        ],
        "Home/End",
        End,
        "last call",
        false
    ),
    bind!(
        Batch,
        [(KeyCode::Char('['), NONE)],
        "[ ]",
        PrevBatch,
        "earlier/later batch",
        true
    ),
    bind!(
        Batch,
        [(KeyCode::Char(']'), NONE)],
        "[ ]",
        NextBatch,
        "next batch",
        false
    ),
    bind!(
        Detail,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑↓",
        Up,
        "scroll",
        true
    ),
    bind!(
        Detail,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↑↓",
        Down,
        "scroll down",
        false
    ),
    bind!(Detail, [(KeyCode::PageUp, NONE)], "PgUp/PgDn", PageUp, "page", true),
    bind!(
        Detail,
        [(KeyCode::PageDown, NONE)],
        "PgUp/PgDn",
        PageDown,
        "a page down",
        false
    ),
    bind!(
        Events,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑↓",
        Up,
        "scroll up",
        true
    ),
    bind!(
        Events,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↑↓",
        Down,
        "scroll down",
        false
    ),
    bind!(Events, [(KeyCode::End, NONE)], "End", End, "follow the newest", true),
    bind!(
        Always,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑↓",
        Up,
        "choose a rule",
        true
    ),
    bind!(
        Always,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↑↓",
        Down,
        "choose a rule",
        false
    ),
    bind!(
        Always,
        [(KeyCode::Home, NONE), (KeyCode::Char('g'), NONE)],
        "Home/End",
        Home,
        "the narrowest / the widest (whole tool)",
        false
    ),
    bind!(
        Always,
        [
            (KeyCode::End, NONE),
            (KeyCode::Char('G'), SHIFT),
            (KeyCode::Char('G'), NONE)
        ],
        "Home/End",
        End,
        "the narrowest / the widest (whole tool)",
        false
    ),
    bind!(
        Always,
        [(KeyCode::Enter, NONE)],
        "Enter",
        AddRule,
        "add it for this session",
        true
    ),
    bind!(
        Always,
        [(KeyCode::Char('s'), NONE)],
        "s",
        KeepRule,
        "add it and keep it in the policy file",
        true
    ),
    bind!(Always, [(KeyCode::Esc, NONE)], "Esc", Close, "back to the prompt", true),
    bind!(
        Rules,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑↓",
        Up,
        "select a rule",
        true
    ),
    bind!(
        Rules,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↑↓",
        Down,
        "select a rule",
        false
    ),
    bind!(
        Rules,
        [(KeyCode::Char('d'), NONE), (KeyCode::Delete, NONE)],
        "d",
        Revoke,
        "revoke the selected rule",
        true
    ),
    bind!(
        Rules,
        [
            (KeyCode::Esc, NONE),
            (KeyCode::Char('R'), SHIFT),
            (KeyCode::Char('R'), NONE)
        ],
        "Esc",
        Close,
        "close",
        true
    ),
    bind!(
        PinReview,
        [(KeyCode::Char('y'), NONE)],
        "y",
        ApproveDefinition,
        "approve the new definition (its calls run again)",
        true
    ),
    bind!(
        PinReview,
        [(KeyCode::Esc, NONE), (KeyCode::Char('q'), NONE)],
        "Esc",
        Close,
        "close; the tool stays held",
        true
    ),
    bind!(
        PinReview,
        [(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        "↑↓",
        Up,
        "scroll",
        true
    ),
    bind!(
        PinReview,
        [(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        "↑↓",
        Down,
        "scroll down",
        false
    ),
    bind!(PinReview, [(KeyCode::PageUp, NONE)], "PgUp/PgDn", PageUp, "page", false),
    bind!(
        PinReview,
        [(KeyCode::PageDown, NONE), (KeyCode::Char(' '), NONE)],
        "PgUp/PgDn",
        PageDown,
        "a page down",
        false
    ),
    bind!(
        PinReview,
        [(KeyCode::Home, NONE), (KeyCode::Char('g'), NONE)],
        "Home",
        Home,
        "top",
        false
    ),
    bind!(
        PinReview,
        [(KeyCode::Left, NONE), (KeyCode::Char('h'), NONE)],
        "←→",
        Left,
        "previous/next held tool",
        true
    ),
    bind!(
        PinReview,
        [(KeyCode::Right, NONE), (KeyCode::Char('l'), NONE)],
        "←→",
        Right,
        "next held tool",
        false
    ),
    bind!(
        Global,
        [(KeyCode::Char('H'), SHIFT), (KeyCode::Char('H'), NONE)],
        "H",
        ReviewHeld,
        "held MCP tools: review the changed definition, approve it",
        false
    ),
    bind!(
        Global,
        [(KeyCode::Char('R'), SHIFT), (KeyCode::Char('R'), NONE)],
        "R",
        ShowRules,
        "always-rules (revoke)",
        false
    ),
    bind!(
        Global,
        [(KeyCode::Char('r'), NONE)],
        "r",
        RunNextBatch,
        "run next batch",
        true
    ),
    bind!(Global, [(KeyCode::Tab, NONE)], "Tab", FocusNext, "next pane", true),
    bind!(
        Global,
        [(KeyCode::BackTab, SHIFT), (KeyCode::BackTab, NONE)],
        "Shift+Tab",
        FocusPrev,
        "previous pane",
        false
    ),
    bind!(
        Global,
        [(KeyCode::Char('p'), NONE)],
        "p",
        ReloadPolicy,
        "reload the policy file",
        false
    ),
    bind!(Global, [(KeyCode::Char('?'), NONE)], "?", Help, "all keys", true),
    bind!(
        Global,
        [(KeyCode::Char('z'), CTRL)],
        "Ctrl+Z",
        Suspend,
        "suspend to the shell (fg comes back)",
        false
    ),
    bind!(
        Global,
        [(KeyCode::Char('q'), NONE), (KeyCode::Char('c'), CTRL)],
        "q",
        Quit,
        "quit",
        true
    ),
];

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
