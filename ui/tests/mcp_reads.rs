//! `resources/read` and `prompts/get` are calls the policy decides, like
//! `tools/call`: the console sees `resources.read` with `{"uri": …}` and
//! `prompts.get` with `{"name": …, "arguments": …}` in the server's scope,
//! and a read nobody allowed never reaches the server. Through the real
//! gateway in front of the scripted server (`tests/mcp/upstream.py`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::*;

/// The scripted server with a resource (`test://moving`) and a prompt (`greet`).
fn serving(s: &Setup) -> Vec<String> {
    let mut command = vec![
        "/usr/bin/env".to_owned(),
        "SERVER_ID=a".to_owned(),
        format!("MARK_DIR={}", s.dir.path().display()),
    ];
    command.extend(scripted(&s.tools));
    command
}

/// A console in `dir` answering "reject", asking what `rules` leave.
fn asking(dir: &Path, rules: &Value) -> Console {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("policy.json");
    std::fs::write(&path, json!({"default": "ask", "rules": rules}).to_string()).unwrap();
    console_with(dir, "reject", Some(&path))
}

fn read_and_prompt(s: &Setup, console: &Console) -> (Value, Value) {
    let via = gateway(s.dir.path(), &console.socket, &["--name", "scripted"], &serving(s));
    let lines = client(
        &s.tools,
        s.dir.path(),
        "read_prompt",
        &["test://moving", "greet", "Ada"],
        &via,
    );
    (seen(&lines, "read").clone(), seen(&lines, "prompt").clone())
}

#[test]
fn a_read_and_a_prompt_that_nobody_allowed_never_reach_the_server() {
    let Some(s) = setup() else { return };
    let console = asking(&s.dir.path().join("asking"), &json!([]));
    let (read, prompt) = read_and_prompt(&s, &console);
    let (read_error, prompt_error) = (read["error"].to_string(), prompt["error"].to_string());
    assert!(read_error.contains("DENIED"), "{read}");
    assert!(prompt_error.contains("DENIED"), "{prompt}");
    assert!(!s.dir.path().join("read-a").exists(), "the read reached the server");
    assert!(!s.dir.path().join("prompt-a").exists(), "the prompt reached the server");
    let calls: Vec<Value> = console
        .journal()
        .into_iter()
        .filter(|l| l["event"] == "tool/call")
        .map(|l| {
            let arguments: Value = serde_json::from_str(l["arguments"].as_str().unwrap()).unwrap();
            json!([l["name"], arguments])
        })
        .collect();
    assert!(
        calls.contains(&json!(["resources.read", {"uri": "test://moving"}])),
        "{calls:?}"
    );
    assert!(
        calls.contains(&json!(["prompts.get", {"name": "greet", "arguments": {"who": "Ada"}}])),
        "{calls:?}"
    );
}

#[test]
fn rules_allow_reads_by_uri_and_prompts_by_name() {
    let Some(s) = setup() else { return };
    let rules = json!([
        {"id": "test-resources", "stage": "pre-execute",
         "match": {"tool": "resources.read", "args": [{"pointer": "/uri", "regex": "^test://"}]},
         "action": {"type": "allow"}},
        {"id": "greetings", "stage": "pre-execute",
         "match": {"tool": "prompts.get", "args": [{"pointer": "/name", "equals": "greet"}]},
         "action": {"type": "allow"}}
    ]);
    let console = asking(&s.dir.path().join("allowing"), &rules);
    let (read, prompt) = read_and_prompt(&s, &console);
    assert_eq!(read["result"]["contents"][0]["text"], "owned by a", "{read}");
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"], "Hello, Ada.",
        "{prompt}"
    );
    assert!(s.dir.path().join("read-a").exists());
}

/// The MCP starter (`tether policy init mcp`) says reading resources and
/// prompts runs unasked: a read and a prompt with nobody to answer both
/// reach the server.
#[test]
fn the_mcp_starter_lets_reads_and_prompts_through_unasked() {
    let Some(s) = setup() else { return };
    let dir = s.dir.path().join("starter");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("policy.json");
    let init = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["policy", "init", "mcp", "--write"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let console = console_with(&dir, "reject", Some(&path));
    let (read, prompt) = read_and_prompt(&s, &console);
    assert_eq!(read["result"]["contents"][0]["text"], "owned by a", "{read}");
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"], "Hello, Ada.",
        "{prompt}"
    );
}
