//! An `exec_command` argument outside Codex's schema, with the real Codex
//! 0.171.0 and its hook (issue 47): Codex drops it — its hook input holds
//! the command alone, and what runs is that command, nothing the argument
//! asked for. So on the bridge nothing unread runs; on the link, where the
//! console sees the arguments themselves, such a call is asked
//! (`send_exec_command.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/mock_model.rs"]
#[allow(dead_code)]
mod mock_model;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use real_agents::*;
use serde_json::{Value, json};

/// `echo` runs unasked; anything else is asked (and rejected).
const ECHO_RUNS: &str = r#"{"default": "ask", "rules": [
  {"id": "echo-runs", "stage": "pre-execute",
   "match": {"command": ["echo *"]}, "action": {"type": "allow"}}
]}"#;

const INJECTED: &str = "INJECTED-BY-BASH-ENV";

#[tokio::test]
async fn codex_drops_an_argument_outside_its_schema_and_its_hook_sees_the_command_alone() {
    // Were `env` honoured, bash (not a login shell) would source BASH_ENV
    // first, and the model would read what it prints.
    let scratch = tempfile::tempdir().unwrap();
    let script = scratch.path().join("env.sh");
    std::fs::write(&script, format!("echo {INJECTED}\n")).unwrap();
    let step = json!({"name": "exec_command", "arguments": {
        "cmd": "echo hi", "shell": "/bin/bash", "login": false,
        "env": {"BASH_ENV": script}, "stdin": "touch stdin-ran\n"
    }});
    let Some(run) = run_under(ECHO_RUNS, CODEX_EXEC, Agent::Codex, Console::Answer("reject"), step).await else {
        return;
    };
    let calls: Vec<Value> = run
        .journal()
        .into_iter()
        .filter(|r| r["event"] == "tool/call")
        .collect();
    assert_eq!(calls.len(), 1, "{}", run.explain());
    let arguments: Value = serde_json::from_str(calls[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(
        arguments,
        json!({"command": "echo hi"}),
        "the hook sees the command alone"
    );
    assert_eq!(run.decisions[0]["decided_by"], "rule:echo-runs", "{}", run.explain());
    // It ran as judged: the argument changed nothing.
    assert!(run.model_saw("hi\\n"), "{}", run.explain());
    assert!(!run.model_saw(INJECTED), "{}", run.explain());
    assert!(!run.file_exists("stdin-ran"), "{}", run.explain());
}
