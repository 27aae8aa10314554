//! End to end in a real pseudo-terminal: an answer stays with the call it was
//! begun for, and quitting asks first when it would end something.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

mod pty_support;
use pty_support::*;

/// A batch of one asked call from agent `agent`.
fn one_call(dir: &Path, agent: usize) -> PathBuf {
    let batch = json!({
        "session": {"session_id": format!("agent-{agent}"), "owner": "you", "label": format!("agent{agent}")},
        "tools": [{"name": "poke", "description": "Pokes", "body": {"return": agent}}],
        "calls": [{"id": format!("a{agent}c0"), "name": "poke", "arguments": "{}"}],
    });
    let path = dir.join(format!("batch{agent}.json"));
    std::fs::write(&path, batch.to_string()).unwrap();
    path
}

struct Served {
    console: Console,
    socket: PathBuf,
    dir: tempfile::TempDir,
}

/// `tether serve` asking for every `poke`, with a short approval timeout.
fn serve(timeout: &str) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    let policy = dir.path().join("ask.json");
    std::fs::write(
        &policy,
        r#"{"rules": [{"id": "ask-poke", "stage": "pre-execute", "match": {"tool": "poke"}, "action": {"type": "ask", "reason": "pokes are asked"}}]}"#,
    )
    .unwrap();
    let args: Vec<String> = [
        "serve",
        "--socket",
        socket.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
        "--approval-timeout",
        timeout,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let console = Console::spawn(&args, true);
    console.wait_for("listening for agents");
    Served { console, socket, dir }
}

fn send(served: &Served, agent: usize) -> Child {
    let batch = one_call(served.dir.path(), agent);
    Command::new(env!("CARGO_BIN_EXE_tether"))
        .args([
            "send",
            batch.to_str().unwrap(),
            "--socket",
            served.socket.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A asks, the human starts answering A, B asks, A times out: whatever was
/// open for A closes with a notice, and its closing key answers nothing.
fn a_times_out_under(begin: &str, finish: &str, lost: &str) {
    let mut served = serve("6");
    let a = send(&served, 0);
    served.console.wait_for("a0c0");
    served.console.keys(begin);
    // B asks half-way through A's wait, so it still waits when A times out.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let b = send(&served, 1);
    served.console.wait_for("Approval 1 of 2");
    let screen = served.console.wait_for(lost);
    assert!(
        screen.contains("a0c0) closed unanswered (no answer in 6 s)"),
        "{screen}"
    );
    assert!(screen.contains("a1c0"), "B's request is on screen now:\n{screen}");
    // The key that would have finished A's answer, typed at once.
    served.console.keys_now(finish);
    std::thread::sleep(std::time::Duration::from_millis(600));
    let screen = served.console.contents();
    assert!(
        screen.contains("Approval 1 of 1") && screen.contains("a1c0"),
        "B still waits:\n{screen}"
    );
    served.console.keys("y");
    served.console.wait_gone("Approval 1 of 1");
    let journal = served.console.quit();
    assert_eq!(outcome(a)["code"], "UNAVAILABLE");
    let b = outcome(b);
    assert_eq!(b["code"], Value::Null, "B was approved by its own y: {b}");
    let text = journal.iter().map(Value::to_string).collect::<String>();
    assert!(!text.contains("meant for A"), "A's reason reached no record: {text}");
}

#[test]
fn a_reason_begun_for_a_call_that_timed_out_never_rejects_the_next() {
    a_times_out_under("nreason meant for A", "\x13", "your reason was not sent");
}

#[test]
fn the_always_picker_of_a_call_that_timed_out_never_adds_a_rule_for_the_next() {
    a_times_out_under("a", "\r", "no always-rule was added");
}

#[test]
fn q_with_an_agent_waiting_asks_first_and_y_or_another_key_stays() {
    let mut served = serve("60");
    let a = send(&served, 0);
    served.console.wait_for("a0c0");
    served.console.keys("q");
    let screen = served.console.wait_for(QUIT_QUESTION);
    assert!(screen.contains("1 approval waiting"), "{screen}");
    // `y`, the approve key a hand is already on, neither quits nor answers.
    served.console.keys("y");
    served.console.wait_gone(QUIT_QUESTION);
    assert!(served.console.child.try_wait().unwrap().is_none(), "still running");
    served.console.keys("q");
    served.console.wait_for(QUIT_QUESTION);
    served.console.keys("j");
    served.console.wait_gone(QUIT_QUESTION);
    assert!(served.console.child.try_wait().unwrap().is_none(), "still running");
    let journal = served.console.quit();
    assert_eq!(outcome(a)["code"], "UNAVAILABLE");
    assert!(journal.iter().any(|e| e["event"] == "tool/result"));
}
