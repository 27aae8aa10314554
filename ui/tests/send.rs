//! `tether send`: its exit status says what became of the calls, and a
//! missing console gets the same "start `tether serve`" words as from the
//! hook bridges and `demos/agent.py` (which prints no traceback).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod pty_support;
use pty_support::Served;

const NOT_RUNNING: &str = "the Tether console is not running (start `tether serve`)";

fn send(batch: &Path, socket: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("send")
        .arg(batch)
        .arg("--socket")
        .arg(socket)
        .output()
        .unwrap()
}

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../demos").join(name)
}

#[test]
fn send_exits_0_when_every_call_succeeds_and_1_when_one_did_not() {
    let console = Served::headless(tempfile::tempdir().unwrap(), &["--answer", "approve"]);
    let good = console.write(
        "good.json",
        r#"{"session": {"session_id": "s1"}, "tools": [{"name": "remember", "body": {"return": 1}}],
            "calls": [{"id": "c1", "name": "remember", "arguments": "{}"}]}"#,
    );
    let ok = console.send_output(&good);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    // The demo batch's c4 fails INVALID_ARGS; every outcome is still printed.
    let failed = console.send_output(&demo("batch.send.json"));
    assert_eq!(failed.status.code(), Some(1));
    let stdout = String::from_utf8(failed.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 4, "{stdout}");
    assert!(stdout.contains("INVALID_ARGS"), "{stdout}");
}

#[test]
fn send_prints_what_a_model_wrote_escaped_as_the_screen_shows_it() {
    let console = Served::headless(tempfile::tempdir().unwrap(), &["--answer", "approve"]);
    let batch = serde_json::json!({
        "session": {"session_id": "s1"},
        "tools": [{"name": "echo", "body": {"echo": true}}],
        "calls": [{"id": "c\u{202e}1", "name": "echo", "arguments": "{\"path\": \"/tmp/\\u202etxt.exe\\u200b\\u001b[2J\"}"}],
    });
    let batch = console.write("hostile.json", &batch.to_string());
    let output = console.send_output(&batch);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    for raw in ['\u{202e}', '\u{200b}', '\u{1b}'] {
        assert!(!stdout.contains(raw), "{raw:?} was printed raw: {stdout:?}");
    }
    assert!(stdout.contains("\\u202e"), "{stdout}");
    // Escaped as JSON, so the line still reads back as what the model wrote.
    let line: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(line["value"]["path"], "/tmp/\u{202e}txt.exe\u{200b}\u{1b}[2J");
    assert_eq!(line["call_id"], "c\u{202e}1");
}

#[test]
fn send_with_a_bad_batch_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let output = send(&bad, &dir.path().join("console.sock"));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a batch file"));
}

#[test]
fn send_without_a_console_exits_3_and_says_to_start_tether_serve() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    let output = send(&demo("batch.send.json"), &socket);
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("{NOT_RUNNING}: nothing listens on {}", socket.display())),
        "{stderr}"
    );
}

#[test]
fn the_python_agent_without_a_console_says_the_same_and_prints_no_traceback() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    let output = Command::new("python3")
        .arg(demo("agent.py"))
        .arg("--socket")
        .arg(&socket)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("Traceback"), "{stderr}");
    assert!(stderr.contains(NOT_RUNNING), "{stderr}");
}

#[test]
fn a_socket_path_too_long_is_explained_with_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("s".repeat(120));
    for output in [
        send(&demo("batch.send.json"), &long),
        Command::new(env!("CARGO_BIN_EXE_tether"))
            .args(["serve", "--headless", "--socket"])
            .arg(&long)
            .output()
            .unwrap(),
    ] {
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(!stderr.contains("SUN_LEN"), "{stderr}");
        assert!(
            stderr.contains("a Unix socket path can be at most 107: pass a shorter --socket"),
            "{stderr}"
        );
    }
}

#[test]
fn the_console_without_a_terminal_says_so_and_points_to_headless() {
    let dir = tempfile::tempdir().unwrap();
    // setsid: no controlling terminal, as under a service manager or in CI.
    let output = Command::new("setsid")
        .arg(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(dir.path())
        .args(["replay", &demo("quickstart.json").display().to_string()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the console needs a terminal, and this is not one") && stderr.contains("--headless"),
        "{stderr}"
    );
}

const READ_DELETE_WRITE_POLICY: &str = r#"{"rules": [
  {"id": "reads-are-fine", "stage": "pre-execute", "match": {"tool": "read"}, "action": {"type": "allow"}},
  {"id": "no-deletes", "stage": "pre-execute", "match": {"tool": "delete"}, "action": {"type": "deny", "reason": "never"}},
  {"id": "ask-writes", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "ask"}}
]}"#;

fn read_delete_write(ids: [&str; 3]) -> String {
    json_batch(&[("read", ids[0]), ("delete", ids[1]), ("write", ids[2])])
}

fn json_batch(calls: &[(&str, &str)]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, id)| format!(r#"{{"id": "{id}", "name": "{name}", "arguments": "{{}}"}}"#))
        .collect();
    format!(
        r#"{{"session": {{"session_id": "s1"}},
            "tools": [{{"name": "read", "body": {{"return": 1}}}}, {{"name": "delete", "body": {{"return": 2}}}},
                      {{"name": "write", "body": {{"return": 3}}}}],
            "calls": [{}]}}"#,
        calls.join(", ")
    )
}

#[test]
fn a_call_id_declared_twice_in_a_batch_is_refused_naming_it_and_nothing_runs() {
    let dir = Served::dir_with(&[("policy.json", READ_DELETE_WRITE_POLICY)]);
    let console = Served::headless(
        dir,
        &[
            "--answer",
            "approve",
            "--policy",
            "{dir}/policy.json",
            "--journal",
            "{dir}/journal.jsonl",
        ],
    );
    let journal = console.path("journal.jsonl");
    let batch = console.write("dup.json", &read_delete_write(["x", "x", "x"]));
    let output = console.send_output(&batch);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(2),
        "a bad batch, not a missing console: {stderr}"
    );
    assert!(
        stderr.contains(r#"call id "x" is declared more than once in this batch"#),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "{}", String::from_utf8_lossy(&output.stdout));
    let journaled = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!journaled.contains("tool/call"), "nothing was declared: {journaled}");

    // The same calls with their own ids: each says what decided it.
    let batch = console.write("own-ids.json", &read_delete_write(["r", "d", "w"]));
    let output = console.send_output(&batch);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let decided: Vec<(String, String)> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["call_id"].as_str().unwrap().to_owned(),
                v["decided_by"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        decided,
        [
            ("r".to_owned(), "rule:reads-are-fine".to_owned()),
            ("d".to_owned(), "rule:no-deletes".to_owned()),
            ("w".to_owned(), "script".to_owned())
        ]
    );
}
