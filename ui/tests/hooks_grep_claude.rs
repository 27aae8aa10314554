//! Review finding N18 with the real Claude Code: its model calls `Grep`
//! with `glob: ".env"` and `output_mode: "content"` in a git project whose
//! gitignored `.env` holds a secret. Claude Code runs `rg --hidden … --glob
//! .env`, which reads the file `.gitignore` would skip; what it prints goes
//! back to the model in the next request. Under the claude-code starter
//! the call is asked (the console rejects), and the secret reaches no
//! request the model receives; under a policy that allows Grep outright
//! (the control) it does.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/mock_model.rs"]
mod mock_model;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use std::path::Path;
use std::process::{Command, Stdio};

use real_agents::*;
use serde_json::json;

const ENV_SECRET: &str = "SEKRIT-N18-dotenv";

/// Grep runs unasked, whatever it searches.
const GREP_RUNS: &str = r#"{"default": "ask", "rules": [
  {"id": "grep-runs", "stage": "pre-execute", "match": {"tool": "Grep"}, "action": {"type": "allow"}}
]}"#;

/// A git repository with a gitignored `.env` holding the secret.
fn gitignored_env(project: &Path) {
    std::fs::write(project.join(".env"), format!("API_KEY={ENV_SECRET}\n")).unwrap();
    std::fs::write(project.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(project.join("main.rs"), "fn main() { let API_KEY = 1; }\n").unwrap();
    let status = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(project)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Claude Code's run of the one Grep call under `policy`, the console
/// rejecting whatever is asked.
async fn grep_env(policy: &str) -> Option<Run> {
    let step = json!({"name": "Grep", "input": {"pattern": "API_KEY", "glob": ".env", "output_mode": "content"}});
    let script = script_for(Agent::ClaudeCode, step);
    let run = run_prepared(
        policy,
        CODEX_EXEC,
        Agent::ClaudeCode,
        Console::Answer("reject"),
        script,
        "",
        Extra {
            prepare: &gitignored_env,
            // 2.1.332 offers no Grep unless asked to (searches go through
            // Bash); a user who lists it gets it.
            claude_args: &["--tools", "Bash,Grep,Glob,Read"],
        },
    )
    .await?;
    // The call reached the console, and its result the model.
    assert!(
        run.decisions
            .iter()
            .any(|d| d["hook"] == "PreToolUse" && d["name"] == "Grep"),
        "{}",
        run.explain()
    );
    assert!(run.model.model_requests().len() >= 2, "{}", run.explain());
    Some(run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grep_of_a_gitignored_env_never_reaches_the_model_under_the_starter() {
    let starter = tether_console::files::policy::Starter::ClaudeCode.text();
    let Some(run) = grep_env(&starter).await else {
        return;
    };
    assert!(
        !run.model_saw(ENV_SECRET),
        "the secret reached the model: {}",
        run.explain()
    );
    let pre = run.decisions.iter().find(|d| d["hook"] == "PreToolUse").unwrap();
    assert_eq!(pre["code"], "DENIED", "asked, and rejected: {}", run.explain());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_a_policy_allowing_grep_outright_leaks_the_env() {
    let Some(run) = grep_env(GREP_RUNS).await else {
        return;
    };
    assert!(
        run.model_saw(ENV_SECRET),
        "Grep read the gitignored .env: {}",
        run.explain()
    );
}
