//! The hook bridges against the real agents: Claude Code and Codex (the
//! versions pinned in `.ci/run`), each driven by a scripted model server
//! (`hook_support/mock_model.rs`), with the bridge installed by `tether hook
//! install --write` into a temporary home and `tether serve --headless`
//! deciding. Every case asserts on effects — whether the file the tool
//! writes exists, what the model server received — never on the bridge's
//! own output.
//!
//! The CLIs are looked up in `$TETHER_CI_CACHE/npm/node_modules/.bin`
//! (default `~/.cache/tether-ci`). Missing, the tests fail when `CI` is set
//! and are skipped with a message otherwise. At most two agents run at once:
//! on two cores more only makes each slower.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/mock_model.rs"]
mod mock_model;
#[path = "hook_support/on_screen.rs"]
mod on_screen;
#[path = "pty_support/mod.rs"]
mod pty_support;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use real_agents::*;
use serde_json::{Value, json};

fn bash(agent: Agent, command: &str) -> Value {
    match agent {
        Agent::ClaudeCode => json!({"name": "Bash", "input": {"command": command, "description": "scripted"}}),
        Agent::Codex => json!({"name": "exec_command", "arguments": {"cmd": command}}),
    }
}

async fn approved_call_runs(agent: Agent) {
    let Some(run) = run(
        agent,
        Console::Answer("approve"),
        bash(agent, "echo approved > out.txt # needs-approval"),
    )
    .await
    else {
        return;
    };
    assert!(run.file_exists("out.txt"), "{}", run.explain());
    assert!(
        run.decisions
            .iter()
            .any(|d| d["hook"] == "PreToolUse" && d["decided_by"] == "script"),
        "the console's scripted answer decided: {}",
        run.explain()
    );
}

async fn refused_call_never_runs(agent: Agent, console: Console, command: &str, reason: &str) {
    let Some(run) = run(agent, console, bash(agent, command)).await else {
        return;
    };
    assert!(!run.file_exists("out.txt"), "the tool ran: {}", run.explain());
    assert!(
        run.model_saw(reason),
        "the model never read {reason:?}: {}",
        run.explain()
    );
}

async fn secret_never_reaches_the_model(agent: Agent, step: Value) {
    let Some(run) = run(agent, Console::Answer("approve"), step).await else {
        return;
    };
    assert!(
        run.decisions
            .iter()
            .any(|d| d["hook"] == "PostToolUse" && d["code"] == "BLOCKED"),
        "the console withheld the result: {}",
        run.explain()
    );
    assert!(run.model.model_requests().len() >= 2, "{}", run.explain());
    assert!(
        !run.model_saw(SECRET),
        "the secret reached the model: {}",
        run.explain()
    );
    assert!(run.model_saw("WITHHELD-BY-TETHER"), "{}", run.explain());
}

const REJECTED: &str = "rejected by the approver";
const TIMED_OUT: &str = "approval timed out";
const DOWN: &str = "the Tether console is not running (start `tether serve`)";
const ASKED: &str = "echo hi > out.txt # needs-approval";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_an_approved_call() {
    approved_call_runs(Agent::ClaudeCode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_runs_a_rejected_call_and_the_model_reads_why() {
    refused_call_never_runs(Agent::ClaudeCode, Console::Answer("reject"), ASKED, REJECTED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_runs_a_call_whose_approval_timed_out() {
    refused_call_never_runs(Agent::ClaudeCode, Console::Answer("timeout"), ASKED, TIMED_OUT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_runs_a_call_when_the_console_is_down() {
    refused_call_never_runs(Agent::ClaudeCode, Console::NotRunning, "echo hi > out.txt", DOWN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_runs_a_call_policy_denies() {
    let command = "echo hi > out.txt # policy-denied";
    refused_call_never_runs(Agent::ClaudeCode, Console::Answer("approve"), command, "POLICY-SAYS-NO").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_shows_the_model_a_blocked_bash_result() {
    secret_never_reaches_the_model(Agent::ClaudeCode, bash(Agent::ClaudeCode, "cat secret.txt")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_shows_the_model_a_blocked_read_result() {
    secret_never_reaches_the_model(
        Agent::ClaudeCode,
        json!({"name": "Read", "input": {"file_path": format!("{PROJECT}/secret.txt")}}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_runs_an_approved_call() {
    approved_call_runs(Agent::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_runs_a_rejected_call_and_the_model_reads_why() {
    refused_call_never_runs(Agent::Codex, Console::Answer("reject"), ASKED, REJECTED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_runs_a_call_whose_approval_timed_out() {
    refused_call_never_runs(Agent::Codex, Console::Answer("timeout"), ASKED, TIMED_OUT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_runs_a_call_when_the_console_is_down() {
    refused_call_never_runs(Agent::Codex, Console::NotRunning, "echo hi > out.txt", DOWN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_runs_a_call_policy_denies() {
    let command = "echo hi > out.txt # policy-denied";
    refused_call_never_runs(Agent::Codex, Console::Answer("approve"), command, "POLICY-SAYS-NO").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_shows_the_model_a_blocked_result() {
    secret_never_reaches_the_model(Agent::Codex, bash(Agent::Codex, "cat secret.txt")).await;
}

/// A subagent's `Bash` call reaches the console named by its type, and a
/// rule on `agent_type` denies it while the main agent's same kind of call
/// runs. The main script starts an `Explore` subagent through Claude Code's
/// `Agent` tool (name and input as the request's `tools` list them), then
/// writes a file itself; the subagent's own conversation tries to write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_subagent_calls_are_named_by_type_and_a_rule_on_agent_type_decides_them() {
    let policy = r#"{"default": "allow", "rules": [
      {"id": "explorers-only-look", "stage": "pre-execute", "match": {"tool": "Bash", "agent_type": "Explore", "command": ["echo *"]},
       "action": {"type": "deny", "reason": "EXPLORERS-ONLY-LOOK"}}
    ]}"#;
    let script = mock_model::Script {
        anthropic: vec![
            json!({"name": "Agent", "input": {"description": "look around", "subagent_type": "Explore",
                   "prompt": format!("{} write a file", mock_model::SUBAGENT_TASK)}}),
            bash(Agent::ClaudeCode, "echo main > main.txt"),
        ],
        subagent: vec![bash(Agent::ClaudeCode, "echo sub > sub.txt")],
        ..mock_model::Script::default()
    };
    let Some(run) = run_script(
        policy,
        CODEX_EXEC,
        Agent::ClaudeCode,
        Console::Answer("approve"),
        script,
    )
    .await
    else {
        return;
    };
    assert!(
        run.file_exists("main.txt"),
        "the main agent's call ran: {}",
        run.explain()
    );
    assert!(
        !run.file_exists("sub.txt"),
        "the subagent's call ran: {}",
        run.explain()
    );
    assert!(
        run.model_saw("EXPLORERS-ONLY-LOOK"),
        "the subagent's model read the rule's reason: {}",
        run.explain()
    );
    let denied = run
        .decisions
        .iter()
        .find(|d| d["hook"] == "PreToolUse" && d["code"] == "DENIED")
        .unwrap_or_else(|| panic!("no denied call: {}", run.explain()));
    assert_eq!(denied["agent_type"], "Explore", "{}", run.explain());
    assert_eq!(denied["decided_by"], "rule:explorers-only-look");
    let agent_id = denied["agent_id"].as_str().unwrap_or_default().to_owned();
    assert!(!agent_id.is_empty(), "{denied}");
    let main = run
        .decisions
        .iter()
        .find(|d| d["hook"] == "PreToolUse" && d["name"] == "Bash" && d["code"].is_null())
        .unwrap_or_else(|| panic!("no allowed main-agent call: {}", run.explain()));
    assert!(main.get("agent_type").is_none(), "{main}");
    let journal = run.journal();
    let call = journal
        .iter()
        .find(|l| l["event"] == "tool/call" && l["call_id"] == denied["call_id"])
        .unwrap_or_else(|| panic!("the journal has no call {}: {journal:#?}", denied["call_id"]));
    assert_eq!(call["invocation_context"]["agent_type"], "Explore", "{call}");
    assert_eq!(call["invocation_context"]["agent_id"], json!(agent_id), "{call}");
}

/// The same for Codex: its root agent spawns a subagent (`spawn_agent` in
/// the `collaboration` namespace, then `wait_agent`); the subagent's `Bash`
/// reaches the console with `agent_type: "default"`, and a rule on it denies
/// the call, whose reason the subagent's model reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_subagent_calls_are_named_by_type_and_a_rule_on_agent_type_decides_them() {
    let policy = r#"{"default": "allow", "rules": [
      {"id": "subagents-only-look", "stage": "pre-execute", "match": {"tool": "Bash", "agent_type": "default", "command": ["echo *"]},
       "action": {"type": "deny", "reason": "SUBAGENTS-ONLY-LOOK"}}
    ]}"#;
    let script = mock_model::Script {
        openai: vec![
            json!({"name": "spawn_agent", "namespace": "collaboration",
                   "arguments": {"task_name": "writer", "fork_turns": "none",
                                 "message": format!("{} write a file", mock_model::SUBAGENT_TASK)}}),
            json!({"name": "wait_agent", "namespace": "collaboration", "arguments": {"timeout_ms": 30000}}),
        ],
        subagent: vec![bash(Agent::Codex, "echo sub > sub.txt")],
        ..mock_model::Script::default()
    };
    let Some(run) = run_configured(
        policy,
        CODEX_EXEC,
        Agent::Codex,
        Console::Answer("approve"),
        script,
        CODEX_SUBAGENTS,
    )
    .await
    else {
        return;
    };
    assert!(
        !run.file_exists("sub.txt"),
        "the subagent's call ran: {}",
        run.explain()
    );
    assert!(run.model_saw("SUBAGENTS-ONLY-LOOK"), "{}", run.explain());
    let denied = run
        .decisions
        .iter()
        .find(|d| d["hook"] == "PreToolUse" && d["code"] == "DENIED")
        .unwrap_or_else(|| panic!("no denied call: {}", run.explain()));
    assert_eq!(
        (&denied["agent_type"], &denied["decided_by"]),
        (&json!("default"), &json!("rule:subagents-only-look")),
        "{}",
        run.explain()
    );
    let spawn = run
        .decisions
        .iter()
        .find(|d| d["name"] == "collaborationspawn_agent")
        .unwrap_or_else(|| panic!("the spawn went through the hook too: {}", run.explain()));
    assert!(spawn.get("agent_type").is_none(), "the root agent spawned it: {spawn}");
}

/// What the human types at the start of the command: the shell works out
/// `42`, so the model can only read `42-EDITED` if the edited command ran.
const EDIT: &str = "echo $((6*7))-EDITED | tee edited.txt; ";

/// A person at the console presses `e` on the asked call, puts [`EDIT`] in
/// front of the command and approves with Ctrl+S.
fn edit_and_approve(console: &mut pty_support::Console) {
    console.wait_until("the prompt", |s| {
        s.contains("Approval 1 of 1") && s.contains("(or a wider rule)")
    });
    console.keys("e");
    console.wait_for("Edit, then approve");
    // Line 2 is `  "command": "…`: to just after its opening quote.
    console.keys("\x1b[B\x1b[H");
    for _ in 0..r#"  "command": ""#.len() {
        console.keys("\x1b[C");
    }
    console.keys(EDIT);
    console.wait_for("tee edited.txt; echo original");
    console.wait_for("valid JSON that the tool's schema accepts");
    console.keys("\x13");
    console.wait_gone("Edit, then approve");
}

async fn runs_the_command_as_the_human_edited_it(agent: Agent) {
    let step = bash(agent, "echo original > out.txt # needs-approval");
    let Some(edited) = on_screen::run_on_screen(agent, POLICY, step, edit_and_approve).await else {
        return;
    };
    let run = &edited.run;
    let written = std::fs::read_to_string(run.project().join("edited.txt")).unwrap_or_default();
    assert_eq!(written.trim(), "42-EDITED", "the edited command ran: {}", run.explain());
    assert!(
        run.model_saw("42-EDITED"),
        "the model's next request carries the edited command's output: {}",
        run.explain()
    );
    let result = edited
        .journal
        .iter()
        .find(|e| e["event"] == "tool/result" && e["answer"].is_string())
        .unwrap_or_else(|| panic!("no answered result in {:#?}", edited.journal));
    assert_eq!(result["answer"], "approved with edits", "{result}");
    let command = result["edited_arguments"]["command"].as_str().unwrap_or_default();
    assert!(command.starts_with(EDIT), "the journal keeps the edit: {result}");
    let call = edited
        .journal
        .iter()
        .find(|e| e["event"] == "tool/call" && e["call_id"] == result["call_id"])
        .unwrap();
    assert!(
        !call.to_string().contains("EDITED"),
        "the tool/call line keeps the model's own command: {call}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_the_command_as_the_human_edited_it() {
    runs_the_command_as_the_human_edited_it(Agent::ClaudeCode).await;
}

/// Codex 0.171.0 takes `updatedInput` with `permissionDecision: "allow"`
/// at PreToolUse (at PermissionRequest it refuses it: `e` is not offered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_runs_the_command_as_the_human_edited_it() {
    runs_the_command_as_the_human_edited_it(Agent::Codex).await;
}
