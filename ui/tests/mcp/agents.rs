//! What the MCP gateway's real-agent tests share: where the agents are,
//! the policy, the console (`tether serve --headless --answer reject`) and
//! reading its journal.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The CI cache's npm binaries, when `needs` are all there.
pub fn bin_dir(needs: &[&str]) -> Option<PathBuf> {
    let cache = std::env::var_os("TETHER_CI_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tether-ci"),
        PathBuf::from,
    );
    let bin = cache.join("npm/node_modules/.bin");
    let missing: Vec<PathBuf> = needs.iter().map(|b| bin.join(b)).filter(|p| !p.exists()).collect();
    if missing.is_empty() {
        return Some(bin);
    }
    let message = format!("an agent or server-filesystem missing ({missing:?}); run `bash .ci/run`");
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}

pub const REJECTED: &str = "rejected by the approver";

/// Writes to `allowed-*` are allowed by a rule; every other write is asked
/// (and the console answers reject).
pub const POLICY: &str = r#"{"rules": [
  {"id": "allowed-writes", "stage": "pre-execute", "match": {"tool": "write_file", "args": [{"pointer": "/path", "regex": "allowed-[^/]*$"}]}, "action": {"type": "allow"}},
  {"id": "writes-are-asked", "stage": "pre-execute", "match": {"tool": "write_*"}, "action": {"type": "ask", "reason": "the agent wants to change a file"}}
]}"#;

/// `tether serve --headless --answer reject` under [`POLICY`] with its
/// journal in `root`, on `socket` (the default one when `None`), with `env`
/// added to its environment; the JSON lines it prints are collected.
pub async fn console(
    root: &Path,
    socket: Option<&Path>,
    env: &[(&str, &Path)],
) -> (tokio::process::Child, Arc<Mutex<Vec<Value>>>) {
    std::fs::write(root.join("policy.json"), POLICY).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"));
    command
        .arg("--log-dir")
        .arg(root.join("logs"))
        .args(["serve", "--headless", "--answer", "reject"]);
    if let Some(socket) = socket {
        command.arg("--socket").arg(socket);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command
        .arg("--policy")
        .arg(root.join("policy.json"))
        .arg("--journal")
        .arg(root.join("journal.jsonl"))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut printed = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = printed.next_line().await.unwrap().unwrap();
    assert!(first.contains("listening"), "{first}");
    let decisions = Arc::new(Mutex::new(Vec::<Value>::new()));
    let kept = Arc::clone(&decisions);
    tokio::spawn(async move {
        while let Ok(Some(line)) = printed.next_line().await {
            kept.lock()
                .unwrap()
                .push(serde_json::from_str(&line).unwrap_or(json!(line)));
        }
    });
    (child, decisions)
}

/// The journal's result for the one call whose arguments name `file`.
pub fn journal_outcome(journal: &Path, file: &str, explain: &dyn Fn() -> String) -> Value {
    let lines: Vec<Value> = std::fs::read_to_string(journal)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = lines
        .iter()
        .find(|l| l["event"] == "tool/call" && l["arguments"].as_str().unwrap_or_default().contains(file))
        .unwrap_or_else(|| panic!("no call for {file} in the journal: {}", explain()));
    assert_eq!(call["scope"]["label"], "fs");
    lines
        .iter()
        .find(|l| l["event"] == "tool/result" && l["call_id"] == call["call_id"] && l["batch"] == call["batch"])
        .unwrap_or_else(|| panic!("no result for {file} in the journal: {}", explain()))
        .clone()
}

/// Our uid, as the default socket's directory names it.
pub fn uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

/// The two files a scripted model writes in `proj`: the policy allows the
/// first, asks about the second (and the console rejects it).
pub fn notes(proj: &Path) -> (PathBuf, PathBuf) {
    (proj.join("allowed-notes.txt"), proj.join("refused-notes.txt"))
}

/// A scripted Anthropic model that has Claude Code load the gateway's
/// `write_file` (current releases defer MCP tools behind ToolSearch; older
/// ones are offered it at once and skip that turn), then write both notes.
pub async fn claude_writes_notes(proj: &Path) -> crate::mock_model::MockModel {
    let (allowed, refused) = notes(proj);
    let write = |path: &PathBuf, content: &str| json!({"name": "mcp__fs__write_file", "input": {"path": path, "content": content}});
    crate::mock_model::MockModel::start(crate::mock_model::Script {
        anthropic: vec![
            json!({"name": "ToolSearch", "input": {"query": "select:mcp__fs__write_file"}}),
            write(&allowed, "kept"),
            write(&refused, "never"),
        ],
        ..crate::mock_model::Script::default()
    })
    .await
}

/// A scripted Responses model that has Codex search for the gateway's tools
/// (its namespace `mcp__fs`), then write both notes.
pub async fn codex_writes_notes(proj: &Path) -> crate::mock_model::MockModel {
    let (allowed, refused) = notes(proj);
    let write = |path: &PathBuf, content: &str| json!({"namespace": "mcp__fs", "name": "write_file", "arguments": {"path": path, "content": content}});
    crate::mock_model::MockModel::start(crate::mock_model::Script {
        openai: vec![
            json!({"tool_search": {"query": "write file", "limit": 8}}),
            write(&allowed, "kept"),
            write(&refused, "never"),
        ],
        ..crate::mock_model::Script::default()
    })
    .await
}

/// The effects of a run of [`claude_writes_notes`] or [`codex_writes_notes`]:
/// the allowed note was written, the rejected one never reached the server,
/// the model read why, and the journal and the console's lines say who
/// decided each.
pub fn assert_only_the_allowed_note_written(
    proj: &Path,
    journal: &Path,
    decisions: &Mutex<Vec<Value>>,
    requests: &[Value],
    explain: &dyn Fn() -> String,
) {
    let (allowed, refused) = notes(proj);
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
    let kept = journal_outcome(journal, "allowed-notes.txt", explain);
    assert_eq!(kept["code"], Value::Null, "{}", explain());
    assert!(
        kept["value"].to_string().contains("Successfully wrote"),
        "{}",
        explain()
    );
    let refused = journal_outcome(journal, "refused-notes.txt", explain);
    assert_eq!(refused["code"], "DENIED", "{}", explain());
    assert_eq!(refused["value"]["message"], REJECTED);
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

/// Runs an agent twice: a first session whose model calls nothing, which
/// pins the server's tools (a tool seen for the first time is asked
/// whatever the policy says), as a user's first session does; then the
/// session under the model on `port`. What the second run printed.
pub async fn after_a_first_session<F, R>(agent: &str, session: F, port: u16) -> std::process::Output
where
    F: Fn(u16) -> R,
    R: std::future::Future<Output = std::io::Result<std::process::Output>>,
{
    let first_sight = crate::mock_model::MockModel::start(crate::mock_model::Script::default()).await;
    let bound = std::time::Duration::from_secs(180);
    let warmed = tokio::time::timeout(bound, session(first_sight.port))
        .await
        .unwrap_or_else(|_| panic!("{agent} finished within 180 s"))
        .unwrap();
    assert!(
        warmed.status.success(),
        "{agent}'s first session: {}\n{}",
        String::from_utf8_lossy(&warmed.stdout),
        String::from_utf8_lossy(&warmed.stderr)
    );
    let started = std::time::Instant::now();
    let output = tokio::time::timeout(bound, session(port))
        .await
        .unwrap_or_else(|_| panic!("{agent} finished within 180 s"))
        .unwrap();
    eprintln!("{agent} ran {:.1?}", started.elapsed());
    output
}
