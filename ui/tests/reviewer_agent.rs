//! What a reviewer is told about who made a call that came through a hook
//! bridge (the real `tether serve --headless` and `tether hook claude-code`):
//! the agent is the Claude Code session, and `subagent` is null for the
//! agent's own calls (docs/policy.md), the subagent Claude Code named
//! otherwise (issue 48: the console's own root scope was given as the agent
//! and the session as a subagent).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).unwrap()
}

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
    let mut serve = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--headless", "--answer", "reject", "--socket"])
        .arg(&socket)
        .arg("--policy")
        .arg(&policy)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(serve.stdout.take().unwrap());
    let mut line = String::new();
    lines.read_line(&mut line).unwrap();
    assert!(line.contains("listening"), "{line}");
    let mut hook = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["hook", "claude-code", "--socket"])
        .arg(&socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(fixture(fixture_name).as_bytes())
        .unwrap();
    let answer = hook.wait_with_output().unwrap();
    let _ = serve.kill();
    let _ = serve.wait();
    let answer: Value = serde_json::from_slice(&answer.stdout).unwrap();
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
