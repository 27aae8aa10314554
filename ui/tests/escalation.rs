//! Unanswered calls are reminded, escalated to a second person, then fail
//! UNAVAILABLE saying nobody answered (`tether serve --remind-after
//! --escalate-after --escalate-cmd`), through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod pty_support;
use pty_support::*;

fn events_in(file: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn an_unanswered_call_is_reminded_escalated_then_unavailable_because_nobody_answered() {
    let dir = Served::dir_with(&[("ask.json", &asking("poke", "pokes are asked"))]);
    let notify = format!("cat >> {}/notify.jsonl", dir.path().display());
    let escalate = format!("cat >> {}/escalated.jsonl", dir.path().display());
    let served = Served::headless(
        dir,
        &[
            "--policy",
            "{dir}/ask.json",
            "--answer",
            "attached",
            "--attach",
            "--approval-timeout",
            "3",
            "--remind-after",
            "1s",
            "--escalate-after",
            "2s",
            "--notify-cmd",
            &notify,
            "--escalate-cmd",
            &escalate,
        ],
    );
    let started = Instant::now();
    let agent = served.send_json(
        "poke.json",
        &json!({"session": {"session_id": "s1"}, "tools": [{"name": "poke", "body": {"return": 1}}],
                "calls": [{"id": "c1", "name": "poke", "arguments": "{}"}]}),
    );
    let got = outcome(agent);
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert_eq!(got["code"], "UNAVAILABLE", "{got}");
    assert_eq!(
        got["value"]["message"], "approval timed out: nobody answered within 3 s",
        "{got}"
    );
    // The commands run detached: give them a moment to write.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (told, escalated) = loop {
        let told = events_in(&served.path("notify.jsonl"));
        let escalated = events_in(&served.path("escalated.jsonl"));
        if told.len() >= 3 && !escalated.is_empty() {
            break (told, escalated);
        }
        assert!(Instant::now() < deadline, "{told:#?} {escalated:#?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let names: Vec<&str> = told.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["approval/waiting", "approval/reminder", "approval/closed"]);
    let left = told[1]["expires_in_ms"].as_u64().unwrap();
    assert!((1_500..=2_100).contains(&left), "reminded after 1 s: {left} ms left");
    assert_eq!(told[2]["answer"], "timed out");
    assert_eq!(escalated.len(), 1, "{escalated:#?}");
    assert_eq!(escalated[0]["event"], "approval/escalated");
    assert_eq!(escalated[0]["call_id"], "c1");
    let left = escalated[0]["expires_in_ms"].as_u64().unwrap();
    assert!(left <= 1_100, "escalated after 2 s: {left} ms left");
}

#[test]
fn a_duration_that_is_not_one_is_refused() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--headless", "--remind-after", "soon"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a duration"));
}

#[test]
fn a_rule_may_set_its_own_wait_and_tether_check_refuses_one_that_is_not_a_duration() {
    let policy = r#"{"rules": [{"id": "ask-poke", "stage": "pre-execute", "match": {"tool": "poke"},
                     "action": {"type": "ask", "reason": "quick", "timeout": "1s"}}]}"#;
    let bad = r#"{"rules": [{"id": "ask-poke", "stage": "pre-execute", "match": {"tool": "poke"},
                  "action": {"type": "ask", "timeout": "soon"}}]}"#;
    let dir = Served::dir_with(&[("ask.json", policy), ("bad.json", bad)]);
    let checked = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("check")
        .arg(dir.path().join("bad.json"))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(!checked.status.success(), "{said}");
    assert!(said.contains("\"timeout\"?: \"10m\""), "{said}");
    let served = Served::headless(
        dir,
        &[
            "--policy",
            "{dir}/ask.json",
            "--answer",
            "attached",
            "--attach",
            "--approval-timeout",
            "60",
        ],
    );
    let started = Instant::now();
    let agent = served.send_json(
        "poke.json",
        &json!({"session": {"session_id": "s1"}, "tools": [{"name": "poke", "body": {"return": 1}}],
                "calls": [{"id": "c1", "name": "poke", "arguments": "{}"}]}),
    );
    let got = outcome(agent);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the rule's 1 s, not the console's 60 s"
    );
    assert_eq!(got["code"], "UNAVAILABLE", "{got}");
    assert_eq!(
        got["value"]["message"],
        "approval timed out: nobody answered within 1 s"
    );
}
