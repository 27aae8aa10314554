//! Issue 34 on screen, snapshotted at 80×24, 120×40 and 200×50: a prompt
//! from a subagent (the prompt, the batch rows and the detail say which),
//! and the list `Y` and `N` show before a batch is answered at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod render_support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use render_support::{Scene, render, scene};
use tether_console::subagent::Subagent;
use tether_console::tui::app::{AppEvent, Overlay, Pane, Stage};

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];

fn snapshots(name: &str, scene: &Scene) {
    for size in SIZES {
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), render(&scene.app, size));
    }
}

fn explore() -> Subagent {
    Subagent {
        kind: "Explore".into(),
        id: Some("aed64e52aca1f6d0c".into()),
    }
}

#[test]
fn a_subagents_prompt_says_which_subagent_asks() {
    let mut scene = scene();
    scene.subagent = Some(explore());
    let mut scene = scene.with_batch();
    scene.prompt(
        "call_4",
        "Bash",
        r#"{"command": "rm -rf build", "description": "clean"}"#,
        Some("deletes files"),
        60_000,
    );
    let rendered = render(&scene.app, (80, 24));
    assert!(rendered.contains("subagent Explore 6d0c"), "{rendered}");
    snapshots("subagent_prompt", &scene);
}

#[test]
fn the_batch_rows_and_the_detail_name_the_subagent() {
    let mut scene = scene();
    scene.subagent = Some(explore());
    let mut scene = scene.with_batch().finish_batch();
    scene.app.focus = Pane::Detail;
    let rendered = render(&scene.app, (120, 40));
    // As much of it as a row has room for, after who decided.
    assert!(
        rendered.contains("queued         via subagent Explore"),
        "a waiting row:\n{rendered}"
    );
    assert!(rendered.contains("human  via Explore"), "a decided row:\n{rendered}");
    let wide = render(&scene.app, (200, 50));
    assert!(wide.contains("human  via subagent Explore 6d0c"), "{wide}");
    assert!(
        rendered.contains("subagent Explore 6d0c (id aed64e52aca1f6d0c)"),
        "the detail has the whole id:\n{rendered}"
    );
    snapshots("subagent_detail", &scene);
}

/// Three calls of the batch on screen wait for a human.
fn three_waiting() -> Scene {
    let mut scene = scene().with_batch();
    for (id, tool, arguments) in [
        ("call_4", "save_note", r#"{"title":"todo","text":"buy oat milk"}"#),
        ("call_5", "delete_all_notes", "{}"),
        ("call_6", "weather", r#"{"city": "Oslo"}"#),
    ] {
        let at = scene.at(1_000);
        scene.app.update(AppEvent::Stage {
            execution: scene.execution(id),
            stage: Stage::AwaitingApproval,
            at,
        });
        scene.prompt(id, tool, arguments, Some("ask-before-writing"), 60_000);
    }
    scene
}

#[test]
fn the_prompt_offers_y_and_n_when_other_calls_of_its_agent_session_wait() {
    let scene = three_waiting();
    let rendered = render(&scene.app, (120, 40));
    assert!(
        rendered.contains("approve all 3 waiting calls of agent session quickstart-1"),
        "{rendered}"
    );
    snapshots("batch_answer_offer", &scene);
}

#[test]
fn y_shows_the_list_it_approves() {
    let mut scene = three_waiting();
    scene
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('Y'), KeyModifiers::SHIFT));
    assert!(matches!(scene.app.overlay, Overlay::Group(_)));
    snapshots("batch_answer_approve", &scene);
}

#[test]
fn n_then_ctrl_s_shows_the_list_it_rejects_with_the_reason() {
    let mut scene = three_waiting();
    scene
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('N'), KeyModifiers::SHIFT));
    for c in "not before the release".chars() {
        scene
            .app
            .handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    scene
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    assert!(matches!(scene.app.overlay, Overlay::Group(_)));
    snapshots("batch_answer_reject", &scene);
}
