//! `tether serve --headless` as a test drives it: the console in a process
//! of its own on a socket, started once it says it listens, its decision
//! lines read in order.
// Each test file uses its own part of this harness.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use serde_json::Value;
use tokio::io::AsyncBufReadExt;

/// `tether serve --headless --socket SOCKET ARGS…`, its stdout piped (a
/// caller may add to it before it starts).
pub fn command(socket: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    command
        .args(["serve", "--headless", "--socket"])
        .arg(socket)
        .args(args)
        .stdout(Stdio::piped());
    command
}

/// Starts `command` and reads its first line, which says it listens; the
/// lines after it are left to read.
pub fn start(mut command: Command) -> (Child, BufReader<ChildStdout>) {
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("listening"), "{line}");
    (child, stdout)
}

/// A headless console for an async test, killed when dropped.
pub struct Headless {
    _child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl Headless {
    /// `tether serve --headless --socket SOCKET ARGS…`, once it listens.
    pub async fn start(socket: &Path, args: &[&str]) -> Self {
        let mut child = tokio::process::Command::from(command(socket, args))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next_line().await.unwrap().unwrap();
        assert!(first.contains("listening"), "{first}");
        Headless { _child: child, lines }
    }

    /// The next line it prints (a decision), as JSON.
    pub async fn next(&mut self) -> Value {
        serde_json::from_str(&self.lines.next_line().await.unwrap().unwrap()).unwrap()
    }
}

/// `tether serve --headless --answer approve` on `dir`'s `policy.json`,
/// keeping its journal in `dir`'s `journal.jsonl`.
pub async fn approving(dir: &Path) -> Headless {
    let (policy, journal) = (dir.join("policy.json"), dir.join("journal.jsonl"));
    Headless::start(
        &dir.join("console.sock"),
        &[
            "--answer",
            "approve",
            "--policy",
            policy.to_str().unwrap(),
            "--journal",
            journal.to_str().unwrap(),
        ],
    )
    .await
}
