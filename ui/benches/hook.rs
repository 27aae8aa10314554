//! The hook bridge's own latency when a rule decides without a human: one
//! `tether hook claude-code` process per call, end to end (process start
//! included), against starting the same binary to print its version.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_console::agents::link::{self, Link, socket};
use tokio_util::sync::CancellationToken;

#[path = "support/policy_link.rs"]
mod policy_link;

/// Claude Code's real PreToolUse payload (captured from 2.1.197), running `ls`.
fn input() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-pre-bash.json");
    let mut payload: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    payload["tool_input"]["command"] = serde_json::json!("ls");
    payload.to_string()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let runtime = policy_link::runtime(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("console.sock");
    let stop = CancellationToken::new();
    let (registry, log, _rules) = policy_link::with_policy(
        r#"{"rules": [{"id": "ls-is-fine", "stage": "pre-execute", "match": {"tool": "Bash"}, "action": {"type": "allow"}}]}"#,
    );
    runtime.block_on(async {
        let listener = socket::bind(&path).await.unwrap();
        link::serve_on_own_thread(Arc::new(Link::new(registry, log)), listener, stop.clone()).unwrap();
    });
    let binary = env!("CARGO_BIN_EXE_tether");
    let logs = dir.path().join("logs");
    let input = input();
    let run_hook = || {
        let start = Instant::now();
        let mut child = Command::new(binary)
            .arg("--log-dir")
            .arg(&logs)
            .args(["hook", "claude-code", "--socket", path.to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(String::from_utf8_lossy(&output.stdout).contains("\"allow\""));
        start.elapsed()
    };
    let run_version = || {
        let start = Instant::now();
        let output = Command::new(binary).arg("--version").output().unwrap();
        assert!(output.status.success());
        start.elapsed()
    };
    let mut hook_samples = Vec::new();
    let mut start_samples = Vec::new();
    for _ in 0..5 {
        run_hook();
    }
    for _ in 0..101 {
        hook_samples.push(run_hook());
        start_samples.push(run_version());
    }
    let (hook, start) = (median(hook_samples), median(start_samples));
    println!(
        "SUMMARY tether hook claude-code, a rule decides: median {hook:.2?} end to end; starting the binary alone {start:.2?} = {:.2}x (goal: under 10 ms)",
        hook.as_secs_f64() / start.as_secs_f64()
    );
    stop.cancel();
}
