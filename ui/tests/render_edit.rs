//! The argument editor (`e` on a prompt, issue 34) rendered with
//! `TestBackend` at 80×24, 120×40 and 200×50, snapshotted: an edit the
//! schema accepts, one it refuses (its JSON path shown), text that is not
//! JSON (its line and column), and a refused `Ctrl+S`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod render_support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use render_support::{render, scene};
use tether_console::session::events::Editing;
use tether_console::tui::app::{ArgumentEditor, EditVerdict, Overlay};

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];

fn snapshot(name: &str, app: &tether_console::tui::app::App) {
    for size in SIZES {
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), render(app, size));
    }
}

/// The schema of `save_note` as far as the editor needs it: `title` a string.
fn check() -> tether_console::session::events::ArgumentCheck {
    match Editing::checked(|value| match value.get("title") {
        Some(serde_json::Value::String(_)) => Ok(()),
        _ => Err("arguments do not match the schema: at /title: 5 is not of type \"string\"".to_owned()),
    }) {
        Editing::Checked(check) => check,
        Editing::Unsupported(_) => unreachable!(),
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn editor_scene(arguments: &str) -> render_support::Scene {
    let mut scene = scene().with_batch();
    scene.prompt("call_4", "save_note", arguments, None, 60_000);
    scene.app.overlay = Overlay::Edit(Box::new(ArgumentEditor::new(arguments, check())));
    scene
}

#[test]
fn the_editor_shows_the_pretty_arguments_and_that_they_can_be_approved() {
    let scene = editor_scene(r#"{"title": "groceries", "text": "milk, eggs"}"#);
    let Overlay::Edit(editor) = &scene.app.overlay else {
        unreachable!()
    };
    assert!(matches!(editor.verdict, EditVerdict::Valid(_)));
    snapshot("edit_valid", &scene.app);
}

#[test]
fn the_editor_names_the_json_path_the_schema_refuses() {
    let scene = editor_scene(r#"{"title": 5, "text": "milk, eggs"}"#);
    snapshot("edit_schema_error", &scene.app);
}

#[test]
fn the_editor_refuses_text_that_is_not_json_with_its_line_and_column_and_says_ctrl_s_was_refused() {
    let mut scene = editor_scene(r#"{"title": "groceries"}"#);
    let Overlay::Edit(editor) = &mut scene.app.overlay else {
        unreachable!()
    };
    // After `"groceries"` on line 2, a stray character.
    editor.input(key(KeyCode::Down));
    editor.input(key(KeyCode::End));
    editor.input(key(KeyCode::Char('x')));
    assert_eq!(
        editor.verdict,
        EditVerdict::NotJson {
            line: 2,
            column: 23,
            message: "expected `,` or `}`".to_owned()
        }
    );
    scene
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    assert!(
        matches!(scene.app.overlay, Overlay::Edit(_)),
        "Ctrl+S on text that is not JSON leaves the editor open"
    );
    snapshot("edit_not_json_refused", &scene.app);
}

#[test]
fn the_detail_of_a_call_approved_with_edits_shows_both_versions_and_who_edited() {
    use tether_console::session::provenance::TrailEntry;
    use tether_console::tui::app::{AppEvent, Pane};
    use tether_tools::ToolExecutionOutcome;
    let mut scene = scene().with_batch();
    // The scene's call_4 as the model wrote it, and as the human edited it.
    let model = serde_json::json!({"title": "todo", "text": "buy oat milk"});
    let edited = serde_json::json!({"title": "todo", "text": "buy oat milk and eggs"});
    let log = &scene._session.log;
    let key = scene.key("call_4");
    log.record_for(
        key,
        TrailEntry::PreRule {
            id: "ask-before-writing".into(),
            action: "ask",
        },
    );
    log.record_for(
        key,
        TrailEntry::Human {
            approved: true,
            reason: None,
            by: "attach 2 (pts/4)".into(),
            waited: std::time::Duration::ZERO,
        },
    );
    log.record_for(
        key,
        TrailEntry::Edited {
            from: std::sync::Arc::new(model),
            to: std::sync::Arc::new(edited),
            by: "attach 2 (pts/4)".into(),
        },
    );
    let outcome = ToolExecutionOutcome::from_parts("call_4", "save_note", Ok(serde_json::json!("saved")));
    scene.app.update(AppEvent::Stage {
        execution: scene.execution("call_4"),
        stage: tether_console::tui::app::Stage::PreExecute,
        at: scene.at(90),
    });
    scene.app.update(AppEvent::Outcome {
        batch: 0,
        index: 3,
        outcome,
        at: scene.at(3_400),
    });
    scene.app.selected_call = 3;
    scene.app.focus = Pane::Detail;
    let shown = render(&scene.app, (200, 50));
    assert!(
        shown.contains("approved with edits by human@attach 2 (pts/4)"),
        "{shown}"
    );
    assert!(
        shown.contains("Arguments as edited by human@attach 2 (pts/4) (what ran)"),
        "{shown}"
    );
    snapshot("detail_edited", &scene.app);
}

/// The prompt's key row (from the row of `y` to the always line), as
/// one text: the row wraps on a narrow modal.
fn key_row(rendered: &str) -> String {
    let lines: Vec<&str> = rendered.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.contains("approve once"))
        .expect("the key row");
    let last = lines
        .iter()
        .position(|l| l.contains("approve always"))
        .expect("the always line");
    lines[first..last]
        .iter()
        .map(|l| {
            let inside = l.split('║').nth(1).unwrap_or(l);
            inside.trim()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The prompt's key row is the key table's: every key the footer offers on
/// a prompt is on it (`e` too, as the README says), each with the table's
/// words; `e` only where the call can be edited, on the row and in the
/// footer.
#[test]
fn the_prompts_key_row_offers_every_prompt_key_of_the_table_edit_only_where_it_can() {
    use tether_console::tui::keys::{KeyContext, footer};
    let mut scene = scene().with_batch();
    scene.prompt("call_4", "save_note", r#"{"title": "groceries"}"#, None, 60_000);
    let row = key_row(&render(&scene.app, (160, 48)));
    for (shown, help) in footer(KeyContext::Prompt) {
        if shown == "a" {
            continue; // its own line, with the rule it offers
        }
        assert!(row.contains(&format!("{shown}  {help}")), "{shown} {help}: {row}");
    }
    let mut fixed = render_support::scene().with_batch();
    fixed.not_editable = Some("Codex runs no edited arguments here".to_owned());
    fixed.prompt("call_4", "save_note", r#"{"title": "groceries"}"#, None, 60_000);
    let rendered = render(&fixed.app, (160, 48));
    assert!(!key_row(&rendered).contains("edit, approve"), "{rendered}");
    assert!(!rendered.contains("edit, approve"), "nor in the footer: {rendered}");
}
