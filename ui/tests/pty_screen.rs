//! End to end in a real pseudo-terminal: what the screen shows of hostile
//! text sent by agents over the link (issue 28 item 3) and the screen
//! parts of item 8.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty_support;

use std::process::Child;

use pty_support::{Console, Served, asking};
use serde_json::json;

/// Sends one call of `note` with `arguments` (raw JSON text, as an agent
/// writes it) from a session labelled `label`.
fn send(served: &Served, name: &str, label: &str, arguments: &str) -> Child {
    let batch = json!({
        "session": {"session_id": name, "owner": "you", "label": label},
        "tools": [{"name": "note", "description": "Stores a note", "body": {"return": {"stored": true}}}],
        "calls": [{"id": "c1", "name": "note", "arguments": arguments}],
    });
    served.send_json(&format!("{name}.json"), &batch)
}

fn whole_prompt(console: &Console) -> String {
    console.wait_until("the whole prompt", |s| {
        s.contains("Approval 1 of 1") && s.contains("(or a wider rule)")
    })
}

fn row<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no row with {needle:?}:\n{screen}"))
}

fn approve(console: &mut Console, mut agent: Child) {
    console.keys("y");
    assert!(agent.wait().unwrap().success());
    console.wait_gone("Approval 1 of 1");
}

#[test]
fn the_badge_marks_json_escapes_a_hostile_label_and_a_character_below_the_fold() {
    let mut served = Served::asking("*", &[]);

    // Hostile characters written as JSON escapes, from a clean session.
    let agent = send(
        &served,
        "escapes",
        "escapes",
        r#"{"path": "notes\u202etxt.exe", "cmd": "echo \u001b[31mred", "z": "a\u200bb"}"#,
    );
    let screen = whole_prompt(served.sees());
    assert!(
        row(&screen, "Arguments").contains("⚠ escaped"),
        "the arguments hold U+202E, ESC and U+200B:\n{screen}"
    );
    assert!(!row(&screen, "Scope     ").contains('⚠'), "{screen}");
    approve(served.screen(), agent);

    // A session label holding an ESC, clean arguments.
    let agent = send(&served, "labelled", "agent\u{1b}[2Jlabel", r#"{"title": "todo"}"#);
    let screen = whole_prompt(served.sees());
    assert!(
        !row(&screen, "Arguments").contains('⚠'),
        "clean arguments carry no badge:\n{screen}"
    );
    let scope = row(&screen, "Scope     ");
    assert!(
        scope.contains("agent\\u{1b}[2Jlabel") && scope.contains("⚠ escaped"),
        "the label is badged where it is shown:\n{screen}"
    );
    approve(served.screen(), agent);

    // A bidi override on line 57, below the lines the prompt shows.
    let items: Vec<String> = (0..60)
        .map(|i| match i {
            54 => "rename to invoice\u{202e}fdp.exe".to_owned(),
            _ => format!("line {i} of the note"),
        })
        .collect();
    let agent = send(&served, "long", "long", &json!({ "text": items }).to_string());
    let screen = whole_prompt(served.sees());
    assert!(
        !screen.contains("invoice\\u{202e}"),
        "line 57 is below the fold:\n{screen}"
    );
    assert!(
        screen.contains("⚠ in line 57, v to view"),
        "the prompt says where the hidden character is:\n{screen}"
    );
    approve(served.screen(), agent);
    served.quit();
}

#[test]
fn the_batch_title_counts_the_batches_still_to_run() {
    let mut console = Console::start(&[]);
    console.keys("r");
    console.wait_for("batch 1 finished");
    let screen = console.wait_for("Batch 1/");
    assert!(screen.contains("Batch 1/3"), "three batches in the demo:\n{screen}");
    console.keys("r");
    let screen = console.wait_for("Batch 2/");
    assert!(screen.contains("Batch 2/3"), "three batches in the demo:\n{screen}");
    console.quit();
}

#[test]
fn the_scopes_pane_counts_the_agents_connected() {
    // Wide enough that the prompt leaves the scopes pane in view.
    let dir = Served::dir_with(&[("ask.json", &asking("*", "every call is asked"))]);
    let mut served = Served::console_sized(dir, &["--policy", "{dir}/ask.json"], Some((40, 200)));
    // The agent stays connected while its call waits for an answer.
    let agent = send(&served, "one", "one", r#"{"title": "todo"}"#);
    let screen = whole_prompt(served.sees());
    assert!(
        screen.contains("agents · 1 connected"),
        "the tree says how many agents are connected:\n{screen}"
    );
    assert!(
        !screen.contains("agents (0)"),
        "no count that reads as zero agents:\n{screen}"
    );
    approve(served.screen(), agent);
    served.quit();
}
