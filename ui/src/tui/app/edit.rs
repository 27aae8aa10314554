//! Edit before approving (issue 34): `e` on a prompt opens the call's
//! arguments as pretty JSON; every change is checked at once — JSON first
//! (refused with its line and column), then the tool's schema, as the
//! engine's argument check will (the failing JSON path shown) — and
//! `Ctrl+S` approves the edited call only when both pass. The editor
//! belongs to the request it was opened for, like the reason editor.

use serde_json::Value;
use tui_textarea::TextArea;

use super::{App, Overlay, PromptReply};
use crate::session::events::{ArgumentCheck, Editing};

/// What the text in the editor is, checked after every change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditVerdict {
    /// JSON that the tool's schema accepts: what `Ctrl+S` sends.
    Valid(Value),
    /// Not JSON: where and why, as serde_json reads it.
    NotJson {
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON the tool's schema refuses: the engine's message, each problem
    /// with its JSON path (`at /command: …`).
    Schema(String),
}

impl EditVerdict {
    /// The verdict on `text`.
    pub fn of(text: &str, check: &ArgumentCheck) -> Self {
        let value = match serde_json::from_str::<Value>(text) {
            Ok(value) => value,
            Err(error) => {
                let message = error.to_string();
                // serde_json ends its message with the position, said here apart.
                let message = match message.rfind(" at line ") {
                    Some(at) => message[..at].to_owned(),
                    None => message,
                };
                return Self::NotJson {
                    line: error.line(),
                    column: error.column(),
                    message,
                };
            }
        };
        match check(&value) {
            Ok(()) => Self::Valid(value),
            Err(problem) => Self::Schema(problem),
        }
    }

    /// The verdict in one line, as the editor shows it.
    pub fn describe(&self) -> String {
        match self {
            Self::Valid(_) => "✓ valid JSON that the tool's schema accepts: Ctrl+S approves it".to_owned(),
            Self::NotJson { line, column, message } => {
                format!("✗ not JSON at line {line}, column {column}: {message}")
            }
            Self::Schema(problem) => format!("✗ {problem}"),
        }
    }
}

/// The open editor: the text, the check it must pass, and its verdict now.
pub struct ArgumentEditor {
    pub textarea: TextArea<'static>,
    pub verdict: EditVerdict,
    /// `Ctrl+S` was refused on the text as it stands (shown until it changes).
    pub refused: bool,
    /// The model's arguments, parsed (an unchanged edit is a plain approval).
    original: Option<Value>,
    check: ArgumentCheck,
}

impl std::fmt::Debug for ArgumentEditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentEditor")
            .field("lines", &self.textarea.lines())
            .field("verdict", &self.verdict)
            .finish_non_exhaustive()
    }
}

impl ArgumentEditor {
    /// An editor holding `arguments` (the prompt's text), pretty-printed
    /// when it is JSON.
    pub fn new(arguments: &str, check: ArgumentCheck) -> Self {
        let original = serde_json::from_str::<Value>(arguments).ok();
        let text = original
            .as_ref()
            .and_then(|v| serde_json::to_string_pretty(v).ok())
            .unwrap_or_else(|| arguments.to_owned());
        let textarea = TextArea::new(text.lines().map(str::to_owned).collect());
        let verdict = EditVerdict::of(&text, &check);
        Self {
            textarea,
            verdict,
            refused: false,
            original,
            check,
        }
    }

    /// The text as it stands.
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// Types one key into the text; checks it again if it changed.
    pub fn input(&mut self, key: crossterm::event::KeyEvent) {
        if self.textarea.input(key) {
            self.refused = false;
            self.verdict = EditVerdict::of(&self.text(), &self.check);
        }
    }
}

impl App {
    /// `e`: opens the editor on the request on screen, unless its front
    /// door cannot carry edited arguments (then says why).
    pub(super) fn open_editor(&mut self) {
        let Some(prompt) = self.prompts.current() else { return };
        match &prompt.editing {
            Editing::Checked(check) => {
                let editor = ArgumentEditor::new(&prompt.arguments, check.clone());
                self.open_for_head(Overlay::Edit(Box::new(editor)));
            }
            Editing::Unsupported(why) => {
                let why = why.clone();
                self.note(format!("e does not edit this call: {why}"));
            }
        }
    }

    /// `Ctrl+S`: approves the request the editor was opened for with the
    /// edited arguments — if they are JSON that the schema accepts; else
    /// the editor stays open and says why. Arguments edited back to the
    /// model's own are a plain approval.
    pub(super) fn approve_edited(&mut self) {
        let Overlay::Edit(editor) = &mut self.overlay else {
            return;
        };
        let arguments = match &editor.verdict {
            EditVerdict::Valid(arguments) => arguments.clone(),
            refused => {
                let said = refused.describe();
                editor.refused = true;
                self.note(format!("not approved: {}", said.trim_start_matches("✗ ")));
                return;
            }
        };
        let unchanged = editor.original.as_ref() == Some(&arguments);
        self.overlay = Overlay::None;
        if unchanged {
            self.note("the arguments are the model's own: approved as they are");
            self.answer(PromptReply::Approve);
        } else {
            self.answer(PromptReply::ApproveEdited { arguments });
        }
    }
}
