//! The hook bridge fails closed: a console that is down, input it cannot
//! read, an answer its agent would not honour, a console error tied to no
//! request, a tool name the console would have to rewrite — each ends in a
//! deny with a reason the model can read (or exit status 2), never in a
//! tool that runs unasked. Payloads captured from the real Claude Code and
//! Codex (`fixtures/`), through the real bridge.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/headless.rs"]
mod headless;
#[path = "hook_support/link_console.rs"]
mod link_console;

use bridge::{fixture, hook, hook_raw, pre, with_command};
use link_console::Asker;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

const DOWN: &str = "the Tether console is not running (start `tether serve`)";

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
async fn serve_without_a_policy_asks_and_with_nobody_to_answer_denies() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    let mut serve = headless::Headless::start(&socket, &["--answer", "none"]).await;
    let answer = hook(
        "claude-code",
        &socket,
        &with_command("claude-code-pre-bash.json", "ls"),
        &[],
    )
    .await;
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    let line = serve.next().await;
    assert_eq!(line["code"], "UNAVAILABLE", "asked, and nobody answered: {line}");
    assert_eq!(line["decided_by"], "no-answerer", "{line}");
}

#[tokio::test]
async fn a_hook_input_over_the_line_limit_is_denied_at_once_not_at_the_deadline() {
    let console = link_console::start(r#"{"default": "allow", "rules": []}"#, Asker::Test).await;
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
    let _serve = headless::approving(dir.path()).await;
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

#[tokio::test]
async fn a_two_person_call_nobody_could_approve_is_denied_even_with_fallback_ask() {
    // `--fallback ask` hands a call the console could not decide to Claude
    // Code's own dialog, where one person would run it: a call whose rule
    // needs two approvers must be denied instead.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("policy.json"),
        r#"{"default": "allow", "rules": [{"id": "deploys-need-two", "stage": "pre-execute", "match": {"tool": "Bash"},
            "action": {"type": "ask", "approvals": 2, "reason": "a deploy"}}]}"#,
    )
    .unwrap();
    let mut serve = headless::approving(dir.path()).await;
    let socket = dir.path().join("console.sock");
    let input = with_command("claude-code-pre-bash.json", "make deploy");
    let answer = hook("claude-code", &socket, &input, &["--fallback", "ask"]).await;
    let line = serve.next().await;
    assert_eq!(line["code"], "UNAVAILABLE", "a script is one answerer at most: {line}");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    let why = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(why.contains("needs 2 approvals"), "{why}");
}
