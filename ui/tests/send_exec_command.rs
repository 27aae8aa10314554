//! Codex's `exec_command` through the native socket, sent with the real
//! `tether send` to a real headless console (issue 47, review finding N16):
//! an argument that changes how the command runs, or one the reader does
//! not know, leaves the call covered by no allow — asked, and the console
//! rejects what is asked — while the arguments Codex 0.171.0's own schema
//! gives `exec_command` that change nothing the rule judged (`workdir`
//! aside, judged in `link_workdir.rs`) leave it allowed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

mod pty_support;
use pty_support::Served;

/// `echo` of anything runs unasked; everything else is asked.
const POLICY: &str = r#"{"default": "ask", "rules": [
  {"id": "echo-runs", "stage": "pre-execute",
   "match": {"tool": "exec_command", "command": ["echo *"]}, "action": {"type": "allow"}}
]}"#;

/// The outcome of each `exec_command` call with these arguments, by call
/// id (`c1`, `c2` …), as `tether send` printed it.
fn outcomes(calls: &[Value]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.json"), POLICY).unwrap();
    let console = Served::headless(dir, &["--answer", "reject", "--policy", "{dir}/policy.json"]);
    let batch = json!({
        "session": {"session_id": "s1"},
        "tools": [{"name": "exec_command", "description": "runs a command", "body": {"return": "ran"}}],
        "calls": calls.iter().enumerate().map(|(k, arguments)| json!({
            "id": format!("c{}", k + 1), "name": "exec_command", "arguments": arguments.to_string()
        })).collect::<Vec<_>>(),
    });
    let batch = console.write("batch.json", &batch.to_string());
    let output = console.send_output(&batch);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let mut lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    lines.sort_by_key(|l| {
        l["call_id"]
            .as_str()
            .unwrap()
            .trim_start_matches('c')
            .parse::<usize>()
            .unwrap()
    });
    assert_eq!(lines.len(), calls.len(), "{stdout}");
    lines
}

fn ran(outcome: &Value) -> bool {
    outcome["value"] == "ran" && outcome.get("code").is_none_or(Value::is_null)
}

#[test]
fn a_shell_tty_or_unknown_argument_is_asked_and_known_harmless_ones_are_not() {
    let asked = [
        // N16: fish reads the text otherwise; on a terminal a pager takes
        // later input.
        json!({"cmd": "echo hi", "shell": "fish"}),
        json!({"cmd": "echo hi", "shell": "/usr/bin/fish"}),
        json!({"cmd": "echo hi", "tty": true}),
        // Arguments no reader here knows may change what runs.
        json!({"cmd": "echo hi", "env": {"BASH_ENV": "/tmp/x"}}),
        json!({"cmd": "echo hi", "stdin": "rm -rf ~\n"}),
        json!({"cmd": "echo hi", "shell_args": ["-i"]}),
    ];
    let allowed = [
        json!({"cmd": "echo hi"}),
        // Every argument Codex 0.171.0's exec_command schema has but
        // `workdir`, as its model may send them.
        json!({"cmd": "echo hi", "shell": "/bin/bash", "tty": false, "login": true,
               "yield_time_ms": 1000, "max_output_tokens": 100,
               "sandbox_permissions": "require_escalated", "justification": "to say hi",
               "prefix_rule": ["echo"]}),
        // An earlier Codex's spelling of `sandbox_permissions`.
        json!({"cmd": "echo hi", "with_escalated_permissions": true}),
    ];
    let calls: Vec<Value> = asked.iter().chain(&allowed).cloned().collect();
    let outcomes = outcomes(&calls);
    for (arguments, outcome) in calls.iter().zip(&outcomes) {
        let should_run = allowed.contains(arguments);
        assert_eq!(ran(outcome), should_run, "{arguments} → {outcome}");
        if !should_run {
            assert_eq!(outcome["code"], "DENIED", "{arguments} → {outcome}");
        }
    }
}
