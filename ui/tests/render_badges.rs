//! The ⚠ badge marks exactly the field that holds a hostile character, and
//! the prompt names a hostile character it does not show (issue 28 item 3).
//! Rendered with `TestBackend` at 80×24, 120×40 and 200×50, snapshotted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod render_support;

use render_support::{render, scene};

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];

/// The row of the prompt that heads its arguments.
fn arguments_row(rendered: &str) -> &str {
    rendered
        .lines()
        .find(|l| {
            l.contains("║Arguments")
                || l.contains("Arguments ⚠")
                || l.trim_start_matches(['"', ' ', '║']).starts_with("Arguments")
        })
        .unwrap_or_else(|| panic!("no Arguments row:\n{rendered}"))
}

#[test]
fn arguments_with_hostile_characters_written_as_json_escapes_get_the_badge() {
    let mut scene = scene().with_batch();
    // What an agent sends on the wire: ASCII only, every hostile character a
    // JSON escape.
    let args = r#"{"path": "notes\u202etxt.exe", "cmd": "echo \u001b[31mred", "z": "a\u200bb"}"#;
    scene.prompt("call_4", "save_note", args, None, 90_000);
    for size in SIZES {
        let rendered = render(&scene.app, size);
        assert!(
            arguments_row(&rendered).contains("⚠ escaped"),
            "{size:?}: the arguments hold U+202E, ESC and U+200B:\n{rendered}"
        );
        assert!(rendered.contains("\\u{202e}") && rendered.contains("\\u001b") && rendered.contains("\\u{200b}"));
        insta::assert_snapshot!(format!("json_escapes_{}x{}", size.0, size.1), rendered);
    }
}

#[test]
fn a_hostile_session_label_badges_the_scope_not_the_clean_arguments() {
    let mut scene = scene().with_batch();
    scene.prompt_in(
        "agent\u{1b}[2Jlabel",
        "call_4",
        "save_note",
        r#"{"title": "todo", "text": "buy oat milk"}"#,
        None,
        90_000,
    );
    for size in SIZES {
        let rendered = render(&scene.app, size);
        assert!(
            !arguments_row(&rendered).contains('⚠'),
            "{size:?}: clean arguments carry no badge:\n{rendered}"
        );
        let scope = rendered
            .lines()
            .find(|l| l.contains("Scope     agent"))
            .unwrap_or_else(|| panic!("no Scope row:\n{rendered}"));
        assert!(
            scope.contains("agent\\u{1b}[2Jlabel") && scope.contains("⚠ escaped"),
            "{size:?}: the label is badged where it is shown: {scope}"
        );
        insta::assert_snapshot!(format!("hostile_label_{}x{}", size.0, size.1), rendered);
    }
}

/// Sixty lines of a note; the 55th (item 54) hides a right-to-left override.
fn sixty_lines_one_hostile() -> Vec<String> {
    (0..60)
        .map(|i| match i {
            54 => "rename to invoice\u{202e}fdp.exe".to_owned(),
            _ => format!("line {i} of the note"),
        })
        .collect()
}

#[test]
fn a_hostile_character_below_the_lines_shown_is_named_with_its_line() {
    let mut scene = scene().with_batch();
    // Line 1 is `{`, line 2 `"text": [`, so item 54 is line 57.
    let items = sixty_lines_one_hostile();
    let args = serde_json::json!({ "text": items }).to_string();
    scene.prompt("call_4", "save_note", &args, None, 90_000);
    for size in SIZES {
        let rendered = render(&scene.app, size);
        assert!(
            !rendered.contains("invoice\\u{202e}"),
            "{size:?}: line 57 is below the fold here:\n{rendered}"
        );
        assert!(
            rendered.contains("⚠ in line 57, v to view"),
            "{size:?}: the prompt says where the hidden character is:\n{rendered}"
        );
        insta::assert_snapshot!(format!("below_the_fold_{}x{}", size.0, size.1), rendered);
    }
}

#[test]
fn a_hostile_character_past_the_edge_of_a_cut_line_is_named_with_its_line() {
    let mut scene = scene().with_batch();
    let long = format!("{}\u{202e}end", "x".repeat(300));
    let args = serde_json::json!({ "a": "short", "b": long }).to_string();
    scene.prompt("call_4", "save_note", &args, None, 90_000);
    for size in SIZES {
        let rendered = render(&scene.app, size);
        assert!(!rendered.contains("\\u{202e}"), "{size:?}:\n{rendered}");
        assert!(rendered.contains("⚠ in line 3, v to view"), "{size:?}:\n{rendered}");
    }
}

#[test]
fn the_full_view_names_a_hostile_line_until_it_is_on_screen() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut scene = scene().with_batch();
    let items = sixty_lines_one_hostile();
    scene.prompt(
        "call_4",
        "save_note",
        &serde_json::json!({ "text": items }).to_string(),
        None,
        90_000,
    );
    scene
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('v'), KeyModifiers::NONE));
    let rendered = render(&scene.app, (80, 24));
    assert!(
        rendered.contains("⚠ in line 57 ·"),
        "v shows where to look:\n{rendered}"
    );
    scene.app.handle_key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE));
    let rendered = render(&scene.app, (80, 24));
    assert!(rendered.contains("invoice\\u{202e}fdp.exe"), "{rendered}");
    assert!(!rendered.contains("⚠ in line"), "on screen now:\n{rendered}");
}

#[test]
fn a_humans_multi_line_reason_is_shown_as_lines_with_hostile_characters_still_escaped() {
    use tether_console::session::provenance::TrailEntry;
    use tether_console::tui::app::{AppEvent, Pane, Stage};
    use tether_tools::{ToolExecutionOutcome, ToolFailureCode};

    let mut scene = scene().with_batch();
    let reason = "not now\nuse the staging bucket\u{202e}txt";
    scene._session.log.record_for(
        scene.key("call_4"),
        TrailEntry::Human {
            approved: false,
            reason: Some(reason.into()),
            by: "main".into(),
            waited: std::time::Duration::ZERO,
        },
    );
    scene.app.update(AppEvent::Stage {
        execution: scene.execution("call_4"),
        stage: Stage::PreExecute,
        at: scene.at(90),
    });
    scene.app.update(AppEvent::Outcome {
        batch: 0,
        index: 3,
        outcome: ToolExecutionOutcome::from_parts(
            "call_4",
            "save_note",
            Err((ToolFailureCode::Denied, format!("rejected by the approver: {reason}"))),
        ),
        at: scene.at(3_400),
    });
    scene.app.selected_call = 3;
    scene.app.focus = Pane::Detail;
    let rendered = render(&scene.app, (120, 40));
    let rows: Vec<&str> = rendered.lines().collect();
    let first = rows
        .iter()
        .position(|r| r.contains("rejected (not now"))
        .unwrap_or_else(|| panic!("no reason row:\n{rendered}"));
    assert!(
        rows[first + 1].contains("use the staging bucket\\u{202e}txt)"),
        "the second line of the reason on the next row, U+202E escaped:\n{rendered}"
    );
    assert!(
        !rendered.contains("\\u{a}"),
        "a line break is not an escape:\n{rendered}"
    );
}
