//! Tests of the parent module.

use super::*;

#[test]
fn the_payload_names_the_subagent_that_asks_escaped_and_null_for_the_main_agent() {
    let main = Asking {
        tool: "Bash",
        call_id: "toolu_1",
        agent: Some("2cea18a0"),
        scope: "claude-code 2cea18a0",
        subagent: None,
        reason: None,
        arguments: r#"{"command": "ls"}"#,
    };
    let main_payload = payload(Lifecycle::Waiting, main, (1, 1), Duration::ZERO, "s");
    assert_eq!(
        (&main_payload["agent_type"], &main_payload["agent_id"]),
        (&Value::Null, &Value::Null)
    );
    let explore = crate::subagent::Subagent {
        kind: "Explore\u{1b}[2J".into(),
        id: Some("aed64e52aca1f6d0c".into()),
    };
    let sub = payload(
        Lifecycle::Waiting,
        Asking {
            subagent: Some(&explore),
            ..main
        },
        (1, 1),
        Duration::ZERO,
        "s",
    );
    assert_eq!(sub["agent_type"], "Explore\\u{1b}[2J");
    assert_eq!(sub["agent_id"], "aed64e52aca1f6d0c");
}

#[test]
fn the_list_is_bell_osc_or_none() {
    let both: TerminalNotify = "bell,osc".parse().unwrap_or_default();
    assert!(both.bell && both.osc);
    let none: TerminalNotify = "none".parse().unwrap_or_default();
    assert!(!none.bell && !none.osc);
    assert!("bell,none".parse::<TerminalNotify>().is_err());
    assert!("beep".parse::<TerminalNotify>().is_err());
}

#[test]
fn osc_is_wrapped_for_tmux_and_cannot_be_ended_by_the_tool_name() {
    let osc = TerminalNotify {
        bell: false,
        osc: true,
        tmux: false,
    };
    let plain = String::from_utf8(osc.bytes(1, "rm\x07;\x1b]0;x", "agent")).unwrap_or_default();
    assert!(plain.starts_with("\x1b]9;Tether: approval waiting: rm\\u{7},\\u{1b}]0,x in agent\x07"));
    assert_eq!(
        plain.matches('\x07').count(),
        2,
        "one BEL ends each sequence: {plain:?}"
    );
    let tmux = TerminalNotify { tmux: true, ..osc };
    let wrapped = String::from_utf8(tmux.bytes(1, "write", "agent")).unwrap_or_default();
    assert!(wrapped.starts_with("\x1bPtmux;\x1b\x1b]9;"), "{wrapped:?}");
    assert!(wrapped.ends_with("\x07\x1b\\"), "{wrapped:?}");
    assert!(TerminalNotify::default().bytes(0, "x", "y").is_empty());
}
/// The lines the notify command appended to `log`, once there are `n`.
async fn heard(log: &std::path::Path, n: usize) -> Vec<(u64, String)> {
    // Bounded, so a broken queue fails the test instead of hanging it.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|l| {
                (
                    l["id"].as_u64().unwrap_or_default(),
                    l["event"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "heard {} of {n} events in 30 s: {lines:?}",
            lines.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_command_runs_a_few_at_once_and_never_for_an_approval_answered_before_its_turn() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (log, gate) = (dir.path().join("log"), dir.path().join("gate"));
    // Each run says what it heard, then waits until the test opens the gate.
    let command = NotifyCommand::new(
        format!(
            "cat >> {}; while [ ! -e {} ]; do sleep 0.05; done",
            log.display(),
            gate.display()
        ),
        "/tmp/console.sock".to_owned(),
        None,
    );
    let tell = |id: u64, lifecycle: Lifecycle| {
        command.run(id, lifecycle, move || json!({"event": lifecycle.event(), "id": id}))
    };
    for id in 1..=10 {
        tell(id, Lifecycle::Waiting);
    }
    // Answered while the first ones still run: 5 to 10 are never told.
    for id in 5..=10 {
        tell(id, Lifecycle::Closed);
    }
    assert_eq!(heard(&log, MAX_RUNNING).await.len(), MAX_RUNNING);
    for id in 1..=4 {
        tell(id, Lifecycle::Closed);
    }
    std::fs::write(&gate, "").unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let idle = {
            let queue = command.queue();
            queue.running == 0 && queue.pending.is_empty()
        };
        if idle {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the notify queue did not drain in 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut told = heard(&log, 0).await;
    told.sort();
    let expected: Vec<(u64, String)> = (1..=4)
        .flat_map(|id| [(id, "approval/closed".to_owned()), (id, "approval/waiting".to_owned())])
        .collect();
    assert_eq!(
        told, expected,
        "each told approval heard how it ended; nothing else ran"
    );
}

/// An approval answered within the grace (sooner than a human can answer)
/// runs the command for none of its events; one that waits longer is told
/// that it waits and how it ended. Through the console's own answerer,
/// which keeps the grace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_within_the_grace_is_never_told() {
    use crate::session::events::{AppEvent, AppEventSender, PromptReply};
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let log = dir.path().join("log");
    let document = |name: &str, text: Value| {
        crate::files::source::Document::parse(name.into(), text.to_string()).unwrap_or_else(|e| panic!("{e:?}"))
    };
    let scenario = crate::files::scenario::Scenario::from_document(&document(
        "s.json",
        json!({
            "tools": [{"name": "poke", "concurrency": "always", "body": {"return": null}}],
            "batches": [{"max_parallelism": 2, "calls": [
                {"id": "quick", "name": "poke", "arguments": "{}"},
                {"id": "slow", "name": "poke", "arguments": "{}"},
            ]}]
        }),
    ))
    .unwrap_or_else(|e| panic!("{e:?}"));
    let policy = crate::files::policy::Policy::from_document(&document(
        "p.json",
        json!({"rules": [{"id": "ask", "stage": "pre-execute", "match": {"tool": "poke"}, "action": {"type": "ask"}}]}),
    ))
    .unwrap_or_else(|e| panic!("{e:?}"));
    let session = crate::session::replay::Session::new(scenario, Some(&policy)).unwrap_or_else(|e| panic!("{e}"));
    let (events, mut receiver) = AppEventSender::new();
    let _answerer = session
        .registry
        .set_approval_answerer(crate::session::approval::ConsoleAnswerer {
            events: events.clone(),
            timeout: Duration::from_secs(60),
            always: crate::session::always::AlwaysRules::default(),
            log: session.log.clone(),
            registry: session.registry.clone(),
            notify: Some(NotifyCommand::new(
                format!("cat >> {}", log.display()),
                "/tmp/console.sock".to_owned(),
                None,
            )),
            waiting: crate::session::approval::Waiting::default(),
            escalation: Default::default(),
        });
    // "quick" is approved as its prompt arrives, "slow" after twice the grace.
    tokio::spawn(async move {
        let by: std::sync::Arc<str> = std::sync::Arc::from("main");
        while let Some(batch) = receiver.recv_many().await {
            for event in batch {
                if let AppEvent::ApprovalRequested(prompt) = event {
                    let wait = if prompt.call_id == "slow" {
                        GRACE * 2
                    } else {
                        Duration::ZERO
                    };
                    let by = std::sync::Arc::clone(&by);
                    tokio::spawn(async move {
                        tokio::time::sleep(wait).await;
                        let _ = prompt.reply.answer(PromptReply::Approve, &by);
                    });
                }
            }
        }
    });
    let reports = session.run_batch(0, None).await;
    assert!(
        reports.iter().all(|r| r.outcome.code().is_none()),
        "both approved and run"
    );
    let read = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|l| {
                format!(
                    "{} {}",
                    l["call_id"].as_str().unwrap_or("?"),
                    l["event"].as_str().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while read().len() < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(GRACE * 2).await;
    let mut told = read();
    told.sort();
    assert_eq!(
        told,
        ["slow approval/closed", "slow approval/waiting"],
        "the quick approval was answered within the grace"
    );
}
