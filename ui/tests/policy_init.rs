//! `tether policy init`: a starter printed or written to the default place
//! (never over a file), and `tether serve` loading the default place.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn tether(config: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    command.env("XDG_CONFIG_HOME", config);
    command
}

#[test]
fn a_starter_is_written_to_the_default_place_once_and_serve_loads_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    let printed = tether(&config)
        .args(["policy", "init", "claude-code"])
        .output()
        .unwrap();
    assert!(printed.status.success());
    let text = String::from_utf8(printed.stdout).unwrap();
    assert!(text.contains("\"read-only-commands\""), "{text}");
    assert!(!config.exists(), "printing writes nothing");

    let written = tether(&config)
        .args(["policy", "init", "claude-code", "--write"])
        .output()
        .unwrap();
    assert!(written.status.success(), "{}", String::from_utf8_lossy(&written.stderr));
    let default = config.join("tether/policy.json");
    assert_eq!(std::fs::read_to_string(&default).unwrap(), text);

    // Never over an existing file.
    std::fs::write(&default, "{\"rules\": []}").unwrap();
    let again = tether(&config)
        .args(["policy", "init", "codex", "--write"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert_eq!(std::fs::read_to_string(&default).unwrap(), "{\"rules\": []}");

    // `tether serve` without --policy loads the default place, and says so.
    std::fs::write(&default, text).unwrap();
    let socket = dir.path().join("s.sock");
    let mut serve = tether(&config)
        .args(["serve", "--headless", "--socket"])
        .arg(&socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    serve.kill().unwrap();
    let _ = serve.wait();
    assert!(first.contains("listening"), "{first}");
    assert!(
        first.contains(default.to_str().unwrap()),
        "the first line names the policy in force: {first}"
    );
}
