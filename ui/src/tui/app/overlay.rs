//! Where keys go: the focused pane, and what is drawn over the panes.

use tui_textarea::TextArea;

use super::{AlwaysRule, ArgumentEditor, FullView, Group, HeldTool};
use crate::tui::keys::KeyContext;

/// The panes Tab moves between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Scopes,
    Batch,
    Detail,
    Events,
}

impl Pane {
    const ORDER: [Pane; 4] = [Pane::Scopes, Pane::Batch, Pane::Detail, Pane::Events];

    pub(super) fn context(self) -> KeyContext {
        match self {
            Pane::Scopes => KeyContext::Scopes,
            Pane::Batch => KeyContext::Batch,
            Pane::Detail => KeyContext::Detail,
            Pane::Events => KeyContext::Events,
        }
    }

    pub(super) fn step(self, forward: bool) -> Pane {
        let i = Self::ORDER.iter().position(|p| *p == self).unwrap_or(0);
        let n = Self::ORDER.len();
        Self::ORDER[if forward { (i + 1) % n } else { (i + n - 1) % n }]
    }
}

/// What is drawn over the panes.
#[derive(Debug, Default)]
pub enum Overlay {
    #[default]
    None,
    Help {
        scroll: u16,
    },
    FullArguments(FullView),
    /// The always-rules that fit the call on screen, narrowest first.
    Always {
        choices: Vec<AlwaysRule>,
        selected: usize,
        /// The key (`Enter` or `s`) pressed once on a rule that needs a
        /// second press: its warning is on screen.
        confirming: Option<crate::tui::keys::Action>,
    },
    /// The session's always-rules, to revoke one.
    Rules {
        selected: usize,
    },
    Reason(Box<TextArea<'static>>),
    /// The waiting calls of one batch, to answer at once (`Y`, or `N` after
    /// its reason).
    Group(Group),
    /// The arguments, edited before approving (`e`).
    Edit(Box<ArgumentEditor>),
    /// A held MCP tool's old and new definitions, one of [`App::held`]:
    /// `shown` is the copy on screen, what `y` approves, even if the server
    /// changes the tool again meanwhile.
    PinReview {
        selected: usize,
        scroll: u16,
        shown: Box<HeldTool>,
    },
    /// A one-time link that pairs a phone or browser (`W`), and its QR
    /// code's lines; shown until closed.
    Pairing {
        url: String,
        qr: Vec<String>,
    },
}
