//! The agent link over a real Unix socket: the full exchange, approvals,
//! call-backs, bad frames, disconnects at each stage, stale sockets, and a
//! load of 50 agents.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "link_support/mod.rs"]
mod link_support;

use std::sync::Arc;

use link_support::*;
use serde_json::{Value, json};
use tether_console::agents::link::{self, socket};
use tether_tools::ApprovalAnswer;

#[tokio::test]
async fn the_full_exchange_runs_bodies_on_the_agent_and_returns_outcomes_in_order() {
    let server = server(
        json!([{"id": "ask-writes", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "ask"}}]),
        None,
    )
    .await;
    let mut agent = Agent::connect(&server).await;
    agent.open("agent-1").await;
    let listed = agent.call("tools/list", json!({})).await;
    let names: Vec<&str> = listed["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "write"]);
    let params = json!({"batch_id": "b1", "max_parallelism": 2, "calls": [
        {"id": "a", "name": "echo", "arguments": "{\"x\": 1}"},
        {"id": "b", "name": "write", "arguments": "{\"y\": 2}"},
        {"id": "c", "name": "nope", "arguments": "{}"}
    ]});
    let reply = agent
        .call_with(
            "batch/execute",
            params,
            |p| json!({"ran": p["name"], "with": p["arguments"]}),
        )
        .await;
    let outcomes = reply["result"]["outcomes"].as_array().unwrap();
    let summary: Vec<(&str, &Value, &str)> = outcomes
        .iter()
        .map(|o| {
            (
                o["call_id"].as_str().unwrap(),
                &o["code"],
                o["decided_by"].as_str().unwrap(),
            )
        })
        .collect();
    // The test's answerer approves without recording a human (the console's does).
    assert_eq!(
        summary,
        [
            ("a", &Value::Null, "body"),
            ("b", &Value::Null, "body"),
            ("c", &json!("UNKNOWN_TOOL"), "registry")
        ]
    );
    assert_eq!(outcomes[0]["value"], json!({"ran": "echo", "with": {"x": 1}}));
    let events: Vec<String> = agent
        .notifications
        .iter()
        .filter(|n| n["method"] == "tool/call" || n["method"] == "tool/result")
        .map(|n| {
            format!(
                "{} {}",
                n["method"].as_str().unwrap(),
                n["params"]["call_id"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        events
            .iter()
            .filter(|e| e.starts_with("tool/result"))
            .cloned()
            .collect::<Vec<_>>(),
        ["tool/result a", "tool/result b", "tool/result c"]
    );
    assert_eq!(events.iter().filter(|e| e.starts_with("tool/call")).count(), 3);
    assert!(
        agent
            .notifications
            .iter()
            .any(|n| n["method"] == "tools/change" && n["params"]["name"] == "write")
    );
}

#[tokio::test]
async fn nothing_on_the_socket_can_approve_a_call() {
    let (answerer, mut requests) = tether_tools::pipeline::approval::channel();
    let server = server(
        json!([{"id": "ask", "stage": "pre-execute", "action": {"type": "ask"}}]),
        Some(answerer),
    )
    .await;
    let mut agent = Agent::connect(&server).await;
    agent.open("sneaky").await;
    let id = agent
        .send_request("batch/execute", json!({"calls": calls(1, "echo")}))
        .await;
    let pending = requests.recv().await.unwrap();
    for attempt in ["approval/answer", "approve", "prompt/reply"] {
        let reply = agent
            .call(attempt, json!({"id": pending.request.id(), "answer": "approve"}))
            .await;
        assert_eq!(reply["error"]["code"], -32601, "{attempt}");
    }
    pending
        .reply
        .send(ApprovalAnswer::Rejected {
            reason: Some("human says no".into()),
        })
        .unwrap();
    loop {
        let frame = agent.read().await;
        if frame["id"] == json!(id) {
            assert_eq!(frame["result"]["outcomes"][0]["code"], "DENIED");
            break;
        }
    }
}

#[tokio::test]
async fn bad_frames_get_json_rpc_errors_and_the_connection_goes_on() {
    let server = server(json!([]), None).await;
    let mut agent = Agent::connect(&server).await;
    agent.send_raw("this is not json").await;
    assert_eq!(agent.read().await["error"]["code"], -32700);
    agent.send_raw(r#"{"id": 1, "method": "tools/list"}"#).await;
    assert_eq!(agent.read().await["error"]["code"], -32600, "no jsonrpc field");
    agent.send_raw("[1, 2, 3]").await;
    assert_eq!(agent.read().await["error"]["code"], -32600);
    assert_eq!(agent.call("no/such/method", json!({})).await["error"]["code"], -32601);
    assert_eq!(
        agent.call("session/open", json!({"who": "me"})).await["error"]["code"],
        -32602
    );
    assert_eq!(
        agent.call("tools/list", json!({})).await["error"]["code"],
        -32000,
        "no session yet"
    );
    agent.send_raw(&"x".repeat(link::protocol::MAX_LINE + 10)).await;
    let oversized = agent.read().await;
    assert_eq!(oversized["error"]["code"], -32600);
    assert!(oversized["error"]["message"].as_str().unwrap().contains("longer than"));
    agent
        .send_raw(r#"{"jsonrpc": "2.0", "id": 999, "result": {"value": 1}}"#)
        .await;
    let unknown = agent.read().await;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown request id 999"),
        "{unknown}"
    );
    // Still alive, and another agent was never disturbed.
    agent.open("after-the-noise").await;
    let mut other = Agent::connect(&server).await;
    other.open("bystander").await;
    assert_eq!(server.link.agents(), 2);
}

#[tokio::test]
async fn an_id_that_is_an_object_or_an_array_is_an_invalid_request() {
    let server = server(json!([]), None).await;
    let mut agent = Agent::connect(&server).await;
    for id in [json!({}), json!([1]), json!(true)] {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        agent.send_raw(&frame.to_string()).await;
        let reply = agent.read().await;
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
        assert_eq!(reply["id"], Value::Null, "{reply}");
    }
    agent.open("still-here").await;
}

#[tokio::test]
async fn a_frame_that_is_not_utf8_gets_a_parse_error_and_the_session_lives_on() {
    use tokio::io::AsyncWriteExt as _;
    let server = server(json!([]), None).await;
    let mut agent = Agent::connect(&server).await;
    agent.open("binary").await;
    let stream = agent.lines.get_mut();
    stream
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 77, \"method\": \"tools/list\", \"x\": \"\xff\xfe\"}\n")
        .await
        .unwrap();
    stream.flush().await.unwrap();
    let error = agent.read().await;
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("UTF-8"), "{error}");
    let listed = agent.call("tools/list", json!({})).await;
    assert_eq!(
        listed["result"].as_array().map(Vec::len),
        Some(2),
        "the session and its tools are still there: {listed}"
    );
    let outcome = agent.call("batch/execute", json!({"calls": calls(2, "echo")})).await;
    assert!(outcome.get("result").is_some(), "{outcome}");
    assert_eq!(server.link.agents(), 1);
}

#[tokio::test]
async fn disconnecting_while_waiting_for_approval_ends_before_dispatch_and_disposes_the_tools() {
    let (answerer, mut requests) = tether_tools::pipeline::approval::channel();
    let server = server(
        json!([{"id": "ask", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "ask"}}]),
        Some(answerer),
    )
    .await;
    let mut agent = Agent::connect(&server).await;
    agent.open("leaver").await;
    assert_eq!(server.registry.tool_count(), 2);
    agent.send_request("batch/execute", json!({"calls": [{"id": "w", "name": "write", "arguments": "{}"}, {"id": "after", "name": "echo", "arguments": "{}"}]})).await;
    let _pending = requests.recv().await.unwrap();
    drop(agent);
    eventually("the batch to end", || server.results.lock().unwrap().len() == 2).await;
    assert_eq!(
        *server.results.lock().unwrap(),
        [
            ("w".to_owned(), Some("ABORTED_BEFORE_DISPATCH")),
            ("after".to_owned(), Some("ABORTED_BEFORE_DISPATCH"))
        ]
    );
    eventually("the tools to be disposed", || server.registry.tool_count() == 0).await;
    eventually("the agent to be gone", || server.link.agents() == 0).await;
}

#[tokio::test]
async fn disconnecting_while_a_body_runs_on_the_agent_aborts_it() {
    let server = server(json!([]), None).await;
    let mut agent = Agent::connect(&server).await;
    agent.open("crasher").await;
    agent
        .send_request(
            "batch/execute",
            json!({"calls": calls(3, "echo"), "max_parallelism": 1}),
        )
        .await;
    // Wait for the first call-back, then vanish without answering it.
    loop {
        if agent.read().await["method"] == "tool/invoke" {
            break;
        }
    }
    drop(agent);
    eventually("every outcome", || server.results.lock().unwrap().len() == 3).await;
    let codes: Vec<Option<&str>> = server.results.lock().unwrap().iter().map(|(_, c)| *c).collect();
    assert_eq!(codes[0], Some("ABORTED"));
    assert!(
        codes[1..]
            .iter()
            .all(|c| *c == Some("ABORTED_BEFORE_DISPATCH") || *c == Some("ABORTED")),
        "{codes:?}"
    );
    eventually("the tools to be disposed", || server.registry.tool_count() == 0).await;
}

#[tokio::test]
async fn an_agent_can_cancel_its_own_batch() {
    let server = server(json!([]), None).await;
    let mut agent = Agent::connect(&server).await;
    agent.open("canceller").await;
    let id = agent
        .send_request("batch/execute", json!({"batch_id": "slow", "calls": calls(2, "write")}))
        .await;
    loop {
        if agent.read().await["method"] == "tool/invoke" {
            break;
        }
    }
    let cancel = agent.send_request("batch/cancel", json!({"batch_id": "slow"})).await;
    let mut outcomes = None;
    let mut cancelled = None;
    while outcomes.is_none() || cancelled.is_none() {
        let frame = agent.read().await;
        if frame["id"] == json!(cancel) {
            cancelled = Some(frame["result"]["cancelled"].clone());
        } else if frame["id"] == json!(id) {
            outcomes = Some(frame["result"]["outcomes"].clone());
        }
    }
    assert_eq!(cancelled, Some(json!(true)));
    let outcomes = outcomes.unwrap();
    assert_eq!(
        (outcomes[0]["code"].as_str(), outcomes[1]["code"].as_str()),
        (Some("ABORTED"), Some("ABORTED_BEFORE_DISPATCH"))
    );
}

#[tokio::test]
async fn each_batch_sees_the_tools_registered_and_disposed_before_it() {
    let server = server(json!([]), None).await;
    let mut agent = Agent::connect(&server).await;
    agent.open("changing").await;
    let code = |reply: &Value| reply["result"]["outcomes"][0]["code"].clone();
    let run = |name: &str| json!({"calls": calls(1, name)});
    assert_eq!(code(&agent.call("batch/execute", run("echo")).await), Value::Null);
    assert_eq!(code(&agent.call("batch/execute", run("late")).await), "UNKNOWN_TOOL");
    let reply = agent
        .call("tools/register", json!({"name": "late", "concurrency": "always"}))
        .await;
    assert!(reply.get("result").is_some(), "{reply}");
    assert_eq!(code(&agent.call("batch/execute", run("late")).await), Value::Null);
    let reply = agent.call("tools/unregister", json!({"name": "echo"})).await;
    assert_eq!(reply["result"]["unregistered"], true, "{reply}");
    assert_eq!(code(&agent.call("batch/execute", run("echo")).await), "UNKNOWN_TOOL");
    // A tool registered by someone else, globally, is seen too.
    let body = |_: Value, _: tether_tools::ToolContext| async { Ok::<_, tether_tools::BoxError>(Value::Null) };
    let _global = server
        .registry
        .register(
            tether_tools::Tool::new("global", "", json!({"type": "object"}), body),
            None,
            tether_tools::ToolRegistrationOptions::default(),
        )
        .unwrap();
    assert_eq!(code(&agent.call("batch/execute", run("global")).await), Value::Null);
}

#[tokio::test]
async fn a_stale_socket_is_replaced_and_a_live_one_is_not_stolen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("console.sock");
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists(), "a crashed console leaves its socket file behind");
    let live = socket::bind(&path).await.unwrap();
    let error = socket::bind(&path).await.unwrap_err();
    assert!(error.to_string().contains("already listening"), "{error}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(
        std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777,
        0o700
    );
    drop(live);
}

#[test]
fn only_our_own_user_is_allowed() {
    assert!(socket::peer_allowed(1000, 1000));
    assert!(!socket::peer_allowed(0, 1000));
    assert!(!socket::peer_allowed(1001, 1000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_agents_with_two_hundred_calls_each_get_exactly_their_outcomes() {
    let server = Arc::new(server(json!([]), None).await);
    let baseline_listeners = server.registry.listener_count();
    let mut agents = Vec::new();
    for n in 0..50 {
        let server = Arc::clone(&server);
        agents.push(tokio::spawn(async move {
            let mut agent = Agent::connect(&server).await;
            let session = format!("agent-{n}");
            agent.open(&session).await;
            if n % 10 == 9 {
                // Some leave midway through their batch.
                agent
                    .send_request(
                        "batch/execute",
                        json!({"calls": calls(200, "echo"), "max_parallelism": 8}),
                    )
                    .await;
                for _ in 0..20 {
                    agent.read().await;
                }
                return None;
            }
            let reply = agent
                .call_with(
                    "batch/execute",
                    json!({"calls": calls(200, "echo"), "max_parallelism": 8}),
                    |p| json!({"agent": n, "args": p["arguments"]}),
                )
                .await;
            let outcomes = reply["result"]["outcomes"].as_array().unwrap().clone();
            Some((n, outcomes))
        }));
    }
    let mut finished = 0;
    for agent in agents {
        let Some((n, outcomes)) = agent.await.unwrap() else {
            continue;
        };
        finished += 1;
        assert_eq!(outcomes.len(), 200);
        for (i, outcome) in outcomes.iter().enumerate() {
            assert_eq!(outcome["call_id"], format!("c{i}"), "declared order");
            assert_eq!(
                outcome["value"],
                json!({"agent": n, "args": {"i": i}}),
                "nothing misrouted"
            );
        }
    }
    assert_eq!(finished, 45);
    eventually("every agent to be gone", || server.link.agents() == 0).await;
    eventually("every tool to be disposed", || server.registry.tool_count() == 0).await;
    assert_eq!(
        server.registry.listener_count(),
        baseline_listeners,
        "no change listener left behind"
    );
    assert!(server.link.log.is_empty(), "no decision trail left behind");
}

#[tokio::test]
async fn disconnecting_between_outcomes_keeps_the_finished_ones_and_aborts_the_rest() {
    let server = server(json!([]), None).await;
    let mut agent = Agent::connect(&server).await;
    agent.open("halfway").await;
    agent
        .send_request("batch/execute", json!({"calls": calls(3, "write")}))
        .await;
    // Answer only the first call-back (the next one may come before the
    // first result is announced), then leave once that result is announced.
    let mut answered = false;
    loop {
        let frame = agent.read().await;
        if frame["method"] == "tool/invoke" && !answered {
            answered = true;
            let reply = json!({"jsonrpc": "2.0", "id": frame["id"], "result": {"value": "done"}});
            agent.send_raw(&reply.to_string()).await;
        } else if frame["method"] == "tool/result" {
            break;
        }
    }
    drop(agent);
    eventually("every outcome", || server.results.lock().unwrap().len() == 3).await;
    let results = server.results.lock().unwrap().clone();
    assert_eq!(results[0], ("c0".to_owned(), None), "a finished call keeps its outcome");
    for (id, code) in &results[1..] {
        assert!(
            matches!(code, Some("ABORTED") | Some("ABORTED_BEFORE_DISPATCH")),
            "{id}: {code:?}"
        );
    }
    eventually("the tools to be disposed", || server.registry.tool_count() == 0).await;
}
