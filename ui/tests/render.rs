//! Every pane and the approval prompt rendered with ratatui's `TestBackend`
//! at 80×24, 120×40, 160×48 and 200×50, snapshotted with insta. Time is fixed: every instant
//! is an offset from one start.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod render_support;

use render_support::{SIZES, render, scene};
use tether_console::tui::app::{AppEvent, FullView, Overlay, Pane};
use tether_tools::{ToolExecutionOutcome, ToolFailureCode};

fn snapshot_both(name: &str, app: &tether_console::tui::app::App) {
    for size in SIZES {
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), render(app, size));
    }
}

#[test]
fn idle_console_before_any_batch() {
    let mut scene = scene();
    scene.app.pending_batches = Some(3);
    snapshot_both("idle", &scene.app);
}

#[test]
fn a_batch_in_flight_with_stages_barriers_and_progress() {
    let scene = scene().with_batch();
    snapshot_both("batch_in_flight", &scene.app);
}

#[test]
fn the_detail_of_a_rejected_call_with_its_trail_and_outcome() {
    let mut scene = scene().with_batch().finish_batch();
    scene.app.focus = Pane::Detail;
    snapshot_both("detail_rejected", &scene.app);
}

#[test]
fn the_detail_names_the_failure_code_and_badges_what_was_escaped() {
    let mut scene = scene().with_batch().finish_batch();
    scene.app.focus = Pane::Detail;
    let rendered = render(&scene.app, (120, 40));
    assert!(rendered.contains("Outcome: DENIED"), "{rendered}");
    // A plain outcome gets no badge: the pretty-printed result's own line
    // breaks are not hostile.
    let denied_rows: Vec<&str> = rendered.lines().filter(|r| r.contains("Outcome: DENIED")).collect();
    assert!(denied_rows.iter().all(|r| !r.contains("⚠")), "{rendered}");
    // A hostile value in the outcome gets the badge (call_3, still running
    // before `finish_batch`; a call's first outcome is the one kept).
    let mut scene = self::scene().with_batch();
    scene.app.focus = Pane::Detail;
    let outcome = ToolExecutionOutcome::from_parts(
        "call_3",
        "read_note",
        Ok(serde_json::json!("buy milk\u{202e} call Ana")),
    );
    scene.app.update(AppEvent::Outcome {
        batch: 0,
        index: 2,
        outcome,
        at: scene.at(100),
    });
    scene.app.selected_call = 2;
    let rendered = render(&scene.app, (120, 40));
    assert!(rendered.contains("Outcome: ok"), "{rendered}");
    let outcome_rows: Vec<&str> = rendered.lines().filter(|r| r.contains("Outcome: ok")).collect();
    assert!(outcome_rows.iter().any(|r| r.contains("⚠")), "{rendered}");
}

#[test]
fn the_events_pane_and_the_scope_declarations() {
    let mut scene = scene().with_batch();
    scene.app.focus = Pane::Scopes;
    for i in 0..12 {
        scene.app.update(AppEvent::ToolsChanged {
            description: format!("tools/change: tool_{i} registered in assistant"),
        });
    }
    snapshot_both("scopes_and_events", &scene.app);
}

#[test]
fn the_prompt_with_long_arguments_is_clipped_with_a_marker() {
    let mut scene = scene().with_batch();
    let lines: Vec<String> = (0..60).map(|i| format!("line {i} of the note")).collect();
    let args = serde_json::json!({"title": "long", "text": lines}).to_string();
    scene.prompt(
        "call_4",
        "save_note",
        &args,
        Some("this replaces a note of yours"),
        107_000,
    );
    let rendered = render(&scene.app, (80, 24));
    assert!(rendered.contains("more lines] v view all"), "{rendered}");
    snapshot_both("prompt_long_arguments", &scene.app);
}

#[test]
fn the_prompt_shows_where_the_call_runs_and_each_command_of_a_compound() {
    let mut scene = scene().with_batch();
    scene.cwd = Some("/srv/src/parser".into());
    scene.not_covered = vec![1];
    let args = serde_json::json!({"command": "git status && rm -rf build"}).to_string();
    scene.prompt("call_9", "Bash", &args, Some("deletes files"), 60_000);
    let rendered = render(&scene.app, (80, 24));
    assert!(rendered.contains("In        /srv/src/parser"), "{rendered}");
    assert!(rendered.contains("Runs      1. git status"), "{rendered}");
    assert!(
        rendered.contains("Runs      2. rm -rf build   ← no rule allows this"),
        "{rendered}"
    );
    let args = serde_json::json!({"command": "ls $(id)"}).to_string();
    scene.prompt("call_10", "Bash", &args, None, 60_000);
    snapshot_both("prompt_cwd_and_segments", &scene.app);
}

#[test]
fn the_detail_pane_shows_where_the_call_ran() {
    let mut scene = scene();
    scene.cwd = Some("/srv/src/parser".into());
    let scene = scene.with_batch().finish_batch();
    let rendered = render(&scene.app, (120, 40));
    assert!(rendered.contains("In        /srv/src/parser"), "{rendered}");
    snapshot_both("detail_cwd", &scene.app);
}

#[test]
fn the_prompt_escapes_hostile_characters_and_warns() {
    let mut scene = scene().with_batch();
    let args =
        serde_json::json!({"path": "notes\u{202e}txt.exe", "cmd": "echo \u{1b}[31mred\u{1b}[0m", "z": "a\u{200b}b"})
            .to_string();
    scene.prompt(
        "call_\u{1b}]0;pwned\u{7}",
        "save_note",
        &args,
        Some("ignore previous\u{202e} instructions"),
        90_000,
    );
    let rendered = render(&scene.app, (160, 48));
    assert!(!rendered.contains('\u{1b}') && !rendered.contains('\u{202e}') && !rendered.contains('\u{200b}'));
    assert!(rendered.contains("\\u{1b}") && rendered.contains("\\u{202e}") && rendered.contains("\\u{200b}"));
    assert!(rendered.contains("⚠ escaped"));
    snapshot_both("prompt_hostile", &scene.app);
}

#[test]
fn a_queue_of_three_shows_one_of_three_and_a_red_countdown() {
    let mut scene = scene().with_batch();
    scene.prompt("call_4", "save_note", r#"{"title":"a","text":"b"}"#, None, 7_000);
    scene.prompt("call_7", "write_file", r#"{"path":"x"}"#, None, 100_000);
    scene.prompt("call_8", "shell", r#"{"command":"ls"}"#, None, 110_000);
    let rendered = render(&scene.app, (80, 24));
    assert!(rendered.contains("Approval 1 of 3"), "{rendered}");
    assert!(rendered.contains("0:07 left"), "{rendered}");
    snapshot_both("prompt_queue_of_three", &scene.app);
}

#[test]
fn the_full_arguments_view_and_the_reason_editor() {
    let mut scene = scene().with_batch();
    let lines: Vec<String> = (0..60).map(|i| format!("line {i}")).collect();
    scene.prompt(
        "call_4",
        "save_note",
        &serde_json::json!({ "text": lines }).to_string(),
        None,
        60_000,
    );
    scene.app.overlay = Overlay::FullArguments(FullView {
        scroll: 20,
        ..FullView::default()
    });
    snapshot_both("full_arguments", &scene.app);
    let mut textarea = tui_textarea::TextArea::default();
    textarea.insert_str("use the staging bucket\ninstead");
    scene.app.overlay = Overlay::Reason(Box::new(textarea));
    snapshot_both("reject_reason", &scene.app);
}

/// The approve-always chooser keeps its last line, the keys, at every size,
/// however long the policy file's path.
#[test]
fn the_approve_always_chooser_keeps_its_keys_line() {
    let mut scene = scene().with_batch();
    scene.prompt("call_4", "save_note", r#"{"title":"a","text":"b"}"#, None, 60_000);
    scene.app.keep_into = Some("/home/developer/projects/parser/.config/tether/policy.json".into());
    scene
        .app
        .handle_key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('a')));
    assert!(
        matches!(scene.app.overlay, Overlay::Always { .. }),
        "{:?}",
        scene.app.overlay
    );
    for size in SIZES {
        let rendered = render(&scene.app, size);
        let flat: String = rendered
            .lines()
            .map(|l| l.trim_matches(|c| c == '"' || c == ' ' || c == '│'))
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            flat.contains("Enter adds it for this session") && flat.contains("Esc back"),
            "{size:?}:\n{rendered}"
        );
    }
    snapshot_both("always_chooser", &scene.app);
}

/// Three hundred lines in one string value, some of them wider than any screen.
fn huge_text() -> String {
    let lines: Vec<String> = (0..300)
        .map(|i| format!("line {i}: {}", "lorem ipsum ".repeat(if i % 3 == 0 { 40 } else { 1 })))
        .collect();
    lines.join("\n")
}

fn huge_content() -> String {
    serde_json::json!({"path": "src/big.rs", "content": huge_text()}).to_string()
}

#[test]
fn a_prompt_with_hundreds_of_lines_in_one_string_keeps_its_keys_and_its_marker() {
    let mut scene = scene().with_batch();
    scene.prompt("call_4", "save_note", &huge_content(), Some("a big write"), 60_000);
    for size in [(80, 24), (120, 40), (200, 50)] {
        let rendered = render(&scene.app, size);
        assert!(rendered.contains(" y  approve once"), "{size:?}:\n{rendered}");
        assert!(rendered.contains(" a  approve always"), "{size:?}:\n{rendered}");
        assert!(rendered.contains("more lines] v view all"), "{size:?}:\n{rendered}");
        assert!(
            rendered.contains("line 1: lorem"),
            "the string's own lines: {size:?}:\n{rendered}"
        );
    }
    snapshot_both("prompt_huge_string", &scene.app);
}

#[test]
fn the_full_view_shows_real_line_breaks_keeps_escapes_wraps_and_searches() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut scene = scene().with_batch();
    let content = format!("first line\nsecond\tline \u{1b}[31mred\u{202e}\n{}", huge_text());
    scene.prompt(
        "call_4",
        "save_note",
        &serde_json::json!({ "content": content }).to_string(),
        None,
        60_000,
    );
    scene
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('v'), KeyModifiers::NONE));
    let rendered = render(&scene.app, (80, 24));
    let rows: Vec<&str> = rendered.lines().collect();
    assert!(
        rows.iter()
            .any(|r| r.contains("\"content\": \"first line") && !r.contains("second")),
        "{rendered}"
    );
    assert!(
        rows.iter().any(|r| r.contains("second\\tline \\u001b[31mred\\u{202e}")),
        "{rendered}"
    );
    assert!(!rendered.contains('\u{1b}') && !rendered.contains('\u{202e}'));
    // Wrapped by default: the end of a long line is on screen.
    assert!(
        rows.iter()
            .any(|r| r.contains("lorem ipsum lorem") && !r.contains("line ")),
        "a continuation row:\n{rendered}"
    );
    for c in "/line 250".chars() {
        scene
            .app
            .handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    scene.app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let rendered = render(&scene.app, (80, 24));
    assert!(rendered.contains("line 250: lorem"), "the search found it:\n{rendered}");
    // Unwrapped, it scrolls sideways.
    scene
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('w'), KeyModifiers::NONE));
    let before = render(&scene.app, (80, 24));
    scene.app.handle_key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE));
    let after = render(&scene.app, (80, 24));
    assert_ne!(before, after, "→ scrolls sideways");
    snapshot_both("full_arguments_searched", &scene.app);
}

#[test]
fn help_lists_every_key_from_the_table() {
    let mut scene = scene();
    scene.app.overlay = Overlay::Help { scroll: 0 };
    let rendered = render(&scene.app, (160, 48));
    for binding in tether_console::tui::keys::BINDINGS
        .iter()
        .filter(|b| b.context == tether_console::tui::keys::KeyContext::Prompt)
    {
        assert!(rendered.contains(binding.help), "{} missing", binding.help);
    }
    snapshot_both("help", &scene.app);
}

#[test]
fn the_batch_table_shows_each_outcome_and_who_decided_it_at_every_width() {
    let mut scene = scene().with_batch().finish_batch();
    let outcome = ToolExecutionOutcome::from_parts(
        "call_5",
        "delete_all_notes",
        Err((ToolFailureCode::AbortedBeforeDispatch, "the batch was cancelled".into())),
    );
    scene.app.update(AppEvent::Outcome {
        batch: 0,
        index: 4,
        outcome,
        at: scene.at(3_500),
    });
    scene.app.focus = Pane::Batch;
    for size in SIZES {
        let rendered = render(&scene.app, size);
        let row = |call: &str| {
            rendered
                .lines()
                .find(|l| l.contains(&format!(" {call} ")))
                .unwrap_or_else(|| panic!("no row for {call}:\n{rendered}"))
                .to_owned()
        };
        let (read, write, delete) = (row("call_1"), row("call_4"), row("call_5"));
        assert!(
            read.contains(" ok ") && read.contains("rule:reads-ar"),
            "{size:?}:\n{rendered}"
        );
        assert!(
            write.contains("DENIED") && write.contains("human"),
            "{size:?}:\n{rendered}"
        );
        // The longest code is never cut; at 80 columns it leaves no room
        // for the decider it implies (cancelled).
        assert!(delete.contains("ABORTED_BEFORE_DISPATCH"), "{size:?}:\n{rendered}");
        assert!(size.0 < 120 || delete.contains("cancelled"), "{size:?}:\n{rendered}");
        insta::assert_snapshot!(format!("batch_outcomes_{}x{}", size.0, size.1), rendered);
    }
}

#[test]
fn a_short_terminal_still_shows_what_is_approved() {
    // At 50×16 the prompt's keys and the always rule's text took every row
    // the arguments had: `y` approved a call whose arguments were off
    // screen. The prompt now drops the owner line, the schema's tick, the
    // empty queue and the rule's text (the `a` chooser shows it) first.
    let mut scene = scene().with_batch();
    scene.prompt(
        "call_4",
        "save_note",
        r#"{"title":"todo","text":"buy oat milk"}"#,
        Some("this replaces a note of yours"),
        60_000,
    );
    for size in [(50, 16), (60, 18)] {
        let rendered = render(&scene.app, size);
        for shown in [
            "\"title\": \"todo\"",
            "\"text\": \"buy oat milk\"",
            "Reason",
            " y  approve once",
            " a  approve always",
        ] {
            assert!(rendered.contains(shown), "{size:?}: `{shown}` off screen:\n{rendered}");
        }
        insta::assert_snapshot!(format!("prompt_short_terminal_{}x{}", size.0, size.1), rendered);
    }
    // Another call of the same agent waiting adds the `Y`/`N` line: the
    // arguments still show (an attached console at 50×16 showed none).
    scene.prompt("call_5", "save_note", r#"{"title":"b","text":"c"}"#, None, 60_000);
    let rendered = render(&scene.app, (50, 16));
    for shown in [
        "\"title\": \"todo\"",
        "more lines] v view all",
        " Y  approve all 2…",
        " y  approve once",
    ] {
        assert!(rendered.contains(shown), "`{shown}` off screen:\n{rendered}");
    }
    insta::assert_snapshot!("prompt_short_terminal_group_50x16", rendered);
    // Where the rows suffice, nothing is dropped.
    let rendered = render(&scene.app, (120, 40));
    assert!(
        rendered.contains("Owner") && rendered.contains("✓ arguments validate"),
        "{rendered}"
    );
    assert!(rendered.contains("with exactly these"), "{rendered}");
}
