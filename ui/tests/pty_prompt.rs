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

/// How long A waits: long enough for B to ask and for keys to be typed on
/// a loaded machine, short enough for a test.
const A_WAITS: &str = "8s";

/// `tether serve` asking for every `poke`: agent0's calls wait [`A_WAITS`],
/// agent1's a minute, so B never times out before the test answers it.
fn serve_a_and_b() -> Served {
    let ask = |agent: &str, timeout: &str| {
        json!({"id": format!("ask-{agent}"), "stage": "pre-execute",
            "match": {"tool": "poke", "agent": agent},
            "action": {"type": "ask", "reason": "poke is asked", "timeout": timeout}})
    };
    let policy = json!({"rules": [ask("agent0", A_WAITS), ask("agent1", "60s")]});
    let dir = Served::dir_with(&[("ask.json", &policy.to_string())]);
    Served::console(dir, &["--policy", "{dir}/ask.json"])
}

/// A asks, the human starts answering A (`begin`, until `open` shows), B
/// asks, A times out: whatever was open for A closes with a notice, and its
/// closing key answers nothing.
fn a_times_out_under(begin: &str, open: &str, finish: &str, lost: &str) {
    let mut served = serve_a_and_b();
    let a = send(&served, 0);
    // The prompt, not the call's row: a key typed before the prompt is up
    // goes to the batch pane.
    served.screen().wait_for_prompt("a0c0");
    served.screen().keys(begin);
    served.screen().wait_for(open);
    let b = send(&served, 1);
    let screen = served.screen().wait_until("B queued behind A", |s| {
        s.contains("Approval 1 of 2") || s.contains("closed unanswered")
    });
    assert!(
        screen.contains("Approval 1 of 2"),
        "A timed out before B asked ({A_WAITS} was too short for this machine):\n{screen}"
    );
    let screen = served.screen().wait_for(lost);
    assert!(
        screen.contains("a0c0) closed unanswered (no answer in 8 s)"),
        "{screen}"
    );
    assert!(
        screen.contains("Call      a1c0"),
        "B's request is on screen now:\n{screen}"
    );
    // The key that would have finished A's answer, typed at once.
    served.screen().keys_now(finish);
    std::thread::sleep(std::time::Duration::from_millis(600));
    let screen = served.screen().contents();
    assert!(
        screen.contains("Approval 1 of 1") && screen.contains("Call      a1c0"),
        "B still waits:\n{screen}"
    );
    served.screen().keys("y");
    let screen = served.screen().wait_gone("Approval 1 of 1");
    assert!(!screen.contains("rule added"), "{screen}");
    // B's outcome before quitting: B runs in its agent after the approval,
    // and quitting first would cancel it (seen under load: `ABORTED`).
    let b = outcome(b);
    assert_eq!(b["code"], Value::Null, "B was approved by its own y: {b}");
    assert_eq!(outcome(a)["code"], "UNAVAILABLE");
    let journal = served.quit();
    let b = result(&journal, "a1c0");
    assert_eq!(
        (&b["decided_by"], &b["answer"]),
        (&json!("human@main"), &json!("approved")),
        "B was answered by its own y, not by a rule or a reason of A's: {b}"
    );
    let text = journal.iter().map(Value::to_string).collect::<String>();
    assert!(!text.contains("meant for A"), "A's reason reached no record: {text}");
}

#[test]
fn a_reason_begun_for_a_call_that_timed_out_never_rejects_the_next() {
    a_times_out_under(
        "nreason meant for A",
        "reason meant for A",
        "\x13",
        "your reason was not sent",
    );
}

#[test]
fn the_always_picker_of_a_call_that_timed_out_never_adds_a_rule_for_the_next() {
    a_times_out_under("a", "Approve always: which rule?", "\r", "no always-rule was added");
}

#[test]
fn q_with_an_agent_waiting_asks_first_and_y_or_another_key_stays() {
    let mut served = serve("60");
    let a = send(&served, 0);
    served.screen().wait_for_prompt("a0c0");
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
