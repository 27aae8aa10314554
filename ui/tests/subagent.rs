//! Which subagent asked (issue 34, item 1): the hook payloads captured from
//! the real Claude Code 2.1.197 when its `Agent` tool ran an `Explore`
//! subagent that ran `Bash` (`fixtures/claude-code-*-subagent.json`) go
//! through the bridge to a console started by the test. A rule on
//! `match.agent_type` decides the subagent's call and not the main agent's
//! same call; the journal names the subagent; a replay of that journal
//! keeps it; `tether check` and rule examples know the field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod app_support;
#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/link_console.rs"]
mod link_console;
mod replay_support;

use std::path::Path;

use link_console::{Asker, LinkConsole};
use replay_support::{json_lines, replay, tether};
use serde_json::{Value, json};

/// Subagents of type `Expl*` may not write files; nobody else is asked.
const POLICY: &str = r#"{"default": "allow", "rules": [
  {"id": "explorers-only-look", "stage": "pre-execute",
   "match": {"tool": "Bash", "agent_type": "Expl*", "command": ["echo *"]},
   "action": {"type": "deny", "reason": "an Explore subagent only looks"},
   "examples": {"match": [{"tool": "Bash", "agent_type": "Explore", "arguments": {"command": "echo hi > x"}}],
                "no_match": [{"tool": "Bash", "arguments": {"command": "echo hi > x"}},
                             {"tool": "Bash", "agent_type": "Plan", "arguments": {"command": "echo hi > x"}}]}}
]}"#;

async fn console(policy: &str) -> LinkConsole {
    link_console::start(policy, Asker::Nobody).await
}

fn fixture(name: &str) -> Value {
    serde_json::from_str(&bridge::fixture(name)).unwrap()
}

async fn hook(agent: &str, socket: &Path, input: &Value) -> Value {
    bridge::hook_raw(agent, socket, &input.to_string(), &[]).await.answer()
}

fn decision(answer: &Value) -> (&str, &str) {
    let out = &answer["hookSpecificOutput"];
    (
        out["permissionDecision"].as_str().unwrap_or("none"),
        out["permissionDecisionReason"].as_str().unwrap_or(""),
    )
}

fn journal(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_captured_payloads_carry_the_subagent_only_for_its_own_calls() {
    let codex = fixture("codex-pre-bash-subagent.json");
    let spawn = fixture("codex-pre-spawn-agent.json");
    assert!(spawn.get("agent_type").is_none(), "the root agent spawns it");
    assert_eq!(
        (&codex["agent_type"], &codex["session_id"]),
        (&json!("default"), &spawn["session_id"])
    );
    let main = fixture("claude-code-pre-agent.json");
    assert_eq!(main["tool_name"], "Agent", "the main agent starts the subagent");
    assert!(main.get("agent_type").is_none() && main.get("agent_id").is_none());
    for name in [
        "claude-code-pre-bash-subagent.json",
        "claude-code-post-bash-subagent.json",
    ] {
        let sub = fixture(name);
        assert_eq!(sub["agent_type"], "Explore", "{name}");
        assert!(sub["agent_id"].as_str().is_some_and(|id| id.len() > 4), "{name}");
        assert_eq!(sub["session_id"], main["session_id"], "one session: {name}");
    }
}

#[tokio::test]
async fn a_rule_on_agent_type_denies_the_subagents_call_and_not_the_main_agents_same_call() {
    let console = console(POLICY).await;
    let sub = fixture("claude-code-pre-bash-subagent.json");
    assert_eq!(
        decision(&hook("claude-code", &console.path, &sub).await),
        ("deny", "an Explore subagent only looks")
    );
    // The same command from the main agent: no subagent, no match.
    let mut main = sub.clone();
    main.as_object_mut().unwrap().remove("agent_type");
    main.as_object_mut().unwrap().remove("agent_id");
    main["tool_use_id"] = json!("toolu_main");
    assert_eq!(decision(&hook("claude-code", &console.path, &main).await).0, "allow");
    // Codex 0.171.0 sends the same two fields for a subagent's call
    // (`spawn_agent` of its multi-agent tools; the type is `default`).
    let codex = fixture("codex-pre-bash-subagent.json");
    assert_eq!(decision(&hook("codex", &console.path, &codex).await), ("none", ""));
    let mut explorer = codex.clone();
    explorer["agent_type"] = json!("Explorer");
    assert_eq!(
        decision(&hook("codex", &console.path, &explorer).await),
        ("deny", "an Explore subagent only looks")
    );
    console.stop.cancel();
}

#[tokio::test]
async fn the_journal_names_the_subagent_of_each_call_and_a_replay_keeps_it() {
    let console = console(r#"{"default": "allow", "rules": []}"#).await;
    let sub = fixture("claude-code-pre-bash-subagent.json");
    let mut main = fixture("claude-code-pre-bash.json");
    main["tool_input"]["command"] = sub["tool_input"]["command"].clone();
    for input in [&sub, &main] {
        assert_eq!(decision(&hook("claude-code", &console.path, input).await).0, "allow");
    }
    hook(
        "claude-code",
        &console.path,
        &fixture("claude-code-post-bash-subagent.json"),
    )
    .await;
    let lines = journal(&console.journal);
    let call = lines
        .iter()
        .find(|l| l["event"] == "tool/call" && l["call_id"] == sub["tool_use_id"])
        .unwrap();
    assert_eq!(call["invocation_context"]["agent_type"], "Explore", "{call}");
    assert_eq!(call["invocation_context"]["agent_id"], sub["agent_id"], "{call}");
    let main_call = lines
        .iter()
        .find(|l| l["event"] == "tool/call" && l["call_id"] == main["tool_use_id"])
        .unwrap();
    assert!(
        main_call["invocation_context"].get("agent_type").is_none(),
        "{main_call}"
    );
    let post = lines.iter().find(|l| l["event"] == "hook/post").unwrap();
    assert_eq!(
        (&post["agent_type"], &post["agent_id"]),
        (&json!("Explore"), &sub["agent_id"])
    );

    // Replayed against a policy that narrows the subagent: only its call changes.
    let policy = console.dir.path().join("stricter.json");
    std::fs::write(&policy, POLICY).unwrap();
    let output = replay(console.journal.to_str().unwrap(), policy.to_str().unwrap(), &["--json"]);
    let printed = json_lines(&output);
    let code_of = |id: &Value| {
        printed
            .iter()
            .find(|l| l["call_id"] == *id)
            .map(|l| l["code"].clone())
            .unwrap_or_else(|| panic!("no line for {id}: {printed:#?}"))
    };
    assert_eq!(code_of(&sub["tool_use_id"]), json!("DENIED"), "{printed:#?}");
    assert_eq!(code_of(&main["tool_use_id"]), Value::Null, "{printed:#?}");
    assert_eq!(output.status.code(), Some(1), "the subagent's outcome changed");
    console.stop.cancel();
}

#[test]
fn tether_check_knows_agent_type_its_globs_and_its_examples() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, POLICY).unwrap();
    let output = tether(&["check", good.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"rules": [
  {"id": "a", "stage": "pre-execute", "match": {"agent_type": "Expl[ore"}, "action": {"type": "deny", "reason": "r"}},
  {"id": "b", "stage": "pre-execute", "match": {"agent_type": "Explore"}, "action": {"type": "deny", "reason": "r"},
   "examples": {"match": [{"tool": "Bash"}]}}
]}"#,
    )
    .unwrap();
    let output = tether(&["check", bad.to_str().unwrap()]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("bad.json:2:") && said.contains("invalid subagent-type glob"),
        "{said}"
    );
    assert!(
        said.contains("bad.json:4:") && said.contains("no subagent made it"),
        "the example's mismatch says why: {said}"
    );
}

/// `a` on a subagent's prompt offers rules for that subagent type first; the
/// one added approves that subagent's next such call and not the main
/// agent's, which is still asked.
#[test]
fn an_always_rule_from_a_subagents_prompt_is_narrowed_to_its_type() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use tether_console::subagent::Subagent;
    use tether_console::tui::app::{ANSWER_GUARD, App, AppEvent, Overlay, PromptReply};

    let mut app = app_support::app();
    let ask = |app: &mut App, id: u64, subagent: Option<Subagent>| {
        let (mut prompt, receiver) = app_support::request(id, "Bash", r#"{"command": "git status"}"#, app.now);
        prompt.scope_label = "claude-code 2cea18a0".into();
        prompt.scope_id = Some(7);
        prompt.agent = Some("2cea18a0".into());
        prompt.subagent = subagent;
        prompt.deadline = app.now + std::time::Duration::from_secs(60);
        app.update(AppEvent::ApprovalRequested(Box::new(prompt)));
        app.tick(app.now + ANSWER_GUARD);
        receiver
    };
    let explore = Subagent {
        kind: "Explore".into(),
        id: Some("aed64e52aca1f6d0c".into()),
    };
    let mut first = ask(&mut app, 1, Some(explore.clone()));
    app.handle_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
    let Overlay::Always { choices, .. } = &app.overlay else {
        panic!("no chooser: {:?}", app.overlay);
    };
    let narrowed = choices.iter().take_while(|c| c.agent_type.is_some()).count();
    assert!(narrowed > 0 && narrowed * 2 == choices.len(), "{choices:#?}");
    assert!(choices[0].describe().contains(r#"made by subagent "Explore""#));
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(matches!(
        first.try_recv().unwrap().reply,
        PromptReply::ApproveAlways { .. }
    ));
    // The same call from the main agent is asked; from another Explore run it is covered.
    let mut main = ask(&mut app, 2, None);
    let mut again = ask(
        &mut app,
        3,
        Some(Subagent {
            id: Some("bbbb".into()),
            ..explore
        }),
    );
    let rule = app.always.lock().unwrap()[0].clone();
    assert_eq!(rule.agent_type.as_deref(), Some("Explore"));
    assert!(rule.matches_prompt(app.prompts.get(3).unwrap()));
    assert!(!rule.matches_prompt(app.prompts.get(2).unwrap()));
    assert!(main.try_recv().is_err() && again.try_recv().is_err());
}

/// A scenario's call can say which subagent makes it, so a policy's
/// `agent_type` rules are tested headless like any other.
#[test]
fn a_scenario_call_made_by_a_subagent_is_decided_by_agent_type_rules() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.json");
    std::fs::write(
        &scenario,
        r#"{
      "tools": [{"name": "Bash", "body": {"return": "ran"}}],
      "batches": [{"calls": [
        {"id": "main", "name": "Bash", "arguments": {"command": "echo hi > x"}, "expect": {"code": null}},
        {"id": "sub", "name": "Bash", "arguments": {"command": "echo hi > x"}, "agent_type": "Explore", "agent_id": "aed64e52",
         "expect": {"code": "DENIED"}}
      ]}]
    }"#,
    )
    .unwrap();
    let policy = dir.path().join("p.json");
    std::fs::write(&policy, POLICY).unwrap();
    let output = replay(scenario.to_str().unwrap(), policy.to_str().unwrap(), &["--json"]);
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "every expectation holds:\n{printed}");
    assert!(printed.contains("rule:explorers-only-look"), "{printed}");
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"tools": [{"name": "t", "body": {"return": 1}}], "batches": [{"calls": [{"id": "c", "name": "t", "agent_type": 7}]}]}"#,
    )
    .unwrap();
    let output = tether(&["check", bad.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && said.contains("bad.json:1:"), "{said}");
}

/// `tether send` batch files say which subagent makes a call too; the
/// link carries it to the rules.
#[tokio::test]
async fn tether_send_carries_a_calls_subagent_to_the_rules() {
    let console = console(POLICY).await;
    let batch = console.dir.path().join("batch.json");
    std::fs::write(
        &batch,
        json!({
            "session": {"session_id": "agent-1"},
            "tools": [{"name": "Bash", "body": {"return": "ran"}}],
            "calls": [
                {"id": "main", "name": "Bash", "arguments": {"command": "echo hi > x"}},
                {"id": "sub", "name": "Bash", "arguments": {"command": "echo hi > x"}, "agent_type": "Explore", "agent_id": "a7f3"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args([
            "send",
            batch.to_str().unwrap(),
            "--socket",
            console.path.to_str().unwrap(),
        ])
        .output()
        .await
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<Value> = printed.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let code_of = |id: &str| lines.iter().find(|l| l["call_id"] == id).map(|l| l["code"].clone());
    assert_eq!(code_of("main"), Some(Value::Null), "{printed}");
    assert_eq!(code_of("sub"), Some(json!("DENIED")), "{printed}");
    let check = tether(&["check", batch.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    console.stop.cancel();
}
