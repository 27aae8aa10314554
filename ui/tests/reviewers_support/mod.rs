//! What the reviewer tests share: a scenario's tools and calls, and a
//! policy from a file's JSON.
#![allow(dead_code)]

use serde_json::{Value, json};
use tether_console::files::policy::Policy;
use tether_console::files::scenario::Scenario;
use tether_console::files::source::Document;

pub const SCENARIO: &str = r#"{
  "scopes": [{"id": "agent0"}, {"id": "helper", "parent": "agent0"}],
  "tools": [
    {"name": "fs.read", "scope": "agent0", "body": {"echo": true}},
    {"name": "fs.write", "scope": "agent0", "body": {"return": {"written": true}}},
    {"name": "shell", "scope": "agent0", "body": {"return": {"ran": true}}},
    {"name": "fs.list", "scope": "agent0", "concurrency": "always", "body": {"echo": true}}
  ],
  "batches": [{"calls": []}]
}"#;

pub fn scenario(scope: &str, calls: Value) -> Scenario {
    let mut value: Value = serde_json::from_str(SCENARIO).unwrap();
    value["batches"] = json!([{ "scope": scope, "calls": calls, "max_parallelism": 8 }]);
    let doc = Document::parse("s.json".into(), value.to_string()).unwrap();
    Scenario::from_document(&doc).unwrap()
}

pub fn policy(file: Value) -> Policy {
    let doc = Document::parse("p.json".into(), file.to_string()).unwrap();
    Policy::from_document(&doc).unwrap_or_else(|e| panic!("{}", e[0]))
}

/// Every call routed to the reviewer `gate` running `command`, after `rules`.
pub fn gated(command: &str, timeout_ms: u64, rules: Value) -> Policy {
    policy(json!({
        "default": "review",
        "reviewers": {"gate": {"command": command, "timeout_ms": timeout_ms}},
        "rules": rules,
    }))
}

pub fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "name": name, "arguments": args})
}
