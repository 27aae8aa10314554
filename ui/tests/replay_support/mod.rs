//! What the `tether replay` tests share: the binary run to its end, its
//! JSON lines, scenario and policy files written into a test's directory,
//! the bundled demos and the captured journals.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// A scenario whose one call is asked (under [`ASK_POLICY`]) and expected
/// to succeed.
pub const ASKING: &str = r#"{
  "tools": [{"name": "t", "body": {"return": "ran"}}],
  "batches": [{"calls": [{"id": "c1", "name": "t", "expect": {"code": null}}]}]
}"#;

/// Every call is asked.
pub const ASK_POLICY: &str = r#"{"rules": [{"id": "ask-all", "stage": "pre-execute", "action": {"type": "ask"}}]}"#;

/// A bundled demo file (`demos/NAME`).
pub fn demo(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../demos").join(name);
    path.to_str().unwrap().to_owned()
}

/// A captured file (`tests/fixtures/NAME`).
pub fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    path.to_str().unwrap().to_owned()
}

pub fn tether(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether")).args(args).output().unwrap()
}

/// `tether replay SOURCE --policy POLICY --headless EXTRA…`.
pub fn replay(source: &str, policy: &str, extra: &[&str]) -> Output {
    let mut args = vec!["replay", source, "--policy", policy, "--headless"];
    args.extend(extra);
    tether(&args)
}

/// Each line of its stdout, as JSON.
pub fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Writes `text` to `dir/name`; its path.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}
