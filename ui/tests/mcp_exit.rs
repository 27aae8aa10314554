//! A gateway told to stop (SIGTERM, as clients end their servers) says so in
//! its log and flushes it before it exits, whether or not its client has
//! initialized.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "mcp/support.rs"]
mod support;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start(dir: &Path, upstream: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(dir.join("logs"))
        .args(["mcp", "proxy", "--name", "up", "--socket"])
        .arg(dir.join("nobody.sock"))
        .arg("--")
        .args(upstream)
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// SIGTERM, then the log once the gateway has exited.
fn terminate(mut gateway: Child, dir: &Path) -> String {
    let log = dir.join("logs/tether.log");
    let started = Instant::now();
    while !log.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the gateway never opened its log"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Room to set up its signal handling: SIGTERM before that kills it outright.
    std::thread::sleep(Duration::from_millis(500));
    let status = Command::new("kill")
        .args(["-TERM", &gateway.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    while gateway.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(10), "the gateway did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::read_to_string(log).unwrap()
}

#[test]
fn a_gateway_told_to_stop_before_its_client_initialized_logs_it_before_exiting() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = start(dir.path(), &["true".to_owned()]);
    let log = terminate(gateway, dir.path());
    assert!(log.contains("told to stop"), "the log: {log}");
}

#[test]
fn a_gateway_told_to_stop_while_serving_logs_it_before_exiting() {
    let Some(tools) = support::tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/burst.py");
    let mut gateway = start(
        dir.path(),
        &[tools.python.display().to_string(), script.display().to_string()],
    );
    let mut stdin = gateway.stdin.take().unwrap();
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    writeln!(stdin, "{initialize}").unwrap();
    let mut answer = String::new();
    BufReader::new(gateway.stdout.take().unwrap())
        .read_line(&mut answer)
        .unwrap();
    assert!(answer.contains("\"result\""), "{answer}");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    let log = terminate(gateway, dir.path());
    assert!(log.contains("told to stop (SIGTERM); exiting"), "the log: {log}");
    drop(stdin);
}
