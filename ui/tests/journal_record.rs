//! The journal keeps what was true when a call was decided: the tools'
//! declarations, the policy in force (and every change of it), the real
//! wait; a replay of it is judged against that record.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

mod pty_support;
use pty_support::{Served, demo};

const ALLOW_ALL: &str = r#"{"rules": [{"id": "allow-all", "stage": "pre-execute", "match": {"tool": "*"}, "action": {"type": "allow"}}]}"#;

fn tether(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether")).args(args).output().unwrap()
}

fn records(journal: &Path) -> Vec<Value> {
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `demos/batch.send.json` sent to `tether serve --journal DIR/j.jsonl ARGS`
/// (approving every ask), the console stopped again.
fn recorded_demo_batch(dir: tempfile::TempDir, args: &[&str]) -> Served {
    let mut all = vec!["--answer", "approve", "--journal", "{dir}/j.jsonl"];
    all.extend(args);
    let mut served = Served::headless(dir, &all);
    let sent = served.send_output(Path::new(&demo("batch.send.json")));
    assert_eq!(sent.status.code(), Some(1), "c4 fails: {}", text(&sent.stdout));
    served.stop();
    served
}

#[test]
fn a_replayed_journal_checks_calls_against_the_schemas_they_were_declared_with() {
    let served = recorded_demo_batch(Served::dir_with(&[("allow.json", ALLOW_ALL)]), &["--policy", "{dir}/allow.json"]);
    let journal = served.path("j.jsonl");
    let policy = served.path("allow.json");
    let declared: Vec<Value> = records(&journal)
        .into_iter()
        .filter(|r| r["event"] == "tool/declared")
        .collect();
    let lookup = declared.iter().find(|d| d["name"] == "lookup").expect("lookup is declared");
    assert_eq!(lookup["parameters"]["required"][0], "word", "{lookup}");
    assert_eq!(lookup["concurrency"], "always", "{lookup}");
    assert_eq!(lookup["scope"]["label"], "script");
    assert_eq!(declared.len(), 2, "each tool once: {declared:#?}");

    let replayed = tether(&[
        "replay",
        journal.to_str().unwrap(),
        "--headless",
        "--policy",
        policy.to_str().unwrap(),
    ]);
    let table = text(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "nothing changed:\n{table}");
    assert!(!table.contains("CHANGED"), "{table}");
    let row = |call: &str| -> Vec<String> {
        let line = table.lines().find(|l| l.split_whitespace().nth(1) == Some(call)).unwrap();
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(row("c4")[4..8], ["INVALID_ARGS", "schema", "INVALID_ARGS", "schema"], "{table}");
    assert_eq!(row("c1")[3], "PAR", "the recorded concurrency rule classifies c1:\n{table}");
}
