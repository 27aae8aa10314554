//! `tether serve --headless` is a daemon: SIGTERM stops it at once, however
//! busy it is when the signal comes, and every call still waiting is
//! answered with a deny (issue 48).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/headless.rs"]
mod headless;

use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const HOOK_INPUT: &str = r#"{"session_id": "sess-stop", "cwd": "/tmp", "hook_event_name": "PreToolUse",
  "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_stop_1"}"#;

fn serve(dir: &Path, args: &[&str]) -> (Child, BufReader<ChildStdout>) {
    let mut command = headless::command(&dir.join("console.sock"), args);
    command.stderr(Stdio::null());
    headless::start(command)
}

fn hook(dir: &Path, input: &str) -> bridge::Printed {
    bridge::hook_blocking("claude-code", &dir.join("console.sock"), input, &[])
}

fn term(child: &Child) {
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Whether the process ended within `limit` (it is killed if not).
fn exits_within(child: &mut Child, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

#[test]
fn sigterm_after_a_decided_hook_call_stops_serve_every_time() {
    let mut alive = 0;
    for _ in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, _stdout) = serve(dir.path(), &["--answer", "approve"]);
        let answered = hook(dir.path(), HOOK_INPUT);
        assert_eq!(answered.status, 0, "{}", answered.stderr);
        term(&child);
        if !exits_within(&mut child, Duration::from_secs(3)) {
            alive += 1;
        }
    }
    assert_eq!(
        alive, 0,
        "serve was still running 3 s after SIGTERM in {alive} of 30 runs"
    );
}

/// The loop is busy writing outcome lines to a reader that is slow to read
/// them when SIGTERM comes: the stop is kept and obeyed after the line in
/// hand, not lost between two turns of the loop (it was, for good: the
/// signal handler was installed, so the signal no longer ended the process).
#[test]
fn sigterm_while_serve_writes_lines_nobody_reads_yet_is_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, mut stdout) = serve(dir.path(), &["--answer", "approve"]);
    // Far more outcome lines than a pipe holds: the loop blocks writing them.
    let calls: Vec<_> = (0..3000)
        .map(|i| serde_json::json!({"id": format!("c{i}"), "name": "remember", "arguments": "{}"}))
        .collect();
    let batch = serde_json::json!({
        "session": {"session_id": "busy"},
        "tools": [{"name": "remember", "concurrency": "always", "body": {"return": {"stored": true}}}],
        "max_parallelism": 8,
        "calls": calls,
    });
    let file = dir.path().join("batch.json");
    std::fs::write(&file, batch.to_string()).unwrap();
    let sent = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("send")
        .arg(&file)
        .arg("--socket")
        .arg(dir.path().join("console.sock"))
        .output()
        .unwrap();
    assert_eq!(sent.status.code(), Some(0), "{}", String::from_utf8_lossy(&sent.stderr));
    term(&child);
    std::thread::sleep(Duration::from_millis(300));
    // Now read: the writes the loop was blocked in finish.
    let reader = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = stdout.read_to_string(&mut rest);
    });
    assert!(
        exits_within(&mut child, Duration::from_secs(5)),
        "serve ignored a SIGTERM that came while it was writing"
    );
    reader.join().unwrap();
}

/// A call waiting for a human when SIGTERM comes is denied, and serve stops
/// at once (it does not wait for the approval timeout).
#[test]
fn sigterm_denies_a_waiting_call_and_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"default": "ask", "rules": []}"#).unwrap();
    let policy = policy.to_str().unwrap().to_owned();
    let (mut child, _stdout) = serve(
        dir.path(),
        &[
            "--attach",
            "--answer",
            "attached",
            "--approval-timeout",
            "600",
            "--policy",
            &policy,
        ],
    );
    let socket_dir = dir.path().to_path_buf();
    let waiting = std::thread::spawn(move || hook(&socket_dir, HOOK_INPUT));
    // The journal-free way to know the call waits: give it time to arrive.
    std::thread::sleep(Duration::from_millis(700));
    let sent = Instant::now();
    term(&child);
    assert!(
        exits_within(&mut child, Duration::from_secs(3)),
        "serve outlived SIGTERM"
    );
    let answered = waiting.join().unwrap();
    assert!(sent.elapsed() < Duration::from_secs(5));
    let answer = answered.json();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "a call waiting when serve stops is denied: {answer}"
    );
}
