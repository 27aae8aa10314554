//! `tether hook`: payloads captured from the real Claude Code 2.1.197 and
//! Codex 0.171.0 (`fixtures/`) through the bridge against a console started
//! by the test; each decision path gives exactly the answer that agent
//! honours (`hooks_real_agents.rs` proves those answers with the real CLIs),
//! and the journal holds the call. How the bridge fails closed is in
//! `hook_fails_closed.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/headless.rs"]
mod headless;
#[path = "hook_support/link_console.rs"]
mod link_console;

use bridge::{fixture, hook, pre, with_command};
use link_console::{Asker, LinkConsole};
use serde_json::{Value, json};
use tether_tools::ApprovalAnswer;

/// Calls no rule names are allowed, so each test sees its own rules' work.
const POLICY: &str = r#"{"default": "allow", "rules": [
  {"id": "no-rm", "stage": "pre-execute", "match": {"tool": "Bash", "args": [{"pointer": "/command", "regex": "rm -rf"}]}, "action": {"type": "deny", "reason": "no recursive deletes"}},
  {"id": "writes-ask", "stage": "pre-execute", "match": {"tool": "{Write,Bash}", "args": [{"pointer": "/command", "regex": "touch|> out"}]}, "action": {"type": "ask", "reason": "a file changes"}},
  {"id": "write-tool-asks", "stage": "pre-execute", "match": {"tool": "Write"}, "action": {"type": "ask", "reason": "a file changes"}},
  {"id": "no-keys", "stage": "post-execute", "result": {"regex": "AKIA[0-9A-Z]{16}"}, "action": {"type": "block", "reason": "the result holds a cloud key"}}
]}"#;

async fn console() -> LinkConsole {
    link_console::start(POLICY, Asker::Test).await
}

/// A captured PostToolUse payload whose every output string holds a cloud key.
fn with_key(name: &str) -> (Value, String) {
    fn salt(value: &mut Value) {
        match value {
            Value::String(s) => s.push_str(" AKIAABCDEFGHIJKLMNOP"),
            Value::Array(items) => items.iter_mut().for_each(salt),
            Value::Object(map) => map
                .iter_mut()
                .filter(|(k, _)| !matches!(k.as_str(), "type" | "mode"))
                .for_each(|(_, v)| salt(v)),
            _ => {}
        }
    }
    let mut payload: Value = serde_json::from_str(&fixture(name)).unwrap();
    salt(&mut payload["tool_response"]);
    let text = payload.to_string();
    (payload, text)
}

/// Runs the hook while a human answers the one approval it raises.
async fn with_answer(console: &mut LinkConsole, input: &str, answer: ApprovalAnswer, extra: &[&str]) -> Value {
    with_answer_for("claude-code", console, input, answer, extra).await
}

async fn with_answer_for(
    agent: &'static str,
    console: &mut LinkConsole,
    input: &str,
    answer: ApprovalAnswer,
    extra: &[&str],
) -> Value {
    let path = console.path.clone();
    let input = input.to_owned();
    let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
    let run = tokio::spawn(async move {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        hook(agent, &path, &input, &extra).await
    });
    let pending = console.asked().await;
    assert_eq!(pending.request.reason(), Some("a file changes"));
    pending.reply.send(answer).unwrap();
    run.await.unwrap()
}

#[tokio::test]
async fn a_call_nobody_objects_to_is_allowed_in_each_agents_own_form() {
    let console = console().await;
    let claude = hook(
        "claude-code",
        &console.path,
        &with_command("claude-code-pre-bash.json", "ls"),
        &[],
    )
    .await;
    assert_eq!(claude, pre("allow", "allowed by Tether (body)"));
    // Codex rejects `permissionDecision: allow` without `updatedInput` as
    // unsupported (and runs the tool anyway): its allow is no decision.
    let codex = hook("codex", &console.path, &with_command("codex-pre-bash.json", "ls"), &[]).await;
    assert_eq!(codex, json!({}));
    console.stop.cancel();
}

#[tokio::test]
async fn a_rule_denies_with_its_reason_for_either_agent() {
    let console = console().await;
    let claude = hook(
        "claude-code",
        &console.path,
        &with_command("claude-code-pre-bash.json", "rm -rf build"),
        &[],
    )
    .await;
    assert_eq!(claude, pre("deny", "no recursive deletes"));
    let codex = hook(
        "codex",
        &console.path,
        &with_command("codex-pre-bash.json", "rm -rf build"),
        &[],
    )
    .await;
    assert_eq!(codex, pre("deny", "no recursive deletes"));
}

#[tokio::test]
async fn allow_after_a_human_approves_and_the_journal_holds_the_call() {
    let mut console = console().await;
    let output = with_answer(
        &mut console,
        &fixture("claude-code-pre-write.json"),
        ApprovalAnswer::Approved,
        &[],
    )
    .await;
    assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "allow");
    let journal = std::fs::read_to_string(&console.journal).unwrap();
    let events: Vec<Value> = journal.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let id = serde_json::from_str::<Value>(&fixture("claude-code-pre-write.json")).unwrap()["tool_use_id"].clone();
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "tool/call" && e["call_id"] == id && e["name"] == "Write")
    );
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "tool/result" && e["call_id"] == id && e["code"].is_null())
    );
}

#[tokio::test]
async fn a_human_rejection_denies_with_the_humans_reason_for_either_agent() {
    let mut console = console().await;
    let answer = || ApprovalAnswer::Rejected {
        reason: Some("not in main".into()),
    };
    let claude = with_answer(&mut console, &fixture("claude-code-pre-write.json"), answer(), &[]).await;
    assert_eq!(claude, pre("deny", "rejected by the approver: not in main"));
    let codex = with_answer_for("codex", &mut console, &fixture("codex-pre-bash.json"), answer(), &[]).await;
    assert_eq!(codex, pre("deny", "rejected by the approver: not in main"));
}

#[tokio::test]
async fn an_approval_timeout_denies_unless_claude_code_is_told_to_ask() {
    let mut console = console().await;
    let timed_out = || ApprovalAnswer::Unavailable {
        reason: "approval timed out".into(),
    };
    let why = "Tether could not decide (UNAVAILABLE: approval timed out)";
    let claude = with_answer(&mut console, &fixture("claude-code-pre-write.json"), timed_out(), &[]).await;
    assert_eq!(claude, pre("deny", why));
    let codex = with_answer_for("codex", &mut console, &fixture("codex-pre-bash.json"), timed_out(), &[]).await;
    assert_eq!(codex, pre("deny", why));
    let ask = with_answer(
        &mut console,
        &fixture("claude-code-pre-write.json"),
        timed_out(),
        &["--fallback", "ask"],
    )
    .await;
    assert_eq!(ask, pre("ask", why));
}

#[tokio::test]
async fn claude_code_sees_a_blocked_result_replaced_in_the_shape_it_sent() {
    let console = console().await;
    let reason = "the result holds a cloud key";
    for name in [
        "claude-code-post-bash.json",
        "claude-code-post-read.json",
        "claude-code-post-write.json",
        "claude-code-post-grep.json",
        "claude-code-post-grep-content.json",
        "claude-code-post-mcp.json",
    ] {
        let (payload, input) = with_key(name);
        let output = hook("claude-code", &console.path, &input, &[]).await;
        assert!(!output.to_string().contains("AKIA"), "{name}: the key leaks: {output}");
        let specific = &output["hookSpecificOutput"];
        assert_eq!(specific["hookEventName"], "PostToolUse", "{name}: {output}");
        let received = &payload["tool_response"];
        let replaced = &specific["updatedToolOutput"];
        match name {
            "claude-code-post-mcp.json" => {
                assert_eq!(
                    specific["updatedMCPToolOutput"],
                    json!([{"type": "text", "text": reason}])
                );
            }
            "claude-code-post-bash.json" => {
                assert_eq!(replaced["stdout"], reason);
                let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
                assert_eq!(keys(replaced), keys(received), "Bash's shape");
            }
            "claude-code-post-read.json" => {
                assert_eq!(replaced["type"], "text");
                assert_eq!(replaced["file"]["content"], reason);
                assert_eq!(replaced["file"]["numLines"], 1);
            }
            "claude-code-post-write.json" => {
                assert_eq!(replaced["type"], received["type"]);
                assert_eq!(replaced["content"], reason);
                assert_eq!(replaced["structuredPatch"], json!([]));
            }
            "claude-code-post-grep.json" => {
                assert_eq!(replaced["mode"], "files_with_matches");
                assert_eq!(replaced["filenames"], json!([reason]));
                assert_eq!(replaced["numFiles"], 1);
            }
            _ => {
                assert_eq!(replaced["mode"], "content");
                assert_eq!(replaced["content"], reason);
            }
        }
    }
    let clean = hook(
        "claude-code",
        &console.path,
        &fixture("claude-code-post-read.json"),
        &[],
    )
    .await;
    assert_eq!(clean, json!({}), "a clean result goes through");
}

#[tokio::test]
async fn codex_sees_a_blocked_result_replaced_by_the_reason() {
    let console = console().await;
    for name in ["codex-post-bash.json", "codex-post-apply-patch.json"] {
        let output = hook("codex", &console.path, &with_key(name).1, &[]).await;
        assert_eq!(
            output,
            json!({"decision": "block", "reason": "the result holds a cloud key"})
        );
    }
    let clean = hook("codex", &console.path, &fixture("codex-post-bash.json"), &[]).await;
    assert_eq!(clean, json!({}));
}

#[tokio::test]
async fn a_permission_request_reaches_the_human_and_the_answer_goes_back() {
    let mut console = console().await;
    for (agent, name) in [
        ("claude-code", "claude-code-permission-bash.json"),
        ("codex", "codex-permission-bash.json"),
    ] {
        let allowed = with_answer_for(agent, &mut console, &fixture(name), ApprovalAnswer::Approved, &[]).await;
        assert_eq!(
            allowed,
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})
        );
        let rejected = ApprovalAnswer::Rejected {
            reason: Some("no".into()),
        };
        let denied = with_answer_for(agent, &mut console, &fixture(name), rejected, &[]).await;
        assert_eq!(
            denied,
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                   "decision": {"behavior": "deny", "message": "rejected by the approver: no"}}})
        );
    }
}

#[tokio::test]
async fn one_agent_session_keeps_one_scope_across_hook_processes() {
    let console = console().await;
    hook(
        "claude-code",
        &console.path,
        &with_command("claude-code-pre-bash.json", "ls"),
        &[],
    )
    .await;
    hook(
        "claude-code",
        &console.path,
        &fixture("claude-code-post-read.json"),
        &[],
    )
    .await;
    hook("codex", &console.path, &with_command("codex-pre-bash.json", "ls"), &[]).await;
    // Bash and Read in the Claude Code session, Bash in the Codex one.
    assert_eq!(console.registry.tool_count(), 3);
}

#[tokio::test]
async fn headless_serve_prints_a_line_per_hook_decision() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    std::fs::write(dir.path().join("policy.json"), POLICY).unwrap();
    let policy = dir.path().join("policy.json");
    let mut serve =
        headless::Headless::start(&socket, &["--answer", "reject", "--policy", policy.to_str().unwrap()]).await;
    let answer = hook("codex", &socket, &fixture("codex-pre-bash.json"), &[]).await;
    assert_eq!(answer, pre("deny", "rejected by the approver"));
    let line = serve.next().await;
    assert_eq!(line["hook"], "PreToolUse");
    assert_eq!(line["agent"], "codex");
    assert_eq!(line["call_id"], "call_mock_1");
    assert_eq!(line["code"], "DENIED");
    assert_eq!(
        line["decided_by"], "script",
        "--answer answered, as the journal says: {line}"
    );
}

#[tokio::test]
async fn codex_approve_for_me_asks_the_human_once_for_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    std::fs::write(dir.path().join("policy.json"), POLICY).unwrap();
    let mut serve = headless::approving(dir.path()).await;
    // Codex 0.171.0 with --approve-for-me: PreToolUse, then the same call's
    // PermissionRequest (same session and turn, no tool_use_id, a description added).
    let pre = hook("codex", &socket, &fixture("codex-pre-bash-approve-for-me.json"), &[]).await;
    assert_eq!(pre, json!({}));
    let asked = serve.next().await;
    assert_eq!(
        (&asked["hook"], &asked["decided_by"]),
        (&json!("PreToolUse"), &json!("script"))
    );
    let permission = hook("codex", &socket, &fixture("codex-permission-bash.json"), &[]).await;
    assert_eq!(
        permission,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})
    );
    let answered = serve.next().await;
    assert_eq!(answered["hook"], "PermissionRequest");
    assert_eq!(
        answered["decided_by"], "script (at PreToolUse)",
        "the human was asked a second time for the same call"
    );
    // The allow has a journal record of its own, saying who gave it.
    let journal: Vec<Value> = std::fs::read_to_string(dir.path().join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let allowed: Vec<&Value> = journal.iter().filter(|l| l["event"] == "hook/permission").collect();
    assert_eq!(allowed.len(), 1, "{journal:#?}");
    assert_eq!(allowed[0]["agent"], "codex");
    assert_eq!(allowed[0]["behavior"], "allow");
    assert_eq!(allowed[0]["decided_by"], "script (at PreToolUse)");
    assert_eq!(allowed[0]["answered_by"], "script");
    assert_eq!(allowed[0]["name"], "Bash");
    // The approval is used once: another PermissionRequest is asked again.
    hook("codex", &socket, &fixture("codex-permission-bash.json"), &[]).await;
    assert_eq!(serve.next().await["decided_by"], "script");
}

/// Issue 31.1 and 31.2 through the real bridge: the rules "approve always"
/// keeps (`ls *`, `git status *`) never allow an expansion that runs code or
/// a second command after a line break; those calls are asked.
#[tokio::test]
async fn kept_command_rules_never_allow_an_expansion_or_a_second_line() {
    let kept = r#"{"rules": [
      {"id": "always-bash-1", "stage": "pre-execute", "match": {"tool": "Bash", "command": ["ls *"]}, "action": {"type": "allow"}},
      {"id": "always-bash-2", "stage": "pre-execute", "match": {"tool": "Bash", "command": ["git status *"]}, "action": {"type": "allow"}}
    ]}"#;
    let mut console = link_console::start(kept, Asker::Test).await;
    let allowed = hook(
        "claude-code",
        &console.path,
        &with_command("claude-code-pre-bash.json", "ls -la && git status"),
        &[],
    )
    .await;
    assert_eq!(allowed, pre("allow", "allowed by Tether (rule:always-bash-1)"));
    for command in [
        r"ls ${x:=\$\(touch\ /tmp/p\)}${x@P}",
        r"ls ${x:=a[\$\(touch\ /tmp/p\)]} ${PWD:x}",
        "git status\ntouch /tmp/p",
    ] {
        let path = console.path.clone();
        let input = with_command("claude-code-pre-bash.json", command);
        let run = tokio::spawn(async move { hook("claude-code", &path, &input, &[]).await });
        let pending = console.asked().await;
        assert_eq!(pending.request.execution().arguments()["command"], json!(command));
        pending.reply.send(ApprovalAnswer::Rejected { reason: None }).unwrap();
        let answer = run.await.unwrap();
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"],
            json!("deny"),
            "{command:?}: {answer}"
        );
    }
    console.stop.cancel();
}
