//! What the key-level tests of the console's `App` share: an empty app, a
//! key press, and an approval request as the answerer hands it over.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tether_console::session::events::{Answered, Editing, ReplySlot};
use tether_console::session::provenance::CallKey;
use tether_console::tui::app::{App, ApprovalPrompt, HeaderInfo, ScopeEntry};
use tether_tools::ToolRegistry;
use tokio::sync::oneshot;

/// A console with no tools and only the global scope.
pub fn app() -> App {
    App::new(
        ToolRegistry::new(),
        vec![ScopeEntry::global()],
        HeaderInfo::default(),
        Instant::now(),
    )
}

/// A key pressed without modifiers.
pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// A request to run `tool` with `arguments` (raw JSON text) asked at `now`
/// and waiting 120 s, every other field empty or valid: a test sets the
/// fields it is about. The receiver gets the answer.
pub fn request(id: u64, tool: &str, arguments: &str, now: Instant) -> (ApprovalPrompt, oneshot::Receiver<Answered>) {
    let (reply, receiver) = ReplySlot::channel();
    let prompt = ApprovalPrompt {
        id,
        key: CallKey::from(tether_tools::ExecutionId::fresh()),
        tool: tool.into(),
        call_id: format!("c{id}"),
        scope_label: "agent".into(),
        scope_id: None,
        owner: None,
        agent: None,
        reason: None,
        arguments: arguments.into(),
        validation: Ok(()),
        guard_veto: None,
        command_at: None,
        cwd: None,
        subagent: None,
        commands: Vec::new(),
        editing: Editing::checked(|_| Ok(())),
        deadline: now + Duration::from_secs(120),
        asked_at: now,
        anchor: None,
        passed_over: Vec::new(),
        agent_name: None,
        reply,
    };
    (prompt, receiver)
}
