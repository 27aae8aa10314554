//! End to end in a real pseudo-terminal (issue 34): a batch answered at once
//! (`Y` then `Enter`; `N`, a reason, `Ctrl+S`, `Enter`), with a call of the
//! same batch that starts waiting later left to its own prompt; and a
//! subagent's call, from the payload the real Claude Code sent, shown as
//! such on an 80×24 screen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

#[path = "hook_support/bridge.rs"]
mod bridge;
mod pty_support;
use pty_support::*;

/// Every `write` and every `Bash` call is asked.
const ASK: &str = r#"{"rules": [
  {"id": "ask-writes", "stage": "pre-execute", "match": {"tool": "{write,Bash}"}, "action": {"type": "ask", "reason": "a file changes"}}
]}"#;

/// Three parallel writes, then an exclusive one: the fourth starts waiting
/// only once the first three are answered.
fn batch() -> String {
    let write = |id: &str, path: &str| json!({"id": id, "name": "write", "arguments": {"path": path}});
    json!({
        "session": {"session_id": "agent-1", "owner": "you", "label": "agent1"},
        "tools": [
            {"name": "write", "description": "Writes", "concurrency": "always", "body": {"return": "written"}},
            {"name": "commit", "description": "Commits", "body": {"return": "committed"}}
        ],
        "calls": [write("w1", "a.txt"), write("w2", "b.txt"), write("w3", "c.txt"),
                  {"id": "k4", "name": "commit", "arguments": {}}],
    })
    .to_string()
}

fn served() -> Served {
    let dir = Served::dir_with(&[("ask.json", ASK), ("batch.json", &batch())]);
    let policy = dir.path().join("ask.json").display().to_string();
    // `commit` is asked too, after the writes.
    std::fs::write(
        dir.path().join("ask.json"),
        ASK.replace("{write,Bash}", "{write,Bash,commit}"),
    )
    .unwrap();
    Served::console(dir, &["--policy", &policy])
}

/// The journal as written so far (each record is flushed as it is made).
fn journal(console: &Console) -> Vec<Value> {
    std::fs::read_to_string(&console.journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn results(journal: &[Value]) -> Vec<&Value> {
    journal.iter().filter(|e| e["event"] == "tool/result").collect()
}

#[test]
fn y_then_enter_approves_the_waiting_calls_of_the_batch_and_not_the_one_that_asks_later() {
    let mut served = served();
    let send = served.send(&served.path("batch.json"));
    let screen = served.screen();
    screen.wait_for("Approval 1 of 3");
    let prompt = screen.wait_for("approve all 3 waiting calls");
    assert!(prompt.contains("Y"), "{prompt}");
    screen.keys("Y");
    let list = screen.wait_for("Approve 3 waiting calls of agent session agent-1");
    for id in ["(w1)", "(w2)", "(w3)"] {
        assert!(list.contains(id), "{id} listed:\n{list}");
    }
    assert!(!list.contains("(k4)"), "the later call is not listed:\n{list}");
    screen.keys("\r");
    // The exclusive call starts waiting only now: a prompt of its own.
    let next = screen.wait_for("Approval 1 of 1");
    assert!(next.contains("k4"), "{next}");
    assert!(!next.contains("approve all"), "one call waits: no Y offered\n{next}");
    screen.keys("y");
    screen.wait_gone("Approval 1 of 1");
    let output = send.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let journal = journal(served.screen());
    let results = results(&journal);
    for id in ["w1", "w2", "w3"] {
        let line = results.iter().find(|r| r["call_id"] == id).unwrap();
        assert_eq!(
            (&line["code"], &line["answer"], &line["group_of"], &line["decided_by"]),
            (&Value::Null, &json!("approved"), &json!(3), &json!("human@main")),
            "{line}"
        );
    }
    let later = results.iter().find(|r| r["call_id"] == "k4").unwrap();
    assert_eq!(later["answer"], "approved");
    assert!(later.get("group_of").is_none(), "answered on its own: {later}");
}

#[test]
fn n_a_reason_ctrl_s_and_enter_reject_the_batchs_waiting_calls_with_that_reason() {
    let mut served = served();
    let send = served.send(&served.path("batch.json"));
    let screen = served.screen();
    screen.wait_for("approve all 3 waiting calls");
    screen.keys("N");
    screen.wait_for("Reason for all 3 waiting calls of agent session agent-1");
    screen.keys("not in this repo");
    screen.keys("\x13");
    let list = screen.wait_for("Reject 3 waiting calls of agent session agent-1");
    assert!(list.contains("not in this repo"), "the reason is shown:\n{list}");
    screen.keys("\r");
    // The writes are rejected; the commit after them still asks.
    let next = screen.wait_for("Approval 1 of 1");
    assert!(next.contains("k4"), "{next}");
    screen.keys("\x1b");
    screen.wait_gone("Approval 1 of 1");
    let output = send.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        printed.matches("not in this repo").count(),
        3,
        "each model reads it:\n{printed}"
    );
    let journal = journal(served.screen());
    for id in ["w1", "w2", "w3"] {
        let line = result(&journal, id);
        assert_eq!(
            (&line["code"], &line["reason"], &line["group_of"]),
            (&json!("DENIED"), &json!("not in this repo"), &json!(3)),
            "{line}"
        );
    }
}

/// The hook payload the real Claude Code sent for its `Explore` subagent's
/// `Bash` call, into `tether serve` at 80×24: the prompt says which
/// subagent asks, and after the answer the batch and detail panes do.
#[test]
fn a_subagents_call_is_shown_as_the_subagents_at_80x24() {
    let dir = Served::dir_with(&[("ask.json", ASK)]);
    let policy = dir.path().join("ask.json").display().to_string();
    let mut served = Served::console_sized(dir, &["--policy", &policy], Some((24, 80)));
    let hook = bridge::start(
        "claude-code",
        &served.socket,
        &bridge::fixture("claude-code-pre-bash-subagent.json"),
        &[],
    );
    let screen = served.screen();
    // The prompt itself: the detail pane says the same of the batch's row a
    // frame before the request is asked, and a key typed then answers nothing.
    let prompt = screen.wait_until("the prompt", |s| {
        s.contains("Approval 1 of 1") && s.contains("subagent Explore 6d0c")
    });
    assert!(prompt.contains("Via"), "{prompt}");
    screen.keys("y");
    // The screen first: if the key was not taken, it says why.
    let panes = screen.wait_gone("Approval 1 of 1");
    let answer = bridge::finish(hook).json();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow");
    assert!(panes.contains("via subagent Explore"), "the batch says it:\n{panes}");
}
