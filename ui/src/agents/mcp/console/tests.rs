//! The gateway's session on the console.

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::UnixListener;

use super::*;

/// A console from before `notifications` refuses the field; the gateway
/// opens its session again without it rather than find no console.
#[tokio::test]
async fn a_console_that_refuses_the_notifications_field_is_joined_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let old_console = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        let mut opened = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            let frame: Value = serde_json::from_str(&line).unwrap();
            opened.push(frame["params"].clone());
            let reply = if frame["params"].get("notifications").is_some() {
                json!({"jsonrpc": "2.0", "id": frame["id"], "error": {"code": -32602,
                    "message": "invalid params: unknown field `notifications`, expected one of `session_id`, `owner`, `label`, `cwd`"}})
            } else {
                json!({"jsonrpc": "2.0", "id": frame["id"], "result": {"scope": "mcp"}})
            };
            write.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
            if reply.get("result").is_some() {
                // Kept open: a console that hung up at once could be
                // taken for one gone before it answered.
                return (opened, Some((lines, write)));
            }
        }
        (opened, None)
    });
    let invoke: Invoke = Arc::new(|_, _, _, _, _| Box::pin(async { Ok(Value::Null) }));
    let approve: Approve = Arc::new(|_| Box::pin(async { Ok(Value::Null) }));
    let session = json!({"session_id": "mcp-1", "label": "mcp", "notifications": false});
    let link = ConsoleLink::connect(&path, session, invoke, approve).await;
    assert!(link.is_ok(), "{:?}", link.err());
    let (opened, _open) = old_console.await.unwrap();
    assert_eq!(opened.len(), 2, "{opened:?}");
    assert_eq!(opened[1], json!({"session_id": "mcp-1", "label": "mcp"}));
}

/// A hosted call's outcome is handed to the gateway early (to answer its
/// client before the console's own bookkeeping) only once the journal holds
/// the call's result; the screen still hears of the outcome.
#[tokio::test]
async fn a_hosted_calls_early_outcome_comes_once_the_journal_holds_it() {
    use std::time::Duration;

    use tether_tools::{ToolExecutionOutcome, ToolRegistry};

    use crate::files::policy::Policy;
    use crate::files::source::Document;
    use crate::session::events::{AppEvent, AppEventSender};
    use crate::session::journal::{JournalHeader, JournalWriter};
    use crate::session::provenance::DecisionLog;

    let dir = tempfile::tempdir().unwrap();
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let rules = r#"{"rules": [{"id": "echo-is-fine", "stage": "pre-execute", "match": {"tool": "echo"}, "action": {"type": "allow"}}]}"#;
    let policy = Policy::from_document(&Document::parse("p.json".into(), rules.into()).unwrap()).unwrap();
    let _rules = crate::session::policy::install(&registry, &policy, &log);
    let mut link = crate::agents::link::Link::new(registry, log);
    let journal_path = dir.path().join("journal.jsonl");
    let header = JournalHeader::new(None, Duration::from_secs(60));
    link.journal = Some(Arc::new(JournalWriter::open(&journal_path, None, header).unwrap()));
    let (events, mut screen) = AppEventSender::new();
    link.events = Some(events);
    let link = Arc::new(link);

    let invoke: Invoke =
        Arc::new(|_, _, _, _, _| Box::pin(async { Ok(json!({"content": [{"type": "text", "text": "hi"}]})) }));
    let approve: Approve = Arc::new(|_| Box::pin(async { Ok(Value::Null) }));
    let session = json!({"session_id": "mcp-1", "label": "mcp", "notifications": false});
    let stop = CancellationToken::new();
    let console = ConsoleLink::in_process(&link, stop.clone(), session, invoke, approve)
        .await
        .unwrap();
    let tool = json!({"name": "echo", "description": "", "parameters": {"type": "object"}, "concurrency": "never", "scope": "srv"});
    console.request("tools/register", tool).await.unwrap();

    let told = Mutex::new(Vec::new());
    let early = |outcome: &ToolExecutionOutcome| {
        let journal = std::fs::read_to_string(&journal_path).unwrap();
        let recorded = journal.lines().any(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            line["event"] == "tool/result" && line["call_id"] == outcome.call_id()
        });
        lock(&told).push((outcome.call_id().to_owned(), recorded));
    };
    let call = OneCall {
        id: "mcp-7",
        name: "echo",
        arguments: "{}",
        scope: "srv",
        cwd: None,
        early: Some(&early),
    };
    let outcome = console.execute(call, &CancellationToken::new()).await.unwrap();
    assert_eq!(outcome["code"], Value::Null, "{outcome}");
    assert_eq!(*lock(&told), [("mcp-7".to_owned(), true)]);

    // The screen was told of the batch and holds the call's outcome.
    let progress = screen
        .try_recv_many()
        .into_iter()
        .find_map(|event| match event {
            AppEvent::BatchStarted { progress, .. } => progress,
            _ => None,
        })
        .expect("the screen was told of the batch");
    let (shown, _) = progress.outcome(0).expect("the screen holds the outcome");
    assert_eq!(shown.call_id(), "mcp-7");
    stop.cancel();
}
