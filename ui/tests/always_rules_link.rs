//! "Approve always" for a native agent: the rule binds to the agent's
//! session id and scope label, so it still applies when the agent connects
//! again (each `tether send` is a new connection), and the journal and the
//! agent are told the always-rule decided, not a human.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tether_console::agents::link::{self, Link, client, socket};
use tether_console::files::policy::Policy;
use tether_console::files::source::Document;
use tether_console::session::always::{AlwaysRule, AlwaysRules};
use tether_console::session::approval::ConsoleAnswerer;
use tether_console::session::events::{AppEvent, AppEventSender, PromptReply};
use tether_console::session::journal::{JournalHeader, JournalWriter};
use tether_console::session::provenance::DecisionLog;
use tether_tools::ToolRegistry;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const ASK_SHELL: &str = r#"{"rules": [{"id": "ask-shell", "stage": "pre-execute", "match": {"tool": "{shell,Bash}"}, "action": {"type": "ask"}}]}"#;

fn batch_file(dir: &Path, session: &str, call_id: &str, command: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{call_id}.json"));
    let batch = json!({
        "session": {"session_id": session},
        "tools": [{"name": "shell", "body": {"return": "done"}}],
        "calls": [{"id": call_id, "name": "shell", "arguments": {"command": command}}]
    });
    std::fs::write(&path, batch.to_string()).unwrap();
    path
}

/// Runs `tether send` for `batch` and returns its one outcome line.
async fn send(socket: &Path, batch: &Path) -> Value {
    let mut out = Vec::new();
    client::send(socket, batch, &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The human at the console: the first prompt is answered by adding the
/// command-prefix rule offered for it; every prompt is reported on `asked`.
async fn human(
    mut events: tether_console::session::events::AppEventReceiver,
    always: AlwaysRules,
    asked: mpsc::UnboundedSender<String>,
) {
    while let Some(batch) = events.recv_many().await {
        for event in batch {
            if let AppEvent::ApprovalRequested(prompt) = event {
                let _ = asked.send(prompt.call_id.clone());
                let rule = AlwaysRule::choices_for(&prompt)
                    .into_iter()
                    .find(|r| matches!(r.fit, tether_console::session::always::Fit::CommandPrefix { .. }))
                    .unwrap();
                always.lock().unwrap().push(rule.clone());
                prompt
                    .reply
                    .answer(PromptReply::ApproveAlways { rule: Arc::new(rule) }, &"main".into())
                    .unwrap();
            }
        }
    }
}

struct Console {
    dir: tempfile::TempDir,
    path: std::path::PathBuf,
    journal: std::path::PathBuf,
    /// The call id of every prompt the human saw.
    prompts: mpsc::UnboundedReceiver<String>,
    stop: CancellationToken,
    _handles: Vec<tether_tools::Registration>,
}

impl Drop for Console {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Console {
    fn journal(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.journal)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn result(&self, call_id: &str) -> Value {
        self.journal()
            .into_iter()
            .find(|l| l["event"] == "tool/result" && l["call_id"] == call_id)
            .unwrap()
    }
}

/// A console asking for every shell command, its human adding the
/// command-prefix rule offered at the first prompt.
async fn console() -> Console {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tether").join("console.sock");
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let policy = Policy::from_document(&Document::parse("p.json".into(), ASK_SHELL.into()).unwrap()).unwrap();
    let mut handles = tether_console::session::policy::install(&registry, &policy, &log);
    let (events, receiver) = AppEventSender::new();
    let always = AlwaysRules::default();
    handles.push(registry.set_approval_answerer(ConsoleAnswerer {
        events,
        timeout: Duration::from_secs(30),
        always: Arc::clone(&always),
        log: log.clone(),
        registry: registry.clone(),
        notify: None,
        waiting: Default::default(),
        escalation: Default::default(),
    }));
    let (asked, prompts) = mpsc::unbounded_channel();
    tokio::spawn(human(receiver, Arc::clone(&always), asked));
    let journal = dir.path().join("j.jsonl");
    let mut link = Link::new(registry.clone(), log);
    link.journal = Some(Arc::new(
        JournalWriter::open(&journal, None, JournalHeader::new(None, Duration::from_secs(30))).unwrap(),
    ));
    let listener = socket::bind(&path).await.unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(link::serve(Arc::new(link), listener, stop.clone()));
    Console {
        dir,
        path,
        journal,
        prompts,
        stop,
        _handles: handles,
    }
}

#[tokio::test]
async fn an_always_rule_still_applies_when_the_agent_reconnects_with_the_same_session_id() {
    let mut console = console().await;
    let (dir, path) = (console.dir.path().to_owned(), console.path.clone());
    let first = send(&path, &batch_file(&dir, "s-1", "first", "git status")).await;
    assert_eq!(
        (first["code"].clone(), first["decided_by"].clone()),
        (Value::Null, json!("human")),
        "the human added the rule on this call"
    );
    assert_eq!(console.prompts.try_recv().unwrap(), "first", "the first call was asked");

    // The same session, a new connection (a new scope): not asked again.
    let second = send(&path, &batch_file(&dir, "s-1", "second", "git status --short")).await;
    assert_eq!(
        (second["code"].clone(), second["decided_by"].clone()),
        (Value::Null, json!("always-rule: git status …")),
        "{second}"
    );
    assert!(
        console.prompts.try_recv().is_err(),
        "the reconnected agent was asked again"
    );

    // Another session with the same tool is still asked.
    let other = send(&path, &batch_file(&dir, "s-2", "other", "git status")).await;
    assert_eq!(other["code"], Value::Null);
    assert_eq!(
        console.prompts.try_recv().unwrap(),
        "other",
        "another session's call is asked"
    );

    let first = console.result("first");
    assert_eq!(first["decided_by"], "human@main");
    assert!(first["always_rule"].as_str().unwrap().contains("git status"), "{first}");
    let second = console.result("second");
    assert_eq!(second["decided_by"], "always-rule: git status …");
    assert_eq!(second["asked_by"], "ask-shell");
    assert!(
        second["always_rule"].as_str().unwrap().contains("in scope \"s-1\""),
        "{second}"
    );
}

/// What `tether hook claude-code` prints for `input`.
async fn hook(socket: &Path, input: &Value) -> Value {
    bridge::hook_raw("claude-code", socket, &input.to_string(), &[])
        .await
        .json()
}

#[tokio::test]
async fn a_hook_call_let_through_by_an_always_rule_says_so_not_human() {
    let mut console = console().await;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-pre-bash.json");
    let mut input: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    input["tool_input"]["command"] = json!("git status");
    input["tool_use_id"] = json!("toolu_first");
    hook(&console.path, &input).await;
    assert_eq!(console.prompts.try_recv().unwrap(), "toolu_first");
    input["tool_input"]["command"] = json!("git status --short");
    input["tool_use_id"] = json!("toolu_second");
    let answer = hook(&console.path, &input).await;
    assert!(console.prompts.try_recv().is_err(), "asked again");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"], "allowed by Tether (always-rule: git status …)",
        "{answer}"
    );
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow");
    assert_eq!(
        console.result("toolu_second")["decided_by"],
        "always-rule: git status …"
    );
}
