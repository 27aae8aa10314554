//! End to end in a real pseudo-terminal: an answer stays with the call it was
//! begun for, and quitting asks first when it would end something.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Child;

use serde_json::{Value, json};

mod pty_support;
use pty_support::*;

/// A batch of one asked call from agent `agent`, sent.
fn send(served: &Served, agent: usize) -> Child {
    let batch = json!({
        "session": {"session_id": format!("agent-{agent}"), "owner": "you", "label": format!("agent{agent}")},
        "tools": [{"name": "poke", "description": "Pokes", "body": {"return": agent}}],
        "calls": [{"id": format!("a{agent}c0"), "name": "poke", "arguments": "{}"}],
    });
    served.send_json(&format!("batch{agent}.json"), &batch)
}

/// `tether serve` asking for every `poke`, with a short approval timeout.
fn serve(timeout: &str) -> Served {
    Served::asking("poke", &["--approval-timeout", timeout])
}

/// A asks, the human starts answering A, B asks, A times out: whatever was
/// open for A closes with a notice, and its closing key answers nothing.
fn a_times_out_under(begin: &str, finish: &str, lost: &str) {
    let mut served = serve("6");
    let a = send(&served, 0);
    served.screen().wait_for("a0c0");
    served.screen().keys(begin);
    // B asks half-way through A's wait, so it still waits when A times out.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let b = send(&served, 1);
    served.screen().wait_for("Approval 1 of 2");
    let screen = served.screen().wait_for(lost);
    assert!(
        screen.contains("a0c0) closed unanswered (no answer in 6 s)"),
        "{screen}"
    );
    assert!(screen.contains("a1c0"), "B's request is on screen now:\n{screen}");
    // The key that would have finished A's answer, typed at once.
    served.screen().keys_now(finish);
    std::thread::sleep(std::time::Duration::from_millis(600));
    let screen = served.screen().contents();
    assert!(
        screen.contains("Approval 1 of 1") && screen.contains("a1c0"),
        "B still waits:\n{screen}"
    );
    served.screen().keys("y");
    served.screen().wait_gone("Approval 1 of 1");
    let journal = served.quit();
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
    served.screen().wait_for("a0c0");
    served.screen().keys("q");
    let screen = served.screen().wait_for(QUIT_QUESTION);
    assert!(screen.contains("1 approval waiting"), "{screen}");
    // `y`, the approve key a hand is already on, neither quits nor answers.
    served.screen().keys("y");
    served.screen().wait_gone(QUIT_QUESTION);
    assert!(served.screen().child.try_wait().unwrap().is_none(), "still running");
    served.screen().keys("q");
    served.screen().wait_for(QUIT_QUESTION);
    served.screen().keys("j");
    served.screen().wait_gone(QUIT_QUESTION);
    assert!(served.screen().child.try_wait().unwrap().is_none(), "still running");
    let journal = served.quit();
    assert_eq!(outcome(a)["code"], "UNAVAILABLE");
    assert!(journal.iter().any(|e| e["event"] == "tool/result"));
}
