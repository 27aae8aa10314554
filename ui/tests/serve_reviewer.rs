//! A headless `tether serve` whose reviewer cannot work (a model reviewer
//! with no API key in its environment variable) says so where its user
//! looks: on stdout and in its log, at start and at each failure, not only
//! in the journal (issue 48).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/headless.rs"]
mod headless;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use serde_json::{Value, json};

const NO_KEY: &str = "TETHER_TEST_REVIEWER_KEY_THAT_IS_NOT_SET";

#[test]
fn a_reviewer_with_no_key_is_reported_on_stdout_and_in_the_log_at_start_and_at_each_failure() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    let file = json!({
        "default": "review",
        "reviewers": {"model": {"model": {"api": "anthropic", "model": "claude-haiku-4-5", "api_key_env": NO_KEY}}},
        "rules": [],
    });
    std::fs::write(&policy, file.to_string()).unwrap();
    let socket = dir.path().join("console.sock");
    let logs = dir.path().join("logs");
    let mut command = headless::command(&socket, &["--answer", "reject", "--policy", policy.to_str().unwrap()]);
    command
        .arg("--log-dir")
        .arg(&logs)
        .env_remove(NO_KEY)
        .stderr(Stdio::null());
    let mut serve = Killed(command.spawn().unwrap());
    let stdout = BufReader::new(serve.0.stdout.take().unwrap());
    let (lines_out, lines_in) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = lines_out.send(line);
        }
    });
    let next = || {
        let line = lines_in
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("a line on stdout within 10 s");
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };
    assert!(next().get("listening").is_some());
    let problem = next();
    assert_eq!(problem["reviewer"], "model", "{problem}");
    assert!(
        problem["problem"].as_str().unwrap().contains(NO_KEY),
        "the start names the variable: {problem}"
    );

    for id in ["toolu_r1", "toolu_r2"] {
        let input = json!({"session_id": "sess-rev", "cwd": "/tmp", "hook_event_name": "PreToolUse",
                           "tool_name": "Bash", "tool_input": {"command": "make"}, "tool_use_id": id});
        bridge::hook_blocking("claude-code", &socket, &input.to_string(), &[]);
        let mut lines = vec![next(), next()];
        lines.sort_by_key(|l| l.get("review_failed").is_none());
        let failed = &lines[0]["review_failed"];
        assert_eq!(failed["reviewer"], "model", "{lines:?}");
        assert_eq!(failed["call_id"], id, "{lines:?}");
        assert!(failed["reason"].as_str().unwrap().contains(NO_KEY), "{lines:?}");
        assert_eq!(lines[1]["call_id"], id, "then the call's outcome: {lines:?}");
    }
    drop(serve);
    let log: String = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(
        log.contains(&format!("the environment variable {NO_KEY} holds no key")),
        "{log}"
    );
    assert_eq!(log.matches("reviewer failed").count(), 2, "{log}");
}

/// The console, killed when the test ends however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
