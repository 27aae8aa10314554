//! Where a shell command really runs (issue 47, item 9): Codex's
//! `exec_command` takes a `workdir`; a command is judged from there, paths
//! and `within cwd` conditions alike, not from the session's cwd. With the
//! real Codex (its hook input) and on the link.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/mock_model.rs"]
#[allow(dead_code)]
mod mock_model;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use real_agents::*;
use serde_json::{Value, json};

/// `cat` of a file inside the working directory runs unasked; anything
/// else is asked (and the console rejects what is asked).
const READS_IN_CWD: &str = r#"{"default": "ask", "rules": [
  {"id": "reads-in-cwd", "stage": "pre-execute",
   "match": {"command": ["cat *"], "command_paths_within": "cwd"}, "action": {"type": "allow"}}
]}"#;

/// What Codex 0.171.0 tells its hook when the model gives `exec_command` a
/// `workdir`: the hook input's `cwd` is that directory (resolved: `..`
/// taken), and `tool_input` holds only the command. The session's own cwd
/// is in its transcript (`session_meta`). The console judges the call from
/// the workdir, against the project: inside it, `notes.txt` is
/// `sub/notes.txt` and a read there runs unasked.
#[tokio::test]
async fn codex_exec_command_in_a_workdir_inside_the_project_is_judged_there() {
    let step =
        json!({"name": "exec_command", "arguments": {"cmd": "cat notes.txt", "workdir": "@PROJECT@/sub/../sub"}});
    let Some(run) = run_under(READS_IN_CWD, CODEX_EXEC, Agent::Codex, Console::Answer("reject"), step).await else {
        return;
    };
    let calls: Vec<Value> = run
        .journal()
        .into_iter()
        .filter(|r| r["event"] == "tool/call")
        .collect();
    assert_eq!(calls.len(), 1, "{}", run.explain());
    let (project, sub) = (run.project(), run.project().join("sub"));
    assert_eq!(
        calls[0]["invocation_context"],
        json!({"cwd": project, "workdir": sub}),
        "{calls:?}"
    );
    let arguments: Value = serde_json::from_str(calls[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(
        arguments,
        json!({"command": "cat notes.txt"}),
        "no workdir in tool_input"
    );
    assert_eq!(run.decisions[0]["decided_by"], "rule:reads-in-cwd", "{}", run.explain());
}

/// A workdir outside the project (`/`) does not take "within cwd" with it:
/// `cat notes.txt` there reads `/notes.txt`, and is asked (the console
/// rejects), where it ran unasked when the hook's cwd was the project.
#[tokio::test]
async fn codex_exec_command_in_a_workdir_outside_the_project_is_asked() {
    let step = json!({"name": "exec_command", "arguments": {"cmd": "cat notes.txt", "workdir": "/"}});
    let Some(run) = run_under(READS_IN_CWD, CODEX_EXEC, Agent::Codex, Console::Answer("reject"), step).await else {
        return;
    };
    let pre = run
        .decisions
        .iter()
        .find(|d| d["hook"] == "PreToolUse")
        .unwrap_or_else(|| panic!("{}", run.explain()));
    assert_eq!(pre["code"], "DENIED", "{}", run.explain());
    assert_eq!(pre["decided_by"], "script", "asked, and rejected: {}", run.explain());
}
