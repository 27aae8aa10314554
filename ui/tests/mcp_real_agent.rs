//! The MCP gateway end to end with a real agent: Claude Code (the version
//! pinned in `.ci/run`), driven by the scripted model server
//! (`hook_support/mock_model.rs`), with one MCP server configured that
//! launches `tether mcp proxy --name fs -- mcp-server-filesystem PROJECT`
//! (the project's `.mcp.json`, wrapped by `tether mcp install`),
//! and `tether serve --headless` as the console. The model writes two files
//! through the gateway: policy allows one, asks about the other and the
//! console rejects it. Asserted on effects: which file exists, what the
//! model read in its next request, what the journal holds.
//!
//! Missing tools fail the test under `CI=true` and skip it elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/mock_model.rs"]
mod mock_model;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mock_model::{MockModel, Script};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

fn bin_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("TETHER_CI_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tether-ci"),
        PathBuf::from,
    );
    let bin = cache.join("npm/node_modules/.bin");
    let missing: Vec<PathBuf> = ["claude", "mcp-server-filesystem"]
        .iter()
        .map(|b| bin.join(b))
        .filter(|p| !p.exists())
        .collect();
    if missing.is_empty() {
        return Some(bin);
    }
    let message = format!("Claude Code or server-filesystem missing ({missing:?}); run `bash .ci/run`");
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}

const REJECTED: &str = "rejected by the approver";

/// Writes to `allowed-*` are allowed by a rule; every other write is asked
/// (and the console answers reject).
const POLICY: &str = r#"{"rules": [
  {"id": "allowed-writes", "stage": "pre-execute", "match": {"tool": "write_file", "args": [{"pointer": "/path", "regex": "allowed-[^/]*$"}]}, "action": {"type": "allow"}},
  {"id": "writes-are-asked", "stage": "pre-execute", "match": {"tool": "write_*"}, "action": {"type": "ask", "reason": "the agent wants to change a file"}}
]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_writes_through_the_gateway_only_what_the_console_allows() {
    let Some(bin) = bin_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, proj) = (root.join("home"), root.join("proj"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(root.join("policy.json"), POLICY).unwrap();
    let (socket, journal) = (root.join("console.sock"), root.join("journal.jsonl"));

    let (allowed, refused) = (proj.join("allowed-notes.txt"), proj.join("refused-notes.txt"));
    let write = |path: &PathBuf, content: &str| json!({"name": "mcp__fs__write_file", "input": {"path": path, "content": content}});
    let model = MockModel::start(Script {
        anthropic: vec![write(&allowed, "kept"), write(&refused, "never")],
        ..Script::default()
    })
    .await;

    let mut console = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(root.join("logs"))
        .args(["serve", "--headless", "--answer", "reject", "--socket"])
        .arg(&socket)
        .arg("--policy")
        .arg(root.join("policy.json"))
        .arg("--journal")
        .arg(&journal)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut printed = BufReader::new(console.stdout.take().unwrap()).lines();
    let first = printed.next_line().await.unwrap().unwrap();
    assert!(first.contains("listening"), "{first}");
    let decisions = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let kept = std::sync::Arc::clone(&decisions);
    tokio::spawn(async move {
        while let Ok(Some(line)) = printed.next_line().await {
            kept.lock()
                .unwrap()
                .push(serde_json::from_str(&line).unwrap_or(json!(line)));
        }
    });

    // The project's own server entry, wrapped by `tether mcp install`.
    let plain = json!({"mcpServers": {"fs": {
        "type": "stdio",
        "command": bin.join("mcp-server-filesystem"),
        "args": [&proj],
        "env": {"XDG_STATE_HOME": root.join("state")},
    }}});
    let config = proj.join(".mcp.json");
    let original = serde_json::to_string_pretty(&plain).unwrap();
    std::fs::write(&config, &original).unwrap();
    let install = |verb: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .env("XDG_STATE_HOME", root.join("state"))
            .args(["mcp", verb, "claude-code", "--write", "--project"])
            .arg(&proj)
            .arg("--socket")
            .arg(&socket)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    };
    install("install");

    let claude = |port: u16| {
        tokio::process::Command::new(bin.join("claude"))
            .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("MCP_TOOL_TIMEOUT", "150000")
            .env_remove("CI")
            .env("HOME", &home)
            .args(["-p", "write the notes", "--output-format", "stream-json", "--verbose"])
            .arg("--mcp-config")
            .arg(&config)
            .args(["--strict-mcp-config", "--allowedTools", "mcp__fs__write_file"])
            .current_dir(&proj)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output()
    };
    // A first session, whose model calls nothing, pins the server's tools:
    // a tool seen for the first time is asked whatever the policy says.
    let first_sight = MockModel::start(Script::default()).await;
    let warmed = tokio::time::timeout(Duration::from_secs(180), claude(first_sight.port))
        .await
        .expect("Claude Code finished within 180 s")
        .unwrap();
    assert!(warmed.status.success(), "{}", String::from_utf8_lossy(&warmed.stderr));

    let started = Instant::now();
    let output = claude(model.port);
    let output = tokio::time::timeout(Duration::from_secs(180), output)
        .await
        .expect("Claude Code finished within 180 s")
        .unwrap();
    eprintln!("claude ran {:.1?}", started.elapsed());
    let requests = model.model_requests();
    let explain = || {
        format!(
            "stdout: {}\nstderr: {}\njournal: {}\nmodel requests: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            std::fs::read_to_string(&journal).unwrap_or_default(),
            requests
                .iter()
                .map(|r| format!("{:.800}", r.to_string()))
                .collect::<Vec<_>>()
                .join("\n")
        )
    };

    // The model was offered the gateway's tool, under the server's name.
    assert!(
        requests.iter().any(|r| r["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["name"] == "mcp__fs__write_file")),
        "{}",
        explain()
    );
    assert_eq!(
        std::fs::read_to_string(&allowed).ok().as_deref(),
        Some("kept"),
        "{}",
        explain()
    );
    assert!(!refused.exists(), "a rejected write reached the server: {}", explain());
    // The request after the rejected call carries the reason as its tool result.
    let last = requests.last().map(Value::to_string).unwrap_or_default();
    assert!(last.contains(REJECTED), "{}", explain());

    install("uninstall");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);

    // The journal holds both calls, each with its outcome.
    let lines: Vec<Value> = std::fs::read_to_string(&journal)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcome = |file: &str| -> Value {
        let call = lines
            .iter()
            .find(|l| l["event"] == "tool/call" && l["arguments"].as_str().unwrap_or_default().contains(file))
            .unwrap_or_else(|| panic!("no call for {file} in the journal: {}", explain()));
        assert_eq!(call["scope"]["label"], "fs");
        let result = lines
            .iter()
            .find(|l| l["event"] == "tool/result" && l["call_id"] == call["call_id"] && l["batch"] == call["batch"])
            .unwrap_or_else(|| panic!("no result for {file} in the journal: {}", explain()));
        result.clone()
    };
    let kept = outcome("allowed-notes.txt");
    assert_eq!(kept["code"], Value::Null, "{}", explain());
    assert!(
        kept["value"].to_string().contains("Successfully wrote"),
        "{}",
        explain()
    );
    let refused = outcome("refused-notes.txt");
    assert_eq!(refused["code"], "DENIED", "{}", explain());
    assert_eq!(refused["value"]["message"], REJECTED);

    // What a README transcript shows: the console's lines, what the model read.
    for line in decisions.lock().unwrap().iter() {
        eprintln!("TRANSCRIPT console {line}");
    }
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if line.contains("\"tool_result\"") {
            eprintln!("TRANSCRIPT claude {line}");
        }
    }

    // And the console says who decided each.
    let decided: Vec<String> = decisions
        .lock()
        .unwrap()
        .iter()
        .map(|d| d["decided_by"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        decided.contains(&"rule:allowed-writes".to_owned()) && decided.contains(&"script".to_owned()),
        "{decided:?}"
    );
}
