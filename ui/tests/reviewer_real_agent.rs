//! The reviewer tier behind the real Claude Code and Codex (scripted model, hook
//! bridge, `tether serve --headless` deciding): under `"default": "review"`
//! a command reviewer lets a harmless call run without asking anyone, and a
//! call it escalates is asked in the console, whose answer decides. Asserts
//! on effects: whether the file the call writes exists.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/mock_model.rs"]
mod mock_model;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use real_agents::*;
use serde_json::{Value, json};

/// Every call goes to `gate`: it asks about a command marked
/// `needs-human` and allows the rest.
fn policy() -> String {
    let reviewer = r#"if grep -q needs-human; then echo '{"decision": "ask", "reason": "it wants a human"}'; else echo '{"decision": "allow", "reason": "writes inside the project"}'; fi"#;
    json!({
        "default": "review",
        "reviewers": {"gate": {"command": reviewer, "timeout_ms": 10_000}},
        "rules": []
    })
    .to_string()
}

fn bash(command: &str) -> Value {
    json!({"name": "Bash", "input": {"command": command, "description": "scripted"}})
}

fn decided_at_pre_tool_use(run: &Run) -> Vec<String> {
    run.decisions
        .iter()
        .filter(|d| d["hook"] == "PreToolUse")
        .map(|d| d["decided_by"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_call_the_reviewer_allows_runs_without_asking_anyone() {
    // The console would reject anything it is asked.
    let Some(run) = run_under(
        &policy(),
        CODEX_EXEC,
        Agent::ClaudeCode,
        Console::Answer("reject"),
        bash("echo reviewed > out.txt"),
    )
    .await
    else {
        return;
    };
    assert!(run.file_exists("out.txt"), "{}", run.explain());
    assert_eq!(decided_at_pre_tool_use(&run), ["reviewer:gate"], "{}", run.explain());
    assert!(
        run.model.model_requests().len() >= 2,
        "the model got the result back: {}",
        run.explain()
    );
}

#[tokio::test]
async fn a_call_the_reviewer_escalates_is_asked_in_the_console_and_its_answer_decides() {
    for (answer, runs) in [("reject", false), ("approve", true)] {
        let Some(run) = run_under(
            &policy(),
            CODEX_EXEC,
            Agent::ClaudeCode,
            Console::Answer(answer),
            bash("echo escalated > out.txt # needs-human"),
        )
        .await
        else {
            return;
        };
        assert_eq!(run.file_exists("out.txt"), runs, "{answer}: {}", run.explain());
        // The console's (scripted) answer decided: the call was asked.
        assert_eq!(decided_at_pre_tool_use(&run), ["script"], "{answer}: {}", run.explain());
    }
}

#[tokio::test]
async fn codex_a_call_the_reviewer_allows_runs_and_one_it_escalates_is_refused_by_the_console() {
    for (command, runs, decider) in [
        ("echo reviewed > out.txt", true, "reviewer:gate"),
        ("echo escalated > out.txt # needs-human", false, "script"),
    ] {
        let Some(run) = run_under(
            &policy(),
            CODEX_EXEC,
            Agent::Codex,
            Console::Answer("reject"),
            json!({"name": "exec_command", "arguments": {"cmd": command}}),
        )
        .await
        else {
            return;
        };
        assert_eq!(run.file_exists("out.txt"), runs, "{command}: {}", run.explain());
        assert_eq!(decided_at_pre_tool_use(&run), [decider], "{command}: {}", run.explain());
    }
}
