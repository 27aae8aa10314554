//! `tether replay` of a real console's journal (issue 48): a call the
//! console never finished (it was killed) is shown as what it is, with no
//! recorded outcome, and "who let this run?" (`--decided-by human`) is
//! answered from the record: the policy the journal was recorded under and
//! the human's recorded answers, each call listed with its arguments.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod pty_support;
mod replay_support;
use pty_support::Served;
use replay_support::tether;

const POLICY: &str = r#"{"default": "allow", "rules": [
  {"id": "writes-are-asked", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "ask", "reason": "a write"}}
]}"#;

fn batch(calls: Value) -> Value {
    json!({
        "session": {"session_id": "s1", "label": "script"},
        "tools": [{"name": "write", "body": {"return": "written"}}, {"name": "read", "body": {"return": "text"}}],
        "max_parallelism": 1,
        "calls": calls,
    })
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_call_the_killed_console_never_finished_is_replayed_as_having_no_recorded_outcome() {
    let dir = Served::dir_with(&[("policy.json", POLICY)]);
    let served = Served::headless(
        dir,
        &[
            "--attach",
            "--answer",
            "attached",
            "--policy",
            "{dir}/policy.json",
            "--journal",
            "{dir}/j.jsonl",
        ],
    );
    let mut agent = served.send_json(
        "batch.json",
        &batch(json!([{"id": "c1", "name": "write", "arguments": "{\"path\": \"a.txt\"}"}])),
    );
    let journal = served.path("j.jsonl");
    let started = Instant::now();
    while !std::fs::read_to_string(&journal)
        .unwrap_or_default()
        .contains("tool/call")
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the call was never journaled"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    served.signal("KILL");
    let _ = agent.wait();
    let replayed = tether(&["replay", journal.to_str().unwrap(), "--headless"]);
    let table = text(&replayed.stdout);
    let row = table
        .lines()
        .find(|l| l.contains("c1 "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.contains("none") && row.contains("console stopped"),
        "{row}\n{table}"
    );
    assert!(
        table.contains("NO OUTCOME batch 1 call c1 (write): the journal holds the call but no result"),
        "{table}"
    );
    let json = tether(&["replay", journal.to_str().unwrap(), "--headless", "--json"]);
    let first: Value = serde_json::from_str(text(&json.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["recorded"]["code"], Value::Null, "{first}");
    assert_eq!(
        first["recorded"]["outcome"], "none: the console stopped before the call ended",
        "{first}"
    );
}

#[test]
fn who_let_this_run_is_answered_from_the_record_with_each_calls_arguments() {
    // The policy outlives the console's directory, as a user's does.
    let kept = Served::dir_with(&[("policy.json", POLICY)]);
    let policy = kept.path().join("policy.json");
    let mut served = Served::console(tempfile::tempdir().unwrap(), &["--policy", policy.to_str().unwrap()]);
    let agent = served.send_json(
        "batch.json",
        &batch(json!([
            {"id": "c1", "name": "read", "arguments": "{\"path\": \"notes.md\"}"},
            {"id": "c2", "name": "write", "arguments": "{\"path\": \"plan.md\"}"}
        ])),
    );
    served.sees().wait_for("approve once");
    served.screen().keys("y");
    let sent = agent.wait_with_output().unwrap();
    assert_eq!(sent.status.code(), Some(0), "{}", text(&sent.stdout));
    let records = served.quit();
    let journal = tempfile::NamedTempFile::new().unwrap();
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(journal.path(), lines.join("\n") + "\n").unwrap();

    let asked = tether(&[
        "replay",
        journal.path().to_str().unwrap(),
        "--headless",
        "--decided-by",
        "human",
    ]);
    let table = text(&asked.stdout);
    assert_eq!(asked.status.code(), Some(0), "{table}{}", text(&asked.stderr));
    assert!(!table.contains("CHANGED"), "{table}");
    let row = table
        .lines()
        .find(|l| l.contains("c2 "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("human@main"), "{row}");
    assert!(
        table.contains(r#"{"path": "plan.md"}"#),
        "the call's arguments are shown: {table}"
    );
    assert!(
        table.contains(&format!("now under policy {} (sha256", policy.display())),
        "the policy it was recorded under decides the replay: {table}"
    );
    assert!(
        !table.lines().any(|l| l.contains("c1 ")),
        "only what a human decided: {table}"
    );
}
