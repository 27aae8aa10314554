//! A rule kept at the console outlasts the agent session that made it
//! (issue 48): the real Claude Code, run twice in one project against the
//! scripted model, is asked once; the rule the human keeps (`a`, `s`) is
//! scoped to the agent and the project, never the session, and its "exactly
//! this command" ignores the free-text `description` Claude Code writes
//! anew each time. The CLIs are found as `hooks_real_agents.rs` says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[allow(dead_code)]
#[path = "hook_support/mock_model.rs"]
mod mock_model;
#[path = "hook_support/on_screen.rs"]
mod on_screen;
#[path = "pty_support/mod.rs"]
mod pty_support;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use real_agents::Agent;
use serde_json::{Value, json};

/// Every Bash call is asked.
const ASK_BASH: &str = r#"{"rules": [
  {"id": "ask-bash", "stage": "pre-execute", "match": {"tool": "Bash"}, "action": {"type": "ask", "reason": "a command runs"}}
]}"#;

const COMMAND: &str = "echo kept >> kept.txt";

fn bash(agent: Agent, description: &str) -> Value {
    match agent {
        Agent::ClaudeCode => json!({"name": "Bash", "input": {"command": COMMAND, "description": description}}),
        Agent::Codex => json!({"name": "exec_command", "arguments": {"cmd": COMMAND}}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_kept_in_one_claude_code_session_spares_the_next_session_in_the_project() {
    kept_in_one_session_spares_the_next(Agent::ClaudeCode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_kept_in_one_codex_session_spares_the_next_session_in_the_project() {
    kept_in_one_session_spares_the_next(Agent::Codex).await;
}

async fn kept_in_one_session_spares_the_next(agent: Agent) {
    let steps = [
        bash(agent, "append a line"),
        bash(agent, "add one more line to the file"),
    ];
    let keep = |console: &mut pty_support::Console| {
        console.wait_until("the whole prompt", |s| {
            s.contains("Approval 1 of 1") && s.contains("(or a wider rule)")
        });
        console.keys("a");
        console.wait_for("Approve always: which rule?");
        console.keys("s"); // the narrowest, exactly this command, kept
        console.wait_for("rule kept in");
    };
    let Some(runs) = on_screen::two_runs_on_screen(agent, ASK_BASH, steps, "20", keep).await else {
        return;
    };
    let explain = || format!("{:#?}\n{}\n{}", runs.journal, runs.outputs[0], runs.outputs[1]);
    let written = std::fs::read_to_string(runs.project().join("kept.txt")).unwrap_or_default();
    assert_eq!(written, "kept\nkept\n", "both runs ran the command: {}", explain());
    let sessions: Vec<&str> = runs
        .journal
        .iter()
        .filter(|e| e["event"] == "tool/call")
        .filter_map(|e| e["scope"]["session_id"].as_str())
        .collect();
    let (first, second) = (sessions[0], *sessions.last().unwrap());
    assert_ne!(first, second, "two agent sessions: {}", explain());
    // In order: the first session's call, answered at the console; the
    // second's, decided by the kept rule without asking.
    let decided: Vec<&str> = runs
        .journal
        .iter()
        .filter(|e| e["event"] == "tool/result")
        .filter_map(|e| e["decided_by"].as_str())
        .collect();
    assert_eq!(decided.len(), 2, "{}", explain());
    assert!(decided[0].starts_with("human"), "{decided:?}");
    assert!(
        decided[1].starts_with("rule:always-bash-"),
        "the second session is decided by the kept rule, never asked: {decided:?}\n{}",
        explain()
    );
    let policy = std::fs::read_to_string(runs.dir.path().join("policy.json")).unwrap();
    let project = runs.project().display().to_string();
    let name = match agent {
        Agent::ClaudeCode => "claude-code",
        Agent::Codex => "codex",
    };
    assert!(policy.contains(&format!(r#""agent":"{name}""#)), "{policy}");
    assert!(
        policy.contains(&format!(r#""cwd_within":[{}]"#, json!(project))),
        "scoped to the project:\n{policy}"
    );
    assert!(!policy.contains(first), "never the session:\n{policy}");
    assert!(
        !policy.contains("append a line"),
        "the command, not the description:\n{policy}"
    );
}
