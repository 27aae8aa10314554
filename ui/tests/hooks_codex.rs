//! Codex's own side of the hook bridge, against the real Codex (the
//! version pinned in `.ci/run`) and a scripted model: the hooks installed
//! with `--trust` are listed as trusted by Codex itself, and a
//! PermissionRequest (an escalation under `--approve-for-me`) answered at
//! the console runs the call or never does. Found, skipped and paced as
//! `hooks_real_agents.rs` says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[allow(dead_code)]
#[path = "hook_support/mock_model.rs"]
mod mock_model;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use std::process::Stdio;
use std::time::Duration;

use real_agents::*;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const REJECTED: &str = "rejected by the approver";

/// Codex's own view of the installed hooks: `codex app-server` `hooks/list`
/// shows every one of them trusted, with the hash `--trust` wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_lists_the_hooks_installed_with_trust_as_trusted() {
    use tokio::io::AsyncWriteExt;
    let Some(bin) = cli_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let codex_home = dir.path().join("codex_home");
    let installed = tether()
        .env_clear()
        .env("PATH", env_path())
        .env("HOME", dir.path())
        .env("CODEX_HOME", &codex_home)
        .args(["hook", "install", "codex", "--write", "--trust"])
        .output()
        .await
        .unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let _slot = AGENT_SLOTS.acquire().await.unwrap();
    let mut server = tokio::process::Command::new(bin.join("codex"))
        .arg("app-server")
        .env_clear()
        .env("PATH", env_path())
        .env("HOME", dir.path())
        .env("CODEX_HOME", &codex_home)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap()).lines();
    for frame in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "tether-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [dir.path()]}}),
    ] {
        stdin.write_all(format!("{frame}\n").as_bytes()).await.unwrap();
    }
    let listed = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let line = stdout
                .next_line()
                .await
                .unwrap()
                .expect("app-server answered hooks/list");
            let frame: Value = serde_json::from_str(&line).unwrap_or_default();
            if frame["id"] == 2 {
                return frame;
            }
        }
    })
    .await
    .unwrap();
    let hooks: Vec<&Value> = listed["result"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["hooks"].as_array().unwrap())
        .collect();
    assert_eq!(hooks.len(), 3, "{listed:#}");
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    for hook in hooks {
        assert_eq!(hook["trustStatus"], "trusted", "{hook:#}");
        assert!(hook["command"].as_str().unwrap().contains(" hook codex "), "{hook:#}");
        assert!(config.contains(hook["currentHash"].as_str().unwrap()), "{hook:#}");
    }
}

/// `touch perm.txt` outside the sandbox: Codex asks for permission, and the
/// policy hands that to the console's human.
fn escalated() -> Value {
    json!({"name": "exec_command", "arguments": {"cmd": "touch perm.txt", "sandbox_permissions": "require_escalated",
                                                  "justification": "ESCALATE to create it"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_permission_request_approved_at_the_console_runs_the_call() {
    let Some(run) = run_codex_as(
        CODEX_APPROVE_FOR_ME,
        Agent::Codex,
        Console::Answer("approve"),
        escalated(),
    )
    .await
    else {
        return;
    };
    assert!(run.file_exists("perm.txt"), "{}", run.explain());
    assert!(
        run.decisions
            .iter()
            // "script (at PreToolUse)" once the script approved the same call before it.
            .any(|d| d["hook"] == "PermissionRequest"
                && d["decided_by"].as_str().is_some_and(|by| by.starts_with("script"))),
        "{}",
        run.explain()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_permission_request_rejected_at_the_console_never_runs() {
    let Some(run) = run_codex_as(
        CODEX_APPROVE_FOR_ME,
        Agent::Codex,
        Console::Answer("reject"),
        escalated(),
    )
    .await
    else {
        return;
    };
    assert!(!run.file_exists("perm.txt"), "the tool ran: {}", run.explain());
    assert!(run.model_saw(REJECTED), "{}", run.explain());
    assert!(
        run.decisions
            .iter()
            .any(|d| d["hook"] == "PermissionRequest" && d["code"] == "DENIED"),
        "{}",
        run.explain()
    );
}
