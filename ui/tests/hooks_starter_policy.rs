//! The starter policies (`tether policy init claude-code|codex`) with the
//! real agents: a read-only command runs without asking anyone, a compound
//! with a write in it is asked (and, rejected, never runs), and a private
//! key is never read unasked. The console answers every question "reject",
//! so whatever ran was decided by a rule.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/mock_model.rs"]
mod mock_model;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use real_agents::*;
use serde_json::{Value, json};

fn starter(agent: Agent) -> String {
    let name = match agent {
        Agent::ClaudeCode => tether_console::files::policy::Starter::ClaudeCode,
        Agent::Codex => tether_console::files::policy::Starter::Codex,
    };
    name.text()
}

fn bash(agent: Agent, command: &str) -> Value {
    match agent {
        Agent::ClaudeCode => json!({"name": "Bash", "input": {"command": command, "description": "scripted"}}),
        Agent::Codex => json!({"name": "exec_command", "arguments": {"cmd": command}}),
    }
}

async fn under_starter(agent: Agent, step: Value) -> Option<Run> {
    run_under(&starter(agent), CODEX_EXEC, agent, Console::Answer("reject"), step).await
}

async fn a_read_only_command_runs_unasked(agent: Agent) {
    let Some(run) = under_starter(agent, bash(agent, "ls -la && git status --short 2>&1")).await else {
        return;
    };
    // The listing shows the project's file: the command ran.
    assert!(run.model_saw("secret.txt"), "{}", run.explain());
    assert!(
        run.decisions
            .iter()
            .any(|d| d["hook"] == "PreToolUse" && d["decided_by"] == "rule:read-only-commands"),
        "a rule decided, nobody was asked: {}",
        run.explain()
    );
}

async fn a_compound_with_a_write_is_asked(agent: Agent) {
    let Some(run) = under_starter(agent, bash(agent, "git status; touch out.txt")).await else {
        return;
    };
    assert!(!run.file_exists("out.txt"), "the tool ran: {}", run.explain());
    assert!(run.model_saw("rejected"), "{}", run.explain());
}

async fn a_private_key_is_not_read_unasked(agent: Agent, step: Value) {
    let Some(run) = under_starter(agent, step).await else {
        return;
    };
    assert!(run.model.model_requests().len() >= 2, "{}", run.explain());
    assert!(
        !run.model_saw(PRIVATE_KEY),
        "the key reached the model: {}",
        run.explain()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_a_read_only_command_unasked() {
    a_read_only_command_runs_unasked(Agent::ClaudeCode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_asks_for_a_compound_with_a_write() {
    a_compound_with_a_write_is_asked(Agent::ClaudeCode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_asks_before_reading_a_private_key() {
    let read = json!({"name": "Read", "input": {"file_path": format!("{HOME_DIR}/.ssh/id_rsa")}});
    a_private_key_is_not_read_unasked(Agent::ClaudeCode, read).await;
    let cat = bash(Agent::ClaudeCode, &format!("cat {HOME_DIR}/.ssh/id_rsa"));
    a_private_key_is_not_read_unasked(Agent::ClaudeCode, cat).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_runs_a_read_only_command_unasked() {
    a_read_only_command_runs_unasked(Agent::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_asks_for_a_compound_with_a_write() {
    a_compound_with_a_write_is_asked(Agent::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_asks_before_reading_a_private_key() {
    let cat = bash(Agent::Codex, &format!("cat {HOME_DIR}/.ssh/id_rsa"));
    a_private_key_is_not_read_unasked(Agent::Codex, cat).await;
}
