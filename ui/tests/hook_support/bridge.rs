//! The hook bridge as an agent runs it: `tether hook claude-code|codex`, one
//! process per event, the event's JSON on stdin and the answer on stdout.
//! Every test that talks to a console through the bridge starts it here.
// Each test file uses its own part of this harness.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

/// What the bridge printed and its exit status.
pub struct Printed {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Printed {
    /// The answer as JSON (a bridge that printed none fails the test, with
    /// what it said on stderr).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: {:?}\n--- stderr\n{}", self.stdout, self.stderr))
    }

    /// The answer as the agent reads it: `{}` where the bridge printed
    /// nothing (Codex's "no objection").
    pub fn answer(&self) -> Value {
        if self.stdout.trim().is_empty() {
            json!({})
        } else {
            self.json()
        }
    }

    /// The `permissionDecision` Claude Code was told (`allow`, `deny`,
    /// `ask`), empty where there is none.
    pub fn decision(&self) -> String {
        self.json()["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// `tether hook AGENT --socket SOCKET EXTRA…` started with `input` on its
/// stdin, which is then closed; its output is left to read.
pub fn start(agent: &str, socket: &Path, input: &str, extra: &[&str]) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(std::env::temp_dir().join("tether-hook-test-logs"))
        .args(["hook", agent, "--socket"])
        .arg(socket)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A bridge that refuses its arguments exits before reading: what it
    // printed says so, and each test reads that.
    let _ = stdin.write_all(input.as_bytes());
    child
}

/// Waits for a bridge [`start`]ed earlier.
pub fn finish(child: Child) -> Printed {
    let output = child.wait_with_output().unwrap();
    Printed {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// One event through the bridge, from a test that is not async.
pub fn hook_blocking(agent: &str, socket: &Path, input: &str, extra: &[&str]) -> Printed {
    finish(start(agent, socket, input, extra))
}

/// One event through the bridge; the runtime goes on serving (a console in
/// the test's own runtime answers) while the bridge runs.
pub async fn hook_raw(agent: &str, socket: &Path, input: &str, extra: &[&str]) -> Printed {
    let (agent, socket, input) = (agent.to_owned(), socket.to_owned(), input.to_owned());
    let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        hook_blocking(&agent, &socket, &input, &extra)
    })
    .await
    .unwrap()
}

/// The answer of a bridge that must exit 0.
pub async fn hook(agent: &str, socket: &Path, input: &str, extra: &[&str]) -> Value {
    let printed = hook_raw(agent, socket, input, extra).await;
    assert_eq!(printed.status, 0, "{}", printed.stderr);
    printed.json()
}

/// A payload captured from a real agent (`tests/fixtures/NAME`).
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).unwrap()
}

/// A captured payload with another command in its `tool_input`.
pub fn with_command(name: &str, command: &str) -> String {
    let mut payload: Value = serde_json::from_str(&fixture(name)).unwrap();
    payload["tool_input"]["command"] = json!(command);
    payload.to_string()
}

/// The bridge's answer to one Bash call running `command` in `cwd` (the
/// agent's captured payload, with that command and directory), and whether
/// the agent runs the call on it: Claude Code runs what it is told to allow,
/// Codex what no hook output blocks (`{}` or nothing).
pub async fn allowed(agent: &str, socket: &Path, command: &str, cwd: &Path) -> (bool, Value) {
    let mut input: Value = serde_json::from_str(&with_command(&format!("{agent}-pre-bash.json"), command)).unwrap();
    input["cwd"] = json!(cwd);
    let printed = hook_raw(agent, socket, &input.to_string(), &[]).await;
    let answer = printed.answer();
    let allowed = match agent {
        "claude-code" => answer["hookSpecificOutput"]["permissionDecision"] == "allow",
        _ => answer.get("hookSpecificOutput").is_none() && answer.get("decision").is_none() && printed.status == 0,
    };
    (allowed, answer)
}

/// The PreToolUse answer Claude Code (and Codex, for a deny) honours.
pub fn pre(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}})
}
