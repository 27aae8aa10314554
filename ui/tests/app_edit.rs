//! Edit before approving, keys in and answers out, without a terminal
//! (issue 34 item 2): what Ctrl+S sends, when it sends nothing, and that the
//! editor belongs to the request it was opened for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tether_console::session::events::{Answered, Editing};
use tether_console::tui::app::{ANSWER_GUARD, App, AppEvent, Overlay, PromptReply, ScreenRole};
use tokio::sync::oneshot;

mod app_support;
use app_support::{app, key, request};

fn ctrl_s() -> KeyEvent {
    KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)
}

/// `{"command": "ls"}` asks, editable under `editing`; the human has
/// looked at it long enough for keys to count.
fn ask(app: &mut App, id: u64, editing: Editing) -> oneshot::Receiver<Answered> {
    let (mut prompt, receiver) = request(id, "run", r#"{"command": "ls"}"#, app.now);
    prompt.editing = editing;
    app.update(AppEvent::ApprovalRequested(Box::new(prompt)));
    app.tick(app.now + ANSWER_GUARD);
    receiver
}

/// Only a string `command` passes, as a schema would say it.
fn command_is_a_string() -> Editing {
    Editing::checked(|v| match v.get("command") {
        Some(serde_json::Value::String(_)) => Ok(()),
        _ => Err("arguments do not match the schema: at /command: not a string".to_owned()),
    })
}

/// Types `text` at the end of line 2 of the editor, before the closing quote.
fn append_to_command(app: &mut App, text: &str) {
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::End));
    app.handle_key(key(KeyCode::Left));
    for c in text.chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
}

fn notes(app: &App) -> String {
    app.events.iter().map(|e| format!("{}\n", e.text)).collect()
}

#[test]
fn ctrl_s_approves_with_the_edited_arguments_and_an_unedited_text_is_a_plain_approval() {
    let mut app = app();
    let mut edited = ask(&mut app, 1, command_is_a_string());
    let mut unedited = ask(&mut app, 2, command_is_a_string());
    app.handle_key(key(KeyCode::Char('e')));
    assert!(matches!(app.overlay, Overlay::Edit(_)));
    append_to_command(&mut app, " -l");
    app.handle_key(ctrl_s());
    assert!(matches!(app.overlay, Overlay::None));
    assert_eq!(
        edited.try_recv().unwrap().reply,
        PromptReply::ApproveEdited {
            arguments: json!({"command": "ls -l"})
        }
    );
    app.tick(app.now + ANSWER_GUARD);
    app.handle_key(key(KeyCode::Char('e')));
    app.handle_key(ctrl_s());
    assert_eq!(unedited.try_recv().unwrap().reply, PromptReply::Approve);
    assert!(notes(&app).contains("the arguments are the model's own: approved as they are"));
}

#[test]
fn ctrl_s_on_an_edit_the_schema_refuses_sends_nothing_and_esc_goes_back_unchanged() {
    let mut app = app();
    let mut answer = ask(&mut app, 1, command_is_a_string());
    app.handle_key(key(KeyCode::Char('e')));
    // `"command": "ls"5` is not JSON; the schema never sees it.
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::End));
    app.handle_key(key(KeyCode::Char('5')));
    app.handle_key(ctrl_s());
    assert!(matches!(app.overlay, Overlay::Edit(_)), "the editor stays open");
    assert!(answer.try_recv().is_err(), "nothing was sent");
    assert!(
        notes(&app).contains("not approved: not JSON at line 2, column 18"),
        "{}",
        notes(&app)
    );
    app.handle_key(key(KeyCode::Esc));
    assert!(matches!(app.overlay, Overlay::None));
    assert_eq!(app.prompts.current().unwrap().arguments, r#"{"command": "ls"}"#);
    assert!(answer.try_recv().is_err(), "Esc in the editor answers nothing");
}

#[test]
fn the_editor_closes_with_a_notice_when_its_request_leaves_and_never_answers_the_next() {
    let mut app = app();
    let _first = ask(&mut app, 1, command_is_a_string());
    let mut second = ask(&mut app, 2, command_is_a_string());
    app.handle_key(key(KeyCode::Char('e')));
    append_to_command(&mut app, " -l");
    app.update(AppEvent::ApprovalClosed {
        id: 1,
        reason: "no answer in 120 s".into(),
    });
    assert!(matches!(app.overlay, Overlay::None), "the editor closed");
    assert!(
        notes(&app).contains("closed unanswered (no answer in 120 s); your edit was not sent"),
        "{}",
        notes(&app)
    );
    // The Ctrl+S that would have sent the edit lands on the next request.
    app.tick(app.now + ANSWER_GUARD);
    app.handle_key(ctrl_s());
    assert!(second.try_recv().is_err(), "the next request is not answered");
}

#[test]
fn a_call_whose_front_door_cannot_run_edits_says_so_and_a_view_only_console_cannot_edit() {
    let mut app = app();
    let _asked = ask(&mut app, 1, Editing::Unsupported("its PermissionRequest cannot".into()));
    app.handle_key(key(KeyCode::Char('e')));
    assert!(matches!(app.overlay, Overlay::None));
    assert!(notes(&app).contains("e does not edit this call: its PermissionRequest cannot"));

    let mut viewer = self::app();
    viewer.role = ScreenRole::Attached { read_only: true };
    let _asked = ask(&mut viewer, 1, command_is_a_string());
    viewer.handle_key(key(KeyCode::Char('e')));
    assert!(matches!(viewer.overlay, Overlay::None));
    assert!(notes(&viewer).contains("this console only views"));
}
