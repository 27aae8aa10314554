//! The console in a pseudo-terminal (a real `tether serve` through the
//! shared harness in `pty_support`) and a client whose observations are
//! read as it prints them: for the tests where the human acts in the
//! console while an MCP client waits.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::pty_support::{Console, strings};
use super::support::Setup;

pub fn journal_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The journal's result of each call of `tool`, in order.
pub fn results_of(journal: &Path, tool: &str) -> Vec<Value> {
    journal_text(journal)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "tool/result" && e["name"] == tool)
        .collect()
}

/// `tether serve` in a pseudo-terminal (the shared harness: keys in, whole
/// frames parsed back) on `socket`, journaling to `journal`; only the
/// pinning rules ask, calls no rule decides run.
pub fn serve_screen(dir: &Path, socket: &Path, journal: &Path) -> Console {
    let policy = super::support::write_policy(dir, &serde_json::json!([]));
    let args = strings(&[
        "serve",
        "--socket",
        socket.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    Console::spawn(&args, false)
}

/// The client's observations, line by line, as it prints them.
pub fn spawn_client(s: &Setup, scenario: &str, args: &[&str], server: &[String]) -> (Child, mpsc::Receiver<Value>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut command = vec![
        "/usr/bin/env".to_owned(),
        format!("MARK_DIR={}", s.dir.path().display()),
    ];
    command.extend(server.iter().cloned());
    let mut child = Command::new(&s.tools.python)
        .arg(script)
        .arg(scenario)
        .args(args)
        .arg("--")
        .args(&command)
        .env("XDG_STATE_HOME", s.dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str(&line).unwrap_or(Value::String(line)));
        }
    });
    (child, rx)
}

/// The next line of `kind` the client prints (earlier ones of other kinds skipped).
pub fn next_seen(lines: &mpsc::Receiver<Value>, kind: &str, client: &mut Child) -> Value {
    loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line["kind"] == kind => return line,
            Ok(line) if ["initialize", "tools"].contains(&line["kind"].as_str().unwrap_or_default()) => {}
            other => {
                let _ = client.kill();
                let mut stderr = String::new();
                let _ = client.stderr.take().unwrap().read_to_string(&mut stderr);
                panic!("expected {kind}, got {other:?}; the client's stderr:\n{stderr}");
            }
        }
    }
}
