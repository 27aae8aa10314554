//! The console shows what the reviewers spared the human: a line per review
//! in the events pane, and the count and time in the header.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod render_support;

use std::sync::Arc;
use std::time::Duration;

use render_support::{render, scene};
use tether_console::session::provenance::{ReviewVerdict, TrailEntry};
use tether_console::tui::app::AppEvent;

fn reviewed(call_id: &str, verdict: ReviewVerdict, reason: &str, ms: u64) -> AppEvent {
    AppEvent::Reviewed {
        reviewer: Arc::from("gate"),
        tool: "shell".into(),
        call_id: call_id.into(),
        verdict,
        reason: reason.into(),
        elapsed: Duration::from_millis(ms),
    }
}

#[test]
fn the_header_counts_the_calls_a_reviewer_answered_and_the_events_pane_says_each() {
    let mut scene = scene();
    let before = render(&scene.app, (200, 50));
    assert!(!before.contains("reviewer:"), "nothing before the first review");
    scene
        .app
        .update(reviewed("c1", ReviewVerdict::Allow, "lists files", 12));
    scene.app.update(reviewed(
        "c2",
        ReviewVerdict::Deny,
        "deletes files outside the project",
        30,
    ));
    scene
        .app
        .update(reviewed("c3", ReviewVerdict::Ask, "pushes to a remote", 25));
    scene.app.update(reviewed(
        "c4",
        ReviewVerdict::Failed,
        "no answer within 20000 ms",
        20_000,
    ));
    let screen = render(&scene.app, (200, 50));
    assert!(
        screen.contains("reviewer: 2 answered, 2 to you (1 failed) · 20.1 s"),
        "{screen}"
    );
    for line in [
        "reviewer gate allowed shell (c1) in 12 ms: lists files",
        "reviewer gate denied shell (c2) in 30 ms: deletes files outside the project",
        "reviewer gate asked you about shell (c3) in 25 ms: pushes to a remote",
        "reviewer gate failed on shell (c4) in 20.0 s: no answer within 20000 ms",
    ] {
        assert!(screen.contains(line), "{line}\n{screen}");
    }
}

#[test]
fn the_trail_in_the_detail_pane_names_the_reviewer_its_verdict_and_time() {
    let entry = |verdict| TrailEntry::Reviewed {
        reviewer: Arc::from("gate"),
        verdict,
        reason: "why".into(),
        elapsed: Duration::from_millis(40),
    };
    assert_eq!(
        entry(ReviewVerdict::Allow).describe(),
        "reviewer gate: allowed in 40 ms (why)"
    );
    assert_eq!(
        entry(ReviewVerdict::Ask).describe(),
        "reviewer gate: asked the human in 40 ms (why)"
    );
    assert_eq!(
        entry(ReviewVerdict::Failed).describe(),
        "reviewer gate: failed after 40 ms (why); the human was asked"
    );
}
