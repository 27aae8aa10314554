//! The journal writer's tests: what it writes, rotation, spans and declarations.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::num::NonZeroUsize;

use serde_json::{Value, json};
use tether_tools::journal::Journal;
use tether_tools::{Tool, ToolCall, ToolContext, ToolRegistrationOptions, ToolRegistry};
use tokio_util::sync::CancellationToken;

use super::*;

fn header() -> JournalHeader {
    JournalHeader::new(None, Duration::from_secs(5))
}

async fn run_batches(writer: &JournalWriter, batches: usize, calls: usize) -> Vec<(u64, Option<JournalSpan>)> {
    let registry = ToolRegistry::new();
    let tool = Tool::new(
        "echo",
        "",
        json!({"type": "object"}),
        |args: Value, _: ToolContext| async move { Ok::<_, BoxError>(args) },
    );
    let _reg = registry
        .register(
            tool,
            None,
            ToolRegistrationOptions::default().with_concurrency(|_| true),
        )
        .unwrap();
    let view = registry.seal(None);
    let mut ids = Vec::new();
    for b in 0..batches {
        let calls = (0..calls)
            .map(|i| {
                ToolCall::new(
                    format!("b{b}-c{i}"),
                    "echo",
                    format!("{{\"n\":\"{}\"}}", "x".repeat(100)),
                )
            })
            .collect();
        let outcome = registry
            .execute_batch(
                calls,
                &view,
                NonZeroUsize::new(4).unwrap(),
                Some(writer),
                &CancellationToken::new(),
            )
            .await;
        ids.push((outcome.batch_id, writer.take_span(outcome.batch_id)));
    }
    ids
}

#[tokio::test]
async fn rotation_keeps_every_record_and_never_splits_a_batch() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("j.jsonl");
    let writer = JournalWriter::open(&base, Some(2_000), header()).unwrap();
    let spans = run_batches(&writer, 12, 5).await;
    let files = journal_set::files(&base);
    assert!(files.len() > 3, "rotated into {} files", files.len());
    let mut seen_in = HashMap::new();
    for (number, path) in files.iter().enumerate() {
        let text = std::fs::read_to_string(path).unwrap();
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["event"], "journal/header", "file {number} starts with the header");
        for line in text.lines().skip(1) {
            let value: Value = serde_json::from_str(line).unwrap();
            let batch = value["batch"].as_u64().unwrap();
            let file = *seen_in.entry(batch).or_insert(number);
            assert_eq!(file, number, "batch {batch} is split between two files");
        }
    }
    let journal = Journal::parse(&journal_set::read_text(&base).unwrap()).unwrap();
    assert_eq!(journal.batches.len(), 12);
    assert!(
        journal
            .batches
            .iter()
            .all(|b| b.calls.len() == 5 && b.calls.iter().all(|c| c.outcome.is_some()))
    );
    assert_eq!(writer.open_files(), 1, "older files are closed once their batches end");
    // Every batch comes back from its span with a seek.
    let reader = writer.reader();
    for (batch_id, span) in spans {
        let span = span.expect("a finished batch has a span");
        let batch = reader.read_batch(&span).unwrap();
        assert_eq!(batch.batch, batch_id);
        assert_eq!(batch.calls.len(), 5);
        assert_eq!(
            batch.calls[4].outcome.as_ref().unwrap().value(),
            &json!({"n": "x".repeat(100)})
        );
    }
}

#[tokio::test]
async fn a_rotated_set_is_continued_in_its_newest_file() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("j.jsonl");
    let first = JournalWriter::open(&base, Some(1_000), header()).unwrap();
    run_batches(&first, 4, 3).await;
    drop(first);
    let newest = journal_set::newest_number(&base);
    assert!(newest > 0);
    let before = std::fs::metadata(journal_set::numbered(&base, newest)).unwrap().len();
    let second = JournalWriter::open(&base, None, header()).unwrap();
    run_batches(&second, 1, 1).await;
    assert_eq!(journal_set::newest_number(&base), newest);
    assert!(std::fs::metadata(journal_set::numbered(&base, newest)).unwrap().len() > before);
    // Both runs' batches are in the set (ids repeat across runs).
    let journal = Journal::parse(&journal_set::read_text(&base).unwrap()).unwrap();
    assert_eq!(journal.batches.len(), 5);
}

#[cfg(unix)]
#[tokio::test]
async fn every_file_of_the_set_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("j.jsonl");
    let writer = JournalWriter::open(&base, Some(500), header()).unwrap();
    run_batches(&writer, 3, 3).await;
    for path in journal_set::files(&base) {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
    }
}

#[test]
fn a_tool_call_line_is_the_engines_call_record_field_for_field() {
    let scope = tether_tools::AgentPipelineScope::builder()
        .label("agent \"one\"")
        .session_id("s-1")
        .build_root();
    let mut call = ToolCall::new("c1", "write", r#"{ "path" : "caf\u00e9" }"#);
    call.parent_call_id = Some("p0".into());
    call.invocation_context = Some(json!({"cwd": "/tmp/w", "subagent": {"type": "Explore"}}));
    for scope in [None, Some(&scope)] {
        let declared = DeclaredCall {
            batch_id: 7,
            index: 1,
            total: 3,
            call: &call,
            execution: tether_tools::ExecutionId::fresh(),
            mode: tether_tools::ToolExecutionMode::Parallel,
            scope,
        };
        let line = call_line(&declared).unwrap();
        let written: Value = serde_json::from_slice(&line).unwrap();
        let record = tether_tools::journal::CallRecord {
            event: TOOL_CALL.to_owned(),
            ts_ms: written["ts_ms"].as_u64().unwrap(),
            batch: 7,
            index: 1,
            total: 3,
            mode: tether_tools::ToolExecutionMode::Parallel,
            scope: scope.map(journal_scope),
            call: call.clone(),
        };
        // The same text, field order included, as the engine's record.
        assert_eq!(
            String::from_utf8(line).unwrap(),
            format!("{}\n", serde_json::to_string(&record).unwrap())
        );
        let read: tether_tools::journal::CallRecord = serde_json::from_value(written).unwrap();
        assert_eq!(read, record);
    }
}

/// A call nobody answers under a rule with its own short wait: the journal
/// says how long it waited, not the console's `--approval-timeout`.
#[tokio::test]
async fn a_timed_out_call_records_the_wait_its_rule_set_not_the_consoles_timeout() {
    use crate::files::policy::Policy;
    use crate::files::scenario::Scenario;
    use crate::files::source::Document;
    use crate::session::approval::ConsoleAnswerer;
    use crate::session::events::AppEventSender;
    use crate::session::replay::Session;

    let rules = r#"{"rules": [{"id": "quick", "stage": "pre-execute", "match": {"tool": "poke"},
                    "action": {"type": "ask", "timeout": "200ms"}}]}"#;
    let scenario = json!({"tools": [{"name": "poke", "body": {"return": 1}}],
                          "batches": [{"calls": [{"id": "late", "name": "poke", "arguments": {}}]}]});
    let policy = Policy::from_document(&Document::parse("policy.json".into(), rules.to_owned()).unwrap()).unwrap();
    let scenario = Scenario::from_document(&Document::parse("s.json".into(), scenario.to_string()).unwrap()).unwrap();
    let session = Session::new(scenario, Some(&policy)).unwrap();
    // The console would wait 30 s; the rule says 200 ms. Nobody answers:
    // the receiver is held and never read.
    let console_timeout = Duration::from_secs(30);
    let (events, _screen) = AppEventSender::new();
    let _answerer = session.registry.set_approval_answerer(ConsoleAnswerer {
        events,
        timeout: console_timeout,
        always: Default::default(),
        log: session.log.clone(),
        registry: session.registry.clone(),
        notify: None,
        waiting: Default::default(),
        escalation: Default::default(),
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let writer = JournalWriter::open(&path, None, JournalHeader::new(None, console_timeout)).unwrap();
    writer.record_decisions_from(&session.log);
    let started = std::time::Instant::now();
    let reports = session.run_batch(0, Some(&writer)).await;
    let took = u64::try_from(started.elapsed().as_millis()).unwrap();
    assert_eq!(reports.len(), 1);

    let text = std::fs::read_to_string(&path).unwrap();
    let result = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["event"] == "tool/result")
        .unwrap();
    assert_eq!(result["decided_by"], "timeout", "{result}");
    let waited = result["waited_ms"].as_u64().unwrap();
    assert!(
        (200..=took).contains(&waited),
        "waited {waited} ms: the rule's 200 ms as measured (the batch took {took} ms), not the console's 30000: {result}"
    );
}
