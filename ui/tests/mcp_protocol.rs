//! Protocol details the MCP gateway must get right with real peers: a call
//! abandoned while its approval still waits ends `ABORTED_BEFORE_DISPATCH`
//! and never reaches the server; the server's own requests to the client
//! (roots, sampling, elicitation) are relayed and answered by the client;
//! the client is told the server's capabilities.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;
use tether_console::agents::link::{self, Link, socket};
use tether_console::files::policy::Policy;
use tether_console::files::source::Document;
use tether_console::session::provenance::DecisionLog;
use tether_tools::{ApprovalRequest, BoxError, ToolRegistry};
use tokio_util::sync::CancellationToken;

#[test]
fn a_call_abandoned_while_its_approval_waits_ends_aborted_before_dispatch() {
    let Some(s) = setup() else { return };
    // A console in this process whose human never answers.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let socket_path = s.dir.path().join("console.sock");
    let journal = s.dir.path().join("journal.jsonl");
    let asked = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let rules = ask_writes_policy();
    let _rules = tether_console::session::policy::install(&registry, &rules, &log);
    let counter = Arc::clone(&asked);
    let _answerer = registry.set_approval_answerer(move |_request: ApprovalRequest| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { std::future::pending::<Result<tether_tools::ApprovalAnswer, BoxError>>().await }
    });
    let stop = console_in_process(&runtime, &registry, log, &socket_path, Some(&journal));

    let target = s.root.join("never.txt");
    let arguments = json!({"path": target, "content": "x"}).to_string();
    let via = via_filesystem(&s, &socket_path, &["--name", "fs"]);
    let lines = client(&s.tools, s.dir.path(), "cancel", &["write_file", &arguments, "2"], &via);
    assert_eq!(seen(&lines, "cancelled")["cancelled"], json!(true));
    seen(&lines, "pong");
    assert_eq!(asked.load(Ordering::SeqCst), 1, "the approval was waiting");
    let started = Instant::now();
    let outcome = loop {
        let text = std::fs::read_to_string(&journal).unwrap_or_default();
        let result = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|l| l["event"] == "tool/result" && l["name"] == "write_file");
        if let Some(result) = result {
            break result;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no outcome in the journal: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(outcome["code"], "ABORTED_BEFORE_DISPATCH", "{outcome}");
    assert!(!target.exists(), "the server never saw the call");
    stop.cancel();
}

/// A re-list registers anew only what changed: a tool listed again as it
/// was is not reported disposed and registered again on every re-list.
#[test]
fn a_relist_registers_only_the_tools_that_changed() {
    let Some(s) = setup() else { return };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let socket_path = s.dir.path().join("console.sock");
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let changes: Arc<std::sync::Mutex<Vec<(tether_tools::ToolsChangeKind, String)>>> = Arc::default();
    let seen_changes = Arc::clone(&changes);
    let _changes = registry.on_tools_change(move |event| {
        seen_changes.lock().unwrap().push((event.kind, event.name.clone()));
    });
    let _answerer = registry.set_approval_answerer(|_request: ApprovalRequest| async {
        Ok::<_, BoxError>(tether_tools::ApprovalAnswer::Approved)
    });
    let stop = console_in_process(&runtime, &registry, log, &socket_path, None);
    let via = via_scripted(&s, &socket_path);
    // A first session pins the tools; the second is the one watched.
    client(&s.tools, s.dir.path(), "ping", &[], &via);
    changes.lock().unwrap().clear();
    let lines = client(&s.tools, s.dir.path(), "call_relisted", &["mutate", "{}"], &via);
    assert_eq!(text(&seen(&lines, "result")["result"]), "mutated", "{lines:?}");
    let registered = |name: &str| {
        changes
            .lock()
            .unwrap()
            .iter()
            .filter(|(kind, n)| *kind == tether_tools::ToolsChangeKind::Registered && n == name)
            .count()
    };
    // echo's description changed (it is held now): registered anew.
    assert_eq!(registered("echo"), 2, "{:?}", changes.lock().unwrap());
    // mutate was listed again as it was: registered once, when the session began.
    assert_eq!(registered("mutate"), 1, "{:?}", changes.lock().unwrap());
    stop.cancel();
}

/// The console's link for `registry`, served in this process on `socket`
/// (journaling to `journal`): cancel the token to stop it.
fn console_in_process(
    runtime: &tokio::runtime::Runtime,
    registry: &ToolRegistry,
    log: DecisionLog,
    socket: &std::path::Path,
    journal: Option<&std::path::Path>,
) -> CancellationToken {
    let stop = CancellationToken::new();
    runtime.block_on(async {
        let mut link = Link::new(registry.clone(), log);
        if let Some(journal) = journal {
            link.journal = Some(Arc::new(tether_console::session::journal::open(journal).await.unwrap()));
        }
        let listener = socket::bind(socket).await.unwrap();
        link::serve_on_own_thread(Arc::new(link), listener, stop.clone()).unwrap();
    });
    stop
}

fn ask_writes_policy() -> Policy {
    let text = json!({"rules": ask_writes()}).to_string();
    Policy::from_document(&Document::parse("p.json".into(), text).unwrap()).unwrap()
}

#[test]
fn the_servers_roots_list_reaches_the_client_and_its_answer_the_server() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let client_root = s.dir.path().canonicalize().unwrap().join("client-root");
    std::fs::create_dir_all(&client_root).unwrap();
    let via = via_filesystem(&s, &console.socket, &["--name", "fs"]);
    let root = client_root.display().to_string();
    let lines = client(&s.tools, s.dir.path(), "roots", &[&root], &via);
    // server-filesystem replaced its command-line directory with the
    // client's root: it asked roots/list, and the client's answer came back.
    let allowed = text(&seen(&lines, "result")["result"]);
    assert!(allowed.contains(&root), "{allowed}");
    assert!(!allowed.contains(&s.root.display().to_string()), "{allowed}");
}

/// A client that declares roots works in its first one: a `within: cwd` rule
/// judges its calls' paths from there, not from the gateway's own directory.
#[test]
fn path_rules_judge_from_the_clients_first_root() {
    let Some(s) = setup() else { return };
    let rules = json!([{"id": "writes-in-the-project", "stage": "pre-execute",
        "match": {"tool": "write_file", "args": [{"pointer": "/path", "within": "cwd"}]},
        "action": {"type": "allow"}},
        {"id": "other-writes-asked", "stage": "pre-execute", "match": {"tool": "write_file"},
        "action": {"type": "ask", "reason": "outside the project"}}]);
    // Nobody answers: an asked write never runs.
    let console = console(s.dir.path(), "reject", &rules);
    let client_root = s.dir.path().canonicalize().unwrap().join("client-root");
    std::fs::create_dir_all(&client_root).unwrap();
    let root = client_root.display().to_string();
    let via = via_filesystem(&s, &console.socket, &["--name", "fs"]);
    // A first session pins the server's tools (a tool seen for the first
    // time is asked whatever the rules say).
    client(&s.tools, s.dir.path(), "ping", &[], &via);
    let inside = client_root.join("inside.txt");
    let arguments = json!({"path": inside, "content": "x"}).to_string();
    let lines = client(
        &s.tools,
        s.dir.path(),
        "roots_call",
        &[&root, "write_file", &arguments],
        &via,
    );
    assert!(
        inside.exists(),
        "a write inside the client's root is allowed by the rule: {:?}",
        seen(&lines, "result")
    );

    // The gateway's own directory is not the client's: a write there is asked.
    let outside = std::env::current_dir().unwrap().join("tether-roots-test-outside.txt");
    let arguments = json!({"path": outside, "content": "x"}).to_string();
    client(
        &s.tools,
        s.dir.path(),
        "roots_call",
        &[&root, "write_file", &arguments],
        &via,
    );
    assert!(
        !outside.exists(),
        "a write outside the client's root was asked and rejected"
    );

    let decided: Vec<(String, String)> = console
        .journal()
        .iter()
        .filter(|r| r["event"] == "tool/result" && r["name"] == "write_file")
        .map(|r| {
            (
                r["code"].as_str().unwrap_or("ok").to_owned(),
                r["decided_by"].to_string(),
            )
        })
        .collect();
    assert_eq!(decided.len(), 2, "{decided:?}");
    assert!(decided[0].1.contains("writes-in-the-project"), "{decided:?}");
    assert!(!decided[1].1.contains("writes-in-the-project"), "{decided:?}");
}

#[test]
fn sampling_and_elicitation_requests_are_relayed_to_the_client() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let (_up, via) = everything(&s, &console.socket);
    let lines = client(&s.tools, s.dir.path(), "server_requests", &[], &via);
    let sampled = text(&seen(&lines, "sampled")["result"]);
    assert!(sampled.contains("SAMPLED-BY-THE-CLIENT"), "{sampled}");
    let elicited = seen(&lines, "elicited")["result"].to_string();
    assert!(elicited.contains("decline"), "{elicited}");
}

#[test]
fn the_client_is_told_the_servers_capabilities() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let (up, via) = everything(&s, &console.socket);
    let through = client(&s.tools, s.dir.path(), "ping", &[], &via);
    let direct = client(&s.tools, s.dir.path(), "ping", &[], &up);
    let mut expected = seen(&direct, "initialize")["capabilities"].clone();
    // Tools can always change behind a gateway (pins, the console); tasks
    // (a call outliving its request) and other extensions are not offered.
    expected["tools"]["listChanged"] = json!(true);
    expected.as_object_mut().unwrap().remove("extensions");
    expected.as_object_mut().unwrap().remove("tasks");
    assert_eq!(seen(&through, "initialize")["capabilities"], expected);
    assert!(
        expected["resources"].is_object() && expected["prompts"].is_object(),
        "{expected}"
    );
}
