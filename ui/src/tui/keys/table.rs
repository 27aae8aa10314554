//! The table itself: every binding, grouped by where the key is pressed,
//! in the order the footer and help list them.

use crossterm::event::{KeyCode, KeyModifiers};

use super::{Action, Binding, KeyContext};

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
    bind!(
        Global,
        [(KeyCode::Char('W'), SHIFT), (KeyCode::Char('W'), NONE)],
        "W",
        PairWeb,
        "pair a phone or browser (serve --web): a one-time link and QR code",
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
