//! What a reviewer is told about who made a call that came through a hook
//! bridge (the real `tether serve --headless` and `tether hook claude-code`):
//! the agent is the Claude Code session, and `subagent` is null for the
//! agent's own calls (docs/policy.md), the subagent Claude Code named
//! otherwise (issue 48: the console's own root scope was given as the agent
//! and the session as a subagent).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/headless.rs"]
mod headless;

use std::process::Stdio;

use serde_json::{Value, json};

/// The reviewer's input for one hook call of `fixture`.
fn reviewed(fixture_name: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let policy = dir.path().join("policy.json");
    let reviewer = format!(
        r#"cat > {}; echo '{{"decision": "allow", "reason": "ok"}}'"#,
        seen.display()
    );
    let file = json!({
        "default": "allow",
        "reviewers": {"gate": {"command": reviewer}},
        "rules": [{"id": "shell-is-reviewed", "stage": "pre-execute", "match": {"tool": "Bash"},
                   "action": {"type": "review", "reviewer": "gate"}}],
    });
    std::fs::write(&policy, file.to_string()).unwrap();
    let socket = dir.path().join("console.sock");
    let mut command = headless::command(&socket, &["--answer", "reject", "--policy", policy.to_str().unwrap()]);
    command.stderr(Stdio::null());
    let (mut serve, _lines) = headless::start(command);
    let answer = bridge::hook_blocking("claude-code", &socket, &bridge::fixture(fixture_name), &[]);
    let _ = serve.kill();
    let _ = serve.wait();
    let answer = answer.json();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow", "{answer}");
    serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap()
}

#[test]
fn a_main_agent_call_is_told_to_the_reviewer_as_the_agents_own() {
    let given = reviewed("claude-code-pre-bash.json");
    assert_eq!(given["agent"], "claude-code 2cea18a0", "{given}");
    assert_eq!(given["subagent"], Value::Null, "the agent's own call: {given}");
    assert_eq!(given["scope"], "claude-code 2cea18a0", "{given}");
    assert_eq!(given["session"], "2cea18a0-d751-4751-bae6-205a5f69fa8a", "{given}");
}

#[test]
fn a_subagent_call_is_told_to_the_reviewer_with_the_subagent_claude_code_named() {
    let given = reviewed("claude-code-pre-bash-subagent.json");
    assert_eq!(given["agent"], "claude-code a535c193", "{given}");
    assert_eq!(given["subagent"]["agent_type"], "Explore", "{given}");
    assert_eq!(given["subagent"]["agent_id"], "aed64e52aca1f6d0c", "{given}");
}
