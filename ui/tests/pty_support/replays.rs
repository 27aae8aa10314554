//! Scenarios a test writes for itself and replays in the terminal.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::Console;

/// Calls `(id, command)` to `Bash`, as one batch in scope `lab`.
pub fn bash_calls(calls: &[(&str, &str)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, command)| json!({"id": id, "name": "Bash", "arguments": json!({"command": command}).to_string()}))
        .collect();
    json!({"scope": "lab", "calls": calls})
}

/// The scenario "shell": `Bash`, echoing its arguments, in scope `lab`
/// (owner `me`), running `batches`.
pub fn shell_scenario(batches: Vec<Value>) -> Value {
    json!({
        "name": "shell",
        "scopes": [{"id": "lab", "label": "lab", "owner": "me"}],
        "tools": [{"name": "Bash", "description": "Runs a command", "scope": "lab", "body": {"echo": true}}],
        "batches": batches,
    })
}

/// `scenario` and `policy` written into a new directory and replayed in a
/// terminal (`tether replay SCENARIO --policy POLICY EXTRA…`, its journal
/// kept): the console, the policy file's path, and the directory.
pub fn replay_written(scenario: &Value, policy: &str, extra: &[&str]) -> (Console, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let scenario_path = dir.path().join("shell.json");
    let policy_path = dir.path().join("shell.policy.json");
    std::fs::write(&scenario_path, scenario.to_string()).unwrap();
    std::fs::write(&policy_path, policy).unwrap();
    let mut args = vec![
        "replay".to_owned(),
        scenario_path.display().to_string(),
        "--policy".to_owned(),
        policy_path.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    (Console::spawn(&args, true), policy_path, dir)
}
