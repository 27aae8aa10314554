//! `tether hook`: fixture payloads of each agent and event through the
//! bridge against a console started by the test; each decision path gives
//! exactly the output the agent expects, and the journal holds the call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use serde_json::{Value, json};
use tether_console::agents::link::{self, Link, socket};
use tether_console::files::policy::Policy;
use tether_console::files::source::Document;
use tether_console::session::provenance::DecisionLog;
use tether_tools::{ApprovalAnswer, ToolRegistry};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

const POLICY: &str = r#"{"rules": [
  {"id": "no-rm", "stage": "pre-execute", "match": {"tool": "{Bash,shell}", "args": [{"pointer": "/command", "regex": "rm -rf"}]}, "action": {"type": "deny", "reason": "no recursive deletes"}},
  {"id": "writes-ask", "stage": "pre-execute", "match": {"tool": "Write"}, "action": {"type": "ask", "reason": "a file changes"}},
  {"id": "no-keys", "stage": "post-execute", "result": {"regex": "AKIA[0-9A-Z]{16}"}, "action": {"type": "block", "reason": "the result holds a cloud key"}}
]}"#;

struct Console {
    path: PathBuf,
    journal: PathBuf,
    registry: ToolRegistry,
    requests: tokio::sync::mpsc::UnboundedReceiver<tether_tools::PendingApproval>,
    stop: CancellationToken,
    _dir: tempfile::TempDir,
    _handles: Vec<tether_tools::Registration>,
}

async fn console() -> Console {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tether").join("console.sock");
    let journal = dir.path().join("journal.jsonl");
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let policy = Policy::from_document(&Document::parse("p.json".into(), POLICY.into()).unwrap()).unwrap();
    let mut handles = tether_console::session::policy::install(&registry, &policy, &log);
    let (answerer, requests) = tether_tools::pipeline::approval::channel();
    handles.push(registry.set_approval_answerer(answerer));
    let mut link = Link::new(registry.clone(), log);
    link.journal = Some(Arc::new(
        tether_console::session::journal::open(&journal).await.unwrap(),
    ));
    let stop = CancellationToken::new();
    tokio::spawn(link::serve(
        Arc::new(link),
        socket::bind(&path).await.unwrap(),
        stop.clone(),
    ));
    Console {
        path,
        journal,
        registry,
        requests,
        stop,
        _dir: dir,
        _handles: handles,
    }
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).unwrap()
}

async fn hook(agent: &str, socket: &Path, input: &str, extra: &[&str]) -> Value {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(std::env::temp_dir().join("tether-hook-test-logs"))
        .args(["hook", agent, "--socket", socket.to_str().unwrap()])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert!(output.status.success(), "the bridge always exits 0");
    serde_json::from_slice(&output.stdout).unwrap()
}

fn pre(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}})
}

/// Runs the hook while a human answers the one approval it raises.
async fn with_answer(console: &mut Console, input: &str, answer: ApprovalAnswer, extra: &[&str]) -> Value {
    let path = console.path.clone();
    let input = input.to_owned();
    let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
    let run = tokio::spawn(async move {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        hook("claude-code", &path, &input, &extra).await
    });
    let pending = console.requests.recv().await.unwrap();
    assert_eq!(pending.request.reason(), Some("a file changes"));
    pending.reply.send(answer).unwrap();
    run.await.unwrap()
}

#[tokio::test]
async fn a_call_nobody_objects_to_is_allowed() {
    let console = console().await;
    let output = hook("claude-code", &console.path, &fixture("claude-code-pre-bash.json"), &[]).await;
    assert_eq!(output, pre("allow", "allowed by Tether (body)"));
    console.stop.cancel();
}

#[tokio::test]
async fn a_rule_denies_with_its_reason_for_either_agent() {
    let console = console().await;
    let codex = hook("codex", &console.path, &fixture("codex-pre-shell.json"), &[]).await;
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
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "tool/call" && e["call_id"] == "toolu_01WRITEabc" && e["name"] == "Write")
    );
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "tool/result" && e["call_id"] == "toolu_01WRITEabc" && e["code"].is_null())
    );
}

#[tokio::test]
async fn a_human_rejection_denies_with_the_humans_reason() {
    let mut console = console().await;
    let answer = ApprovalAnswer::Rejected {
        reason: Some("not in main".into()),
    };
    let output = with_answer(&mut console, &fixture("claude-code-pre-write.json"), answer, &[]).await;
    assert_eq!(output, pre("deny", "rejected by the approver: not in main"));
}

#[tokio::test]
async fn an_approval_timeout_falls_back_to_ask_or_to_deny_as_configured() {
    let mut console = console().await;
    let timed_out = || ApprovalAnswer::Unavailable {
        reason: "approval timed out".into(),
    };
    let ask = with_answer(&mut console, &fixture("claude-code-pre-write.json"), timed_out(), &[]).await;
    assert_eq!(
        ask,
        pre("ask", "Tether could not decide (UNAVAILABLE: approval timed out)")
    );
    let deny = with_answer(
        &mut console,
        &fixture("claude-code-pre-write.json"),
        timed_out(),
        &["--fallback", "deny"],
    )
    .await;
    assert_eq!(
        deny,
        pre("deny", "Tether could not decide (UNAVAILABLE: approval timed out)")
    );
}

#[tokio::test]
async fn post_tool_use_is_blocked_by_post_execute_policy() {
    let console = console().await;
    let output = hook(
        "claude-code",
        &console.path,
        &fixture("claude-code-post-read.json"),
        &[],
    )
    .await;
    assert_eq!(
        output,
        json!({"decision": "block", "reason": "the result holds a cloud key"})
    );
    let mut clean: Value = serde_json::from_str(&fixture("claude-code-post-read.json")).unwrap();
    clean["tool_response"] = json!({"type": "text", "file": {"content": "REGION=eu-west-1"}});
    let output = hook("claude-code", &console.path, &clean.to_string(), &[]).await;
    assert_eq!(output, json!({}));
    let codex = hook("codex", &console.path, &fixture("codex-post-shell.json"), &[]).await;
    assert_eq!(
        codex,
        json!({"decision": "block", "reason": "the result holds a cloud key"})
    );
}

#[tokio::test]
async fn one_agent_session_keeps_one_scope_across_hook_processes() {
    let console = console().await;
    hook("claude-code", &console.path, &fixture("claude-code-pre-bash.json"), &[]).await;
    hook(
        "claude-code",
        &console.path,
        &fixture("claude-code-post-read.json"),
        &[],
    )
    .await;
    hook("codex", &console.path, &fixture("codex-pre-shell.json"), &[]).await;
    // Bash and Read in the Claude Code session, shell in the Codex one.
    assert_eq!(console.registry.tool_count(), 3);
}

#[tokio::test]
async fn a_console_that_is_down_or_malformed_input_gives_the_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nobody.sock");
    let down = hook("claude-code", &missing, &fixture("claude-code-pre-bash.json"), &[]).await;
    assert_eq!(down["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(
        down["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("console unreachable")
    );
    let garbage = hook("claude-code", &missing, "{not json", &["--fallback", "deny"]).await;
    assert_eq!(garbage["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        garbage["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("malformed hook input")
    );
    let post_down = hook("claude-code", &missing, &fixture("claude-code-post-read.json"), &[]).await;
    assert_eq!(post_down, json!({}), "ask on PostToolUse means: do not block");
}

#[test]
fn install_merges_the_bridge_without_clobbering_other_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = json!({"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]}]}});
    std::fs::write(&settings, mine.to_string()).unwrap();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
            .args([
                "hook",
                "install",
                "claude-code",
                "--write",
                "--project",
                dir.path().to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    assert!(run().status.success());
    assert!(run().status.success(), "a second install changes nothing");
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["model"], "opus");
    let pre = merged["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{merged:#}");
    assert_eq!(pre[0]["hooks"][0]["command"], "my-linter");
    assert_eq!(pre[1]["hooks"][0]["command"], "tether hook claude-code");
    assert_eq!(merged["hooks"]["PostToolUse"].as_array().unwrap().len(), 1);
    std::fs::write(&settings, "{broken").unwrap();
    let refused = run();
    assert!(!refused.status.success());
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{broken",
        "nothing was changed"
    );
}
