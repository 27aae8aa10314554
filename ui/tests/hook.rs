//! `tether hook`: payloads captured from the real Claude Code 2.1.197 and
//! Codex 0.171.0 (`fixtures/`) through the bridge against a console started
//! by the test; each decision path gives exactly the answer that agent
//! honours (`hooks_real_agents.rs` proves those answers with the real CLIs),
//! and the journal holds the call.
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
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Calls no rule names are allowed, so each test sees its own rules' work.
const POLICY: &str = r#"{"default": "allow", "rules": [
  {"id": "no-rm", "stage": "pre-execute", "match": {"tool": "Bash", "args": [{"pointer": "/command", "regex": "rm -rf"}]}, "action": {"type": "deny", "reason": "no recursive deletes"}},
  {"id": "writes-ask", "stage": "pre-execute", "match": {"tool": "{Write,Bash}", "args": [{"pointer": "/command", "regex": "touch|> out"}]}, "action": {"type": "ask", "reason": "a file changes"}},
  {"id": "write-tool-asks", "stage": "pre-execute", "match": {"tool": "Write"}, "action": {"type": "ask", "reason": "a file changes"}},
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
    console_with(POLICY).await
}

async fn console_with(policy: &str) -> Console {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tether").join("console.sock");
    let journal = dir.path().join("journal.jsonl");
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let policy = Policy::from_document(&Document::parse("p.json".into(), policy.into()).unwrap()).unwrap();
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

/// What the bridge printed and its exit status.
struct Printed {
    status: i32,
    stdout: String,
    stderr: String,
}

async fn hook(agent: &str, socket: &Path, input: &str, extra: &[&str]) -> Value {
    let printed = hook_raw(agent, socket, input, extra).await;
    assert_eq!(printed.status, 0, "{}", printed.stderr);
    serde_json::from_str(&printed.stdout).unwrap()
}

async fn hook_raw(agent: &str, socket: &Path, input: &str, extra: &[&str]) -> Printed {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(std::env::temp_dir().join("tether-hook-test-logs"))
        .args(["hook", agent, "--socket", socket.to_str().unwrap()])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A bridge that refuses its arguments exits before reading.
    let _ = stdin.write_all(input.as_bytes()).await;
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    Printed {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A captured payload with another command in its `tool_input`.
fn with_command(name: &str, command: &str) -> String {
    let mut payload: Value = serde_json::from_str(&fixture(name)).unwrap();
    payload["tool_input"]["command"] = json!(command);
    payload.to_string()
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

fn pre(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}})
}

/// Runs the hook while a human answers the one approval it raises.
async fn with_answer(console: &mut Console, input: &str, answer: ApprovalAnswer, extra: &[&str]) -> Value {
    with_answer_for("claude-code", console, input, answer, extra).await
}

async fn with_answer_for(
    agent: &'static str,
    console: &mut Console,
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
    let pending = console.requests.recv().await.unwrap();
    assert_eq!(pending.request.reason(), Some("a file changes"));
    pending.reply.send(answer).unwrap();
    run.await.unwrap()
}

const DOWN: &str = "the Tether console is not running (start `tether serve`)";

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
async fn codex_refuses_fallback_ask_before_reading_anything() {
    let dir = tempfile::tempdir().unwrap();
    let refused = hook_raw("codex", &dir.path().join("s.sock"), "{}", &["--fallback", "ask"]).await;
    assert_eq!(refused.status, 2);
    assert!(
        refused.stderr.contains("Codex runs the tool when a hook answers `ask`"),
        "{}",
        refused.stderr
    );
    assert!(refused.stdout.is_empty());
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
async fn a_console_that_is_down_denies_and_says_how_to_start_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nobody.sock");
    // The reason names the socket it tried, so a user can see which console
    // was looked for.
    let down = format!("{DOWN}: nothing listens on {}", missing.display());
    let down = down.as_str();
    for (agent, name) in [
        ("claude-code", "claude-code-pre-bash.json"),
        ("codex", "codex-pre-bash.json"),
    ] {
        let refused = hook(agent, &missing, &fixture(name), &[]).await;
        assert_eq!(refused, pre("deny", down), "{agent}");
    }
    let post = hook("codex", &missing, &fixture("codex-post-bash.json"), &[]).await;
    assert_eq!(
        post,
        json!({"decision": "block", "reason": down}),
        "nobody reviewed the result"
    );
    let post = hook("claude-code", &missing, &fixture("claude-code-post-bash.json"), &[]).await;
    assert_eq!(post["hookSpecificOutput"]["updatedToolOutput"]["stdout"], down);
    let permission = hook("codex", &missing, &fixture("codex-permission-bash.json"), &[]).await;
    assert_eq!(permission["hookSpecificOutput"]["decision"]["behavior"], "deny");
    let asked = hook(
        "claude-code",
        &missing,
        &fixture("claude-code-pre-bash.json"),
        &["--fallback", "ask"],
    )
    .await;
    assert_eq!(asked, pre("ask", down));
}

#[tokio::test]
async fn input_the_bridge_cannot_read_is_refused_with_exit_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nobody.sock");
    for agent in ["claude-code", "codex"] {
        for input in ["{not json", r#"{"hook_event_name": "PreToolUse"}"#] {
            let refused = hook_raw(agent, &missing, input, &[]).await;
            assert_eq!(refused.status, 2, "{agent} {input}");
            assert!(refused.stderr.contains("malformed hook input"), "{}", refused.stderr);
        }
    }
}

#[tokio::test]
async fn input_that_is_not_json_is_named_so_not_in_the_parsers_words() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nobody.sock");
    for agent in ["claude-code", "codex"] {
        let refused = hook_raw(agent, &missing, "{not json", &[]).await;
        assert_eq!(refused.status, 2, "{agent}");
        assert!(
            refused.stderr.contains("not a JSON hook payload (line 1, column 2)"),
            "{}",
            refused.stderr
        );
        assert!(!refused.stderr.contains("key must be a string"), "{}", refused.stderr);
    }
}

#[tokio::test]
async fn headless_serve_prints_a_line_per_hook_decision() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    std::fs::write(dir.path().join("policy.json"), POLICY).unwrap();
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args([
            "serve",
            "--headless",
            "--answer",
            "reject",
            "--socket",
            socket.to_str().unwrap(),
            "--policy",
        ])
        .arg(dir.path().join("policy.json"))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(serve.stdout.take().unwrap()).lines();
    assert!(lines.next_line().await.unwrap().unwrap().contains("listening"));
    let answer = hook("codex", &socket, &fixture("codex-pre-bash.json"), &[]).await;
    assert_eq!(answer, pre("deny", "rejected by the approver"));
    let line: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
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
async fn serve_without_a_policy_asks_and_with_nobody_to_answer_denies() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args([
            "serve",
            "--headless",
            "--answer",
            "none",
            "--socket",
            socket.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(serve.stdout.take().unwrap()).lines();
    assert!(lines.next_line().await.unwrap().unwrap().contains("listening"));
    let answer = hook(
        "claude-code",
        &socket,
        &with_command("claude-code-pre-bash.json", "ls"),
        &[],
    )
    .await;
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    let line: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(line["code"], "UNAVAILABLE", "asked, and nobody answered: {line}");
    assert_eq!(line["decided_by"], "no-answerer", "{line}");
}

#[tokio::test]
async fn codex_approve_for_me_asks_the_human_once_for_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    std::fs::write(dir.path().join("policy.json"), POLICY).unwrap();
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--headless", "--answer", "approve", "--socket"])
        .arg(&socket)
        .arg("--policy")
        .arg(dir.path().join("policy.json"))
        .arg("--journal")
        .arg(dir.path().join("journal.jsonl"))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(serve.stdout.take().unwrap()).lines();
    assert!(lines.next_line().await.unwrap().unwrap().contains("listening"));
    let mut decision = async || -> Value { serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap() };
    // Codex 0.171.0 with --approve-for-me: PreToolUse, then the same call's
    // PermissionRequest (same session and turn, no tool_use_id, a description added).
    let pre = hook("codex", &socket, &fixture("codex-pre-bash-approve-for-me.json"), &[]).await;
    assert_eq!(pre, json!({}));
    let asked = decision().await;
    assert_eq!(
        (&asked["hook"], &asked["decided_by"]),
        (&json!("PreToolUse"), &json!("script"))
    );
    let permission = hook("codex", &socket, &fixture("codex-permission-bash.json"), &[]).await;
    assert_eq!(
        permission,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})
    );
    let answered = decision().await;
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
    assert_eq!(decision().await["decided_by"], "script");
}

#[tokio::test]
async fn a_hook_input_over_the_line_limit_is_denied_at_once_not_at_the_deadline() {
    let console = console().await;
    let huge = format!("echo {}", "a".repeat(1 << 20));
    for (agent, fixture_name) in [
        ("claude-code", "claude-code-pre-bash.json"),
        ("codex", "codex-pre-bash.json"),
    ] {
        let input = with_command(fixture_name, &huge);
        let started = std::time::Instant::now();
        let answer = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            hook(agent, &console.path, &input, &[]),
        )
        .await
        .unwrap_or_else(|_| panic!("{agent}: the bridge waited for its deadline"));
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        let reason = match agent {
            "claude-code" => {
                assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
                answer["hookSpecificOutput"]["permissionDecisionReason"].clone()
            }
            _ => {
                assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
                answer["hookSpecificOutput"]["permissionDecisionReason"].clone()
            }
        };
        assert!(
            reason
                .as_str()
                .unwrap()
                .contains("larger than the 1 MiB Tether can judge"),
            "{agent}: {answer}"
        );
    }
    assert_eq!(console.registry.tool_count(), 0, "nothing reached the pipeline");
}

#[tokio::test]
async fn an_error_the_console_ties_to_no_request_is_the_answer_to_the_hook() {
    // A console that cannot read the bridge's line answers `id: null` and
    // keeps the connection open: the bridge denies at once with its words.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("console.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = tokio::io::BufReader::new(read).lines();
        lines.next_line().await.unwrap();
        let error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"line longer than 1048576 bytes; it was skipped"}}"#;
        write.write_all(format!("{error}\n").as_bytes()).await.unwrap();
        // Held open, as the console holds the connection.
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        drop(write);
    });
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        hook("claude-code", &path, &fixture("claude-code-pre-bash.json"), &[]),
    )
    .await
    .expect("answered at once, not at the deadline");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("line longer than 1048576 bytes"), "{reason}");
}

/// A captured payload with another tool name (and its own tool_use_id).
fn with_tool(name: &str, tool: &str, id: &str) -> String {
    let mut payload: Value = serde_json::from_str(&fixture(name)).unwrap();
    payload["tool_name"] = json!(tool);
    payload["tool_use_id"] = json!(id);
    payload.to_string()
}

#[tokio::test]
async fn a_tool_name_the_console_would_have_to_rewrite_is_denied_not_matched_as_another_tool() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    std::fs::write(
        dir.path().join("policy.json"),
        r#"{"rules": [{"id": "read-file-is-fine", "stage": "pre-execute", "match": {"tool": "mcp__srv__read_file"}, "action": {"type": "allow"}},
                      {"id": "results-are-fine", "stage": "post-execute", "match": {"tool": "mcp__srv__read_file"}, "action": {"type": "accept"}}]}"#,
    )
    .unwrap();
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--headless", "--answer", "approve", "--socket"])
        .arg(&socket)
        .arg("--policy")
        .arg(dir.path().join("policy.json"))
        .arg("--journal")
        .arg(dir.path().join("journal.jsonl"))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(serve.stdout.take().unwrap()).lines();
    assert!(lines.next_line().await.unwrap().unwrap().contains("listening"));
    // The exact name its rule names: allowed by that rule.
    let exact = hook(
        "claude-code",
        &socket,
        &with_tool("claude-code-pre-mcp.json", "mcp__srv__read_file", "t1"),
        &[],
    )
    .await;
    assert_eq!(exact["hookSpecificOutput"]["permissionDecision"], "allow", "{exact}");
    // Names that would become `mcp__srv__read_file` once rewritten: denied,
    // saying why, whatever the policy says of read_file.
    for (n, merging) in ["mcp__srv__read file", "mcp__srv__read\u{1b}file", "mcp__srv__read/file"]
        .into_iter()
        .enumerate()
    {
        let input = with_tool("claude-code-pre-mcp.json", merging, &format!("m{n}"));
        let answer = hook("claude-code", &socket, &input, &[]).await;
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"], "deny",
            "{merging:?}: {answer}"
        );
        let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains("Tether matches tool names exactly") && reason.contains("not a name"),
            "{reason}"
        );
    }
    // A name over 64 characters would be cut: the same.
    let long = format!("mcp__srv__{}", "x".repeat(60));
    let answer = hook(
        "claude-code",
        &socket,
        &with_tool("claude-code-pre-mcp.json", &long, "m9"),
        &[],
    )
    .await;
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    // Its result is not reviewed under another tool's rules either.
    let post = hook_raw(
        "claude-code",
        &socket,
        &with_tool("claude-code-post-mcp.json", "mcp__srv__read file", "m0"),
        &[],
    )
    .await;
    assert!(
        post.stdout.contains("Tether matches tool names exactly")
            || post.stderr.contains("Tether matches tool names exactly"),
        "{} {}",
        post.stdout,
        post.stderr
    );
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
    let mut console = console_with(kept).await;
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
        let pending = console.requests.recv().await.unwrap();
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
