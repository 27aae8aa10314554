//! The journal is the audit record: every `tool/result` line says who
//! decided the call and how, and the journal starts with a header naming
//! the console and the policy (docs/journal.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tether_console::files::policy::Policy;
use tether_console::files::scenario::Scenario;
use tether_console::files::source::Document;
use tether_console::session::always::{AlwaysRule, Fit};
use tether_console::session::approval::ConsoleAnswerer;
use tether_console::session::events::{AppEvent, AppEventSender, PromptReply};
use tether_console::session::journal::{JournalHeader, JournalWriter};
use tether_console::session::replay::Session;

const TOOLS: &str = r#"{
  "scopes": [{"id": "dev", "label": "dev"}],
  "tools": [
    {"name": "write", "scope": "dev", "body": {"return": "written"}},
    {"name": "shell", "scope": "dev", "body": {"return": "clean"}},
    {"name": "delete", "scope": "dev", "body": {"return": "gone"}},
    {"name": "read", "scope": "dev", "body": {"return": "AKIA0123"}}
  ],
  "batches": []
}"#;

const RULES: &str = r#"{"rules": [
  {"id": "no-delete", "stage": "pre-execute", "match": {"tool": "delete"}, "action": {"type": "deny", "reason": "never"}},
  {"id": "ask-all", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "ask", "reason": "a write"}},
  {"id": "ask-shell", "stage": "pre-execute", "match": {"tool": "shell"}, "action": {"type": "ask"}},
  {"id": "no-etc", "stage": "guard", "match": {"args": [{"pointer": "/path", "regex": "^/etc"}]}, "action": {"type": "veto", "reason": "system files"}},
  {"id": "no-keys", "stage": "post-execute", "result": {"regex": "AKIA"}, "action": {"type": "block", "reason": "a cloud key"}}
]}"#;

fn scenario(calls: Value) -> Scenario {
    let mut value: Value = serde_json::from_str(TOOLS).unwrap();
    value["batches"] = json!([{ "scope": "dev", "max_parallelism": 1, "calls": calls }]);
    Scenario::from_document(&Document::parse("s.json".into(), value.to_string()).unwrap()).unwrap()
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn result<'a>(journal: &'a [Value], id: &str) -> &'a Value {
    journal
        .iter()
        .find(|l| l["event"] == "tool/result" && l["call_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {journal:#?}"))
}

#[tokio::test]
async fn the_journal_names_who_decided_each_call_human_always_rule_policy_guard_timeout_and_post_block() {
    let dir = tempfile::tempdir().unwrap();
    let policy_path = dir.path().join("policy.json");
    std::fs::write(&policy_path, RULES).unwrap();
    let policy = Policy::from_document(&Document::parse("policy.json".into(), RULES.to_owned()).unwrap()).unwrap();
    let calls = json!([
        {"id": "approved", "name": "write", "arguments": {"path": "notes.txt"}},
        {"id": "rejected", "name": "write", "arguments": {"path": "todo.txt"}},
        {"id": "vetoed", "name": "write", "arguments": {"path": "/etc/passwd"}},
        {"id": "kept", "name": "shell", "arguments": {"command": "git status --short"}},
        {"id": "denied", "name": "delete", "arguments": {}},
        {"id": "unanswered", "name": "write", "arguments": {"path": "late.txt"}},
        {"id": "blocked", "name": "read", "arguments": {}}
    ]);
    let session = Session::new(scenario(calls), Some(&policy)).unwrap();
    let scope = session.scopes["dev"].clone();
    let always = Arc::new(std::sync::Mutex::new(vec![AlwaysRule {
        tool: "shell".into(),
        scope_id: Some(scope.id()),
        scope_label: "dev".into(),
        session_id: None,
        agent_type: None,
        anchor: Some(Arc::from("ask-shell")),
        agent: None,
        cwd: None,
        fit: Fit::CommandPrefix {
            pointer: "/command".into(),
            prefix: vec!["git".into(), "status".into()],
            rest: true,
        },
    }]));
    // Real time (the console crate's tokio has no test clock); short, and
    // asserted on only as a lower bound.
    let timeout = Duration::from_millis(300);
    let (events, mut receiver) = AppEventSender::new();
    let _answerer = session.registry.set_approval_answerer(ConsoleAnswerer {
        events,
        timeout,
        always,
        log: session.log.clone(),
        registry: session.registry.clone(),
        notify: None,
        waiting: Default::default(),
        escalation: Default::default(),
    });
    let path = dir.path().join("j.jsonl");
    let writer = JournalWriter::open(&path, None, JournalHeader::new(Some(&policy_path), timeout)).unwrap();
    writer.record_decisions_from(&session.log);
    let human = async {
        // A prompt dropped unanswered closes; this one is kept, unanswered.
        let mut held = Vec::new();
        loop {
            let Some(batch) = receiver.recv_many().await else {
                return;
            };
            for event in batch {
                if let AppEvent::ApprovalRequested(prompt) = event {
                    let reply = match prompt.call_id.as_str() {
                        "rejected" => PromptReply::Reject {
                            reason: Some("not on a Friday".into()),
                        },
                        "unanswered" => {
                            held.push(prompt);
                            continue;
                        }
                        _ => PromptReply::Approve,
                    };
                    prompt.reply.answer(reply, &"main".into()).unwrap();
                }
            }
        }
    };
    let run = session.run_batch(0, Some(&writer));
    let reports = tokio::select! {
        reports = run => reports,
        () = human => unreachable!("the screen's channel closed"),
    };
    assert_eq!(reports.len(), 7);

    let journal = lines(&path);
    let header = &journal[0];
    assert_eq!(header["event"], "journal/header");
    assert_eq!(header["console_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(header["policy_path"], policy_path.to_str().unwrap());
    assert_eq!(
        header["policy_sha256"].as_str().unwrap().len(),
        64,
        "the policy file's sha256: {header}"
    );
    assert_eq!(header["approval_timeout_ms"], 300);

    let decided = |id: &str| {
        let line = result(&journal, id);
        (
            line["decided_by"].as_str().unwrap_or("<none>").to_owned(),
            line["stage"].as_str().unwrap_or("<none>").to_owned(),
        )
    };
    assert_eq!(decided("approved"), ("human@main".into(), "approval".into()));
    assert_eq!(decided("rejected"), ("human@main".into(), "approval".into()));
    assert_eq!(decided("vetoed"), ("guard:no-etc".into(), "guard".into()));
    assert_eq!(decided("kept"), ("always-rule: git status …".into(), "approval".into()));
    assert_eq!(decided("denied"), ("rule:no-delete".into(), "pre-execute".into()));
    assert_eq!(decided("unanswered"), ("timeout".into(), "approval".into()));
    assert_eq!(decided("blocked"), ("rule:no-keys".into(), "post-execute".into()));

    let approved = result(&journal, "approved");
    assert_eq!(approved["asked_by"], "ask-all");
    assert_eq!(approved["answered_by"], "main");
    assert_eq!(approved["answer"], "approved");
    assert!(approved["waited_ms"].is_u64(), "{approved}");
    let rejected = result(&journal, "rejected");
    assert_eq!(rejected["reason"], "not on a Friday");
    assert_eq!(rejected["code"], "DENIED");
    let vetoed = result(&journal, "vetoed");
    assert_eq!(
        (&vetoed["rule"], &vetoed["answer"]),
        (&json!("no-etc"), &json!("approved")),
        "the human approved, the guard vetoed: {vetoed}"
    );
    let kept = result(&journal, "kept");
    assert!(
        kept["always_rule"]
            .as_str()
            .unwrap()
            .contains("starts with `git status`"),
        "{kept}"
    );
    let waited = result(&journal, "unanswered")["waited_ms"].as_u64().unwrap();
    assert!((300..5_000).contains(&waited), "the wait as measured: {waited} ms");
    assert_eq!(result(&journal, "blocked")["rule"], "no-keys");
    assert_eq!(result(&journal, "denied")["rule"], "no-delete");
}

#[tokio::test]
async fn every_file_a_rotation_starts_begins_with_the_runs_header() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let calls: Vec<Value> = (0..20)
        .map(|i| json!({"id": format!("d{i}"), "name": "delete", "arguments": {"pad": "x".repeat(200)}}))
        .collect();
    let mut value: Value = serde_json::from_str(TOOLS).unwrap();
    value["batches"] = Value::Array(calls.chunks(2).map(|c| json!({"scope": "dev", "calls": c})).collect());
    let scenario = Scenario::from_document(&Document::parse("s.json".into(), value.to_string()).unwrap()).unwrap();
    let policy = Policy::from_document(&Document::parse("policy.json".into(), RULES.to_owned()).unwrap()).unwrap();
    let session = Session::new(scenario, Some(&policy)).unwrap();
    let writer = JournalWriter::open(&path, Some(1_000), JournalHeader::new(None, Duration::from_secs(9))).unwrap();
    writer.record_decisions_from(&session.log);
    for batch in 0..session.scenario.batches.len() {
        session.run_batch(batch, Some(&writer)).await;
    }
    let files = tether_console::files::journal_set::files(&path);
    assert!(files.len() > 2, "{files:?}");
    for file in &files {
        let first: Value =
            serde_json::from_str(std::fs::read_to_string(file).unwrap().lines().next().unwrap()).unwrap();
        assert_eq!(first["event"], "journal/header", "{}", file.display());
        assert_eq!(first["policy_path"], Value::Null);
    }
    let headers = tether_console::session::journal::headers(&path);
    assert_eq!(headers.len(), 1, "one run, its header repeated per file: {headers:?}");
}

#[tokio::test]
async fn a_call_whose_arguments_fail_the_schema_fails_invalid_args_without_asking() {
    let tools = r#"{
      "scopes": [{"id": "dev", "label": "dev"}],
      "tools": [{"name": "write", "scope": "dev", "parameters": {"type": "object", "required": ["path"]}, "body": {"return": "written"}}],
      "batches": [{"scope": "dev", "calls": [
        {"id": "bad", "name": "write", "arguments": {"text": "no path"}},
        {"id": "good", "name": "write", "arguments": {"path": "notes.txt"}}
      ]}]
    }"#;
    let scenario = Scenario::from_document(&Document::parse("s.json".into(), tools.to_owned()).unwrap()).unwrap();
    let policy = Policy::from_document(&Document::parse("policy.json".into(), RULES.to_owned()).unwrap()).unwrap();
    let session = Session::new(scenario, Some(&policy)).unwrap();
    let (events, mut receiver) = AppEventSender::new();
    let _answerer = session.registry.set_approval_answerer(ConsoleAnswerer {
        events,
        timeout: Duration::from_secs(5),
        always: Default::default(),
        log: session.log.clone(),
        registry: session.registry.clone(),
        notify: None,
        waiting: Default::default(),
        escalation: Default::default(),
    });
    let asked = std::sync::Mutex::new(Vec::new());
    let human = async {
        loop {
            let Some(batch) = receiver.recv_many().await else {
                return;
            };
            for event in batch {
                if let AppEvent::ApprovalRequested(prompt) = event {
                    asked.lock().unwrap().push(prompt.call_id.clone());
                    prompt.reply.answer(PromptReply::Approve, &"main".into()).unwrap();
                }
            }
        }
    };
    let reports = tokio::select! {
        reports = session.run_batch(0, None) => reports,
        () = human => unreachable!("the screen's channel closed"),
    };
    let bad = &reports[0].outcome;
    assert_eq!(bad.code(), Some(tether_tools::ToolFailureCode::InvalidArgs), "{bad:?}");
    assert!(bad.failure().unwrap().message.contains("path"), "{bad:?}");
    assert_eq!(reports[1].outcome.code(), None);
    assert_eq!(
        *asked.lock().unwrap(),
        vec!["good".to_owned()],
        "only the valid call is asked"
    );
    let trail = &reports[0].trail;
    assert!(
        trail
            .iter()
            .all(|e| !matches!(e, tether_console::session::provenance::TrailEntry::Human { .. })),
        "no human answered: {trail:?}"
    );
    assert!(
        trail.contains(&tether_console::session::provenance::TrailEntry::NotAskedInvalidArgs),
        "{trail:?}"
    );
    assert_eq!(reports[0].decided_by, "schema");
}

/// `--answer approve|reject` and a scenario's own `approval` are a script
/// standing in for the human: a call whose arguments fail the schema is not
/// "answered" by it either, in a replay or in `tether serve --headless`.
#[test]
fn a_scripted_answer_never_answers_a_call_whose_arguments_fail_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.json");
    std::fs::write(
        &scenario,
        r#"{
      "scopes": [{"id": "dev", "label": "dev"}],
      "tools": [{"name": "write", "scope": "dev", "parameters": {"type": "object", "required": ["path"]}, "body": {"return": "written"}}],
      "batches": [{"scope": "dev", "calls": [
        {"id": "bad", "name": "write", "arguments": {"text": "no path"}, "approval": {"reject": "scripted no"}},
        {"id": "good", "name": "write", "arguments": {"path": "notes.txt"}}
      ]}]
    }"#,
    )
    .unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, RULES).unwrap();
    for answer in ["approve", "reject"] {
        let journal = dir.path().join(format!("{answer}.jsonl"));
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
            .args([
                "replay",
                scenario.to_str().unwrap(),
                "--policy",
                policy.to_str().unwrap(),
            ])
            .args([
                "--headless",
                "--json",
                "--answer",
                answer,
                "--journal",
                journal.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let journal = lines(&journal);
        let bad = result(&journal, "bad");
        assert_eq!(
            (&bad["code"], &bad["decided_by"], &bad["stage"]),
            (&json!("INVALID_ARGS"), &json!("schema"), &json!("arguments")),
            "--answer {answer}: {bad}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            bad.get("answered_by").is_none() && bad.get("answer").is_none(),
            "nobody answered it: {bad}"
        );
        let good = result(&journal, "good");
        assert_eq!(good["answered_by"], "script", "--answer {answer}: {good}");
    }
}
