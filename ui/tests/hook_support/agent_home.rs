//! An agent's home for one run: its directories, the bridge installed in
//! it, what the run printed, and the hook timings Claude Code wrote there.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Agent, env_path, tether};

/// `tether hook install --write` for `agent` into `home` (Codex's
/// `config.toml` in `codex_home` pointing it at the scripted model on
/// `port`, with `codex_config` added), against `socket`.
pub async fn install(agent: Agent, (home, codex_home): (&Path, &Path), socket: &Path, port: u16, codex_config: &str) {
    let mut install = tether();
    install
        .env_clear()
        .env("PATH", env_path())
        .env("HOME", home)
        .args(["hook", "install", "--write", "--socket"])
        .arg(socket);
    match agent {
        Agent::ClaudeCode => {
            install.arg("claude-code");
        }
        Agent::Codex => {
            std::fs::create_dir_all(codex_home).unwrap();
            std::fs::write(
                codex_home.join("config.toml"),
                format!(
                    "# the scripted model\nmodel = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n\n{codex_config}"
                ),
            )
            .unwrap();
            install.env("CODEX_HOME", codex_home).args(["codex", "--trust"]);
        }
    }
    let installed = install.output().await.unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
}

/// A temporary directory with an agent's `home` and project (`proj`) in
/// it, and `policy` as its `policy.json`.
pub fn agent_dirs(policy: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (home, proj) = (dir.path().join("home"), dir.path().join("proj"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(dir.path().join("policy.json"), policy).unwrap();
    (dir, home, proj)
}

/// What an agent's run printed: stdout, then stderr.
pub fn printed(output: &std::process::Output) -> String {
    format!(
        "{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Claude Code records each hook's duration in the session transcript.
pub fn report_hook_durations(home: &Path) {
    let mut found = Vec::new();
    let mut stack = vec![home.join(".claude/projects")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                for line in std::fs::read_to_string(&path).unwrap_or_default().lines() {
                    let line: Value = serde_json::from_str(line).unwrap_or_default();
                    let attachment = &line["attachment"];
                    if let Some(ms) = attachment["durationMs"].as_u64() {
                        found.push(format!("{}={ms}ms", attachment["hookEvent"].as_str().unwrap_or("hook")));
                    }
                }
            }
        }
    }
    eprintln!("HOOK-TIMING claude-code transcript durationMs: {}", found.join(" "));
}
