//! End to end in a real pseudo-terminal: `tether serve` under a policy
//! whose reviewer answers first. A call it allows runs unasked, a call it
//! escalates is a prompt that shows its reason, and the header counts what
//! it spared the human.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty_support;

use std::process::{Command, Stdio};

use pty_support::{Console, result, strings};
use serde_json::{Value, json};

#[test]
fn the_console_shows_the_reviewers_reason_on_the_prompt_and_counts_what_it_answered() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    let policy = dir.path().join("review.json");
    let reviewer = r#"if grep -q push; then echo '{"decision": "ask", "reason": "pushes to a remote"}'; else echo '{"decision": "allow", "reason": "reads"}'; fi"#;
    std::fs::write(
        &policy,
        json!({"default": "review", "reviewers": {"gate": {"command": reviewer}}, "rules": []}).to_string(),
    )
    .unwrap();
    let args = strings(&[
        "serve",
        "--socket",
        socket.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    let mut console = Console::spawn(&args, true);
    console.wait_for("listening for agents");
    let batch = json!({
        "session": {"session_id": "s1", "owner": "you", "label": "agent0"},
        "tools": [{"name": "shell", "description": "Runs a command", "body": {"echo": true}}],
        "calls": [
            {"id": "c1", "name": "shell", "arguments": {"cmd": "git status"}},
            {"id": "c2", "name": "shell", "arguments": {"cmd": "git push"}}
        ],
    });
    let file = dir.path().join("batch.json");
    std::fs::write(&file, batch.to_string()).unwrap();
    let agent = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["send", file.to_str().unwrap(), "--socket", socket.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    console.wait_until("the prompt with the reviewer's reason", |s| {
        s.contains("Approval 1 of 1") && s.contains("reviewer: pushes to a remote")
    });
    console.wait_until("the header's count", |s| s.contains("reviewer: 1 answered, 1 to you"));
    console.keys("y");
    let output = agent.wait_with_output().unwrap();
    assert!(output.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let decided = |id: &str| {
        lines
            .iter()
            .find(|l| l["call_id"] == id)
            .map(|l| l["decided_by"].as_str().unwrap_or_default().to_owned())
    };
    assert_eq!(decided("c1").as_deref(), Some("reviewer:gate"), "{lines:?}");
    assert_eq!(decided("c2").as_deref(), Some("human"), "{lines:?}");
    let screen = console.wait_for("reviewer gate asked you about shell (c2)");
    assert!(screen.contains("reviewer gate allowed shell (c1)"), "{screen}");
    // The journal tells the two apart.
    let journal = console.quit();
    let (c1, c2) = (result(&journal, "c1"), result(&journal, "c2"));
    assert_eq!(
        (&c1["decided_by"], &c1["review"]),
        (&json!("reviewer:gate"), &json!("allow"))
    );
    assert_eq!(
        (&c2["decided_by"], &c2["review"]),
        (&json!("human@main"), &json!("ask"))
    );
    assert_eq!(c2["review_reason"], "pushes to a remote");
    assert_eq!(c2["asked_by"], "unmatched-calls-are-reviewed");
}
