//! End to end in a real pseudo-terminal (issue 48): Claude Code runs an
//! agent session's independent tool calls in parallel, each through its own
//! `tether hook` process; `Y` offers every waiting call of that session,
//! listed before `Enter`, and none of another session; the queue line says
//! what each waiting call runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Child;

use serde_json::{Value, json};

#[path = "hook_support/bridge.rs"]
mod bridge;
mod pty_support;
use pty_support::*;

/// The payload the real Claude Code sent for a `Bash` call, with this
/// session, call id and command.
fn payload(session: &str, call: &str, command: &str) -> String {
    let mut payload: Value = serde_json::from_str(&bridge::fixture("claude-code-pre-bash.json")).unwrap();
    payload["session_id"] = json!(session);
    payload["tool_use_id"] = json!(call);
    payload["tool_input"]["command"] = json!(command);
    payload.to_string()
}

/// `tether hook claude-code` started with `input` on its stdin.
fn hook(socket: &Path, input: &str) -> Child {
    bridge::start("claude-code", socket, input, &[])
}

/// What the bridge told Claude Code: `allow`, `deny` or `ask`.
fn decision(child: Child) -> String {
    bridge::finish(child).decision()
}

const SESSION: &str = "sess-a";
const OTHER: &str = "sess-b";

#[test]
fn y_answers_every_waiting_call_of_the_agent_session_and_no_other() {
    let mut served = Served::asking("Bash", &[]);
    let socket = served.socket.clone();
    // Three parallel calls of one session, started together, and one of
    // another session between them.
    let ours: Vec<Child> = [("toolu_1", "ls one"), ("toolu_2", "ls two"), ("toolu_3", "ls three")]
        .iter()
        .map(|(call, command)| hook(&socket, &payload(SESSION, call, command)))
        .collect();
    let theirs = hook(&socket, &payload(OTHER, "toolu_9", "rm -rf build"));
    let screen = served.screen();
    let prompt = screen.wait_for("Approval 1 of 4");
    let prompt = if prompt.contains("Waiting next") {
        prompt
    } else {
        screen.wait_for("Waiting next")
    };
    // The head shows its arguments; the queue line each other's command
    // (a long line wraps: its start is enough).
    for (command, start) in [
        ("ls one", "`ls one`"),
        ("ls two", "`ls two`"),
        ("ls three", "`ls three`"),
        ("rm -rf build", "`rm -rf build`"),
    ] {
        let at_head = prompt.contains(&format!("\"command\": \"{command}\""));
        assert!(
            at_head || prompt.contains(start),
            "the queue line shows each waiting call's command ({command}):\n{prompt}"
        );
    }
    let head_is_ours = !prompt.contains("\"command\": \"rm -rf build\"");
    if !head_is_ours {
        screen.keys("\x1b"); // reject the other session's call first
        screen.wait_for("Approval 1 of 3");
    }
    screen.wait_for("approve all 3 waiting calls of agent session");
    screen.keys("Y");
    let list = screen.wait_for("Approve 3 waiting calls of agent session sess-a");
    for command in ["ls one", "ls two", "ls three"] {
        assert!(list.contains(command), "{command} listed:\n{list}");
    }
    assert!(!list.contains("rm -rf build"), "another session is not listed:\n{list}");
    screen.keys("\r");
    if head_is_ours {
        let left = screen.wait_for("Approval 1 of 1");
        assert!(left.contains("rm -rf build"), "{left}");
        screen.keys("\x1b");
    }
    for child in ours {
        assert_eq!(decision(child), "allow");
    }
    assert_eq!(decision(theirs), "deny", "the other session's call is its own answer");
    let journal = served.quit();
    let grouped = journal
        .iter()
        .filter(|e| e["event"] == "tool/result" && e["group_of"] == 3)
        .count();
    assert_eq!(grouped, 3, "each call's record says it was one of three: {journal:#?}");
}
