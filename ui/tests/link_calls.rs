//! The agent link over a real Unix socket, call by call: every shape of
//! reply to `tool/invoke`, call ids in flight, a subagent's calls, and the
//! edited arguments an invoke carries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "link_support/mod.rs"]
mod link_support;

use std::sync::{Arc, Mutex};

use link_support::*;
use serde_json::{Value, json};
use tether_tools::ApprovalAnswer;

/// The replies an agent may write to `tool/invoke`, each read the same way
/// whether the frame goes the fast way (no JSON tree) or the general way (an
/// escape in a key or value, an unknown field): `{"value": v}` gives `v`, a
/// result without `value` is the value itself, `"result": null` is a null
/// value (not a missing result), and an error is the tool's failure.
#[tokio::test]
async fn every_shape_of_reply_to_an_invoke_reads_the_same_on_either_path() {
    let server = server(json!([]), None).await;
    let mut agent = Agent::connect(&server).await;
    agent.open("agent-1").await;
    // (reply after `"id": N,`, expected value, expected code)
    let shapes = [
        (r#""result": {"value": 7}"#, json!(7), Value::Null),
        (r#""result": {"value": "a\"b"}"#, json!("a\"b"), Value::Null),
        (r#""result": {"other": 1}"#, json!({"other": 1}), Value::Null),
        (r#""result": null"#, Value::Null, Value::Null),
        (r#""result": 5, "extra": [1, 2]"#, json!(5), Value::Null),
        (
            r#""error": {"code": 1, "message": "bo\u0072ked"}"#,
            Value::Null,
            json!("TOOL_ERROR"),
        ),
        (r#""error": null"#, Value::Null, json!("TOOL_ERROR")),
    ];
    // "2.0" with an escape in it is still "2.0", but not a borrowed string:
    // that frame goes the general way.
    for version in [r#""2.0""#, r#""2\u002e0""#] {
        for (n, (reply, value, code)) in shapes.iter().enumerate() {
            let params = json!({"calls": [{"id": format!("c{n}"), "name": "echo", "arguments": "{}"}]});
            let id = agent.send_request("batch/execute", params).await;
            let outcome = loop {
                let frame = agent.read().await;
                if frame["method"] == "tool/invoke" {
                    let id = &frame["id"];
                    agent
                        .send_raw(&format!(r#"{{"jsonrpc": {version}, "id": {id}, {reply}}}"#))
                        .await;
                } else if frame["id"] == json!(id) {
                    break frame["result"]["outcomes"][0].clone();
                }
            };
            assert_eq!(&outcome["code"], code, "{version} {reply}: {outcome}");
            if code.is_null() {
                assert_eq!(&outcome["value"], value, "{version} {reply}: {outcome}");
            }
        }
    }
    // A frame that is an array is refused, even one that has the fields of
    // a reply in order.
    agent.send_raw(r#"["2.0", 99, null, null, {"value": 1}, null]"#).await;
    assert_eq!(agent.read().await["error"]["code"], -32600);
}

#[tokio::test]
async fn a_call_id_still_in_flight_in_the_session_is_refused_and_free_again_once_it_ends() {
    let (answerer, mut requests) = tether_tools::pipeline::approval::channel();
    let server = server(
        json!([
            {"id": "ask", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "ask"}},
            {"id": "echo", "stage": "pre-execute", "match": {"tool": "echo"}, "action": {"type": "allow"}}
        ]),
        Some(answerer),
    )
    .await;
    let mut waiting = Agent::connect(&server).await;
    waiting.open("same").await;
    let first = waiting
        .send_request(
            "batch/execute",
            json!({"calls": [{"id": "x", "name": "write", "arguments": "{}"}]}),
        )
        .await;
    let pending = requests.recv().await.unwrap();
    // The same connection and session: x is in flight there.
    let refused = waiting
        .call(
            "batch/execute",
            json!({"calls": [{"id": "x", "name": "echo", "arguments": "{}"}]}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("call id \"x\" is already in flight in this session"),
        "{message}"
    );
    // Another agent's session is another scope: its x runs.
    let mut other = Agent::connect(&server).await;
    other.open("other").await;
    let ran = other
        .call(
            "batch/execute",
            json!({"calls": [{"id": "x", "name": "echo", "arguments": "{}"}]}),
        )
        .await;
    assert_eq!(ran["result"]["outcomes"][0]["code"], Value::Null, "{ran}");
    pending.reply.send(ApprovalAnswer::Approved).unwrap();
    loop {
        let frame = waiting.read().await;
        if frame["method"] == "tool/invoke" {
            let reply = json!({"jsonrpc": "2.0", "id": frame["id"], "result": {"value": 1}});
            waiting.send_raw(&reply.to_string()).await;
        } else if frame["id"] == json!(first) {
            assert_eq!(frame["result"]["outcomes"][0]["code"], Value::Null, "{frame}");
            break;
        }
    }
    let again = waiting
        .call(
            "batch/execute",
            json!({"calls": [{"id": "x", "name": "echo", "arguments": "{}"}]}),
        )
        .await;
    assert_eq!(
        again["result"]["outcomes"][0]["code"],
        Value::Null,
        "x is free again: {again}"
    );
    assert_eq!(server.results.lock().unwrap().len(), 3, "the refused batch ran nothing");
}

/// A call's `agent_type` (the subagent of the agent that made it) reaches
/// the policy: a rule on `match.agent_type` decides that call and not the
/// same call made without one.
#[tokio::test]
async fn a_calls_agent_type_is_matched_by_agent_type_rules() {
    let server = server(
        json!([{"id": "explorers-only-look", "stage": "pre-execute", "match": {"tool": "write", "agent_type": "Explore"},
                "action": {"type": "deny", "reason": "an explorer only looks"}}]),
        None,
    )
    .await;
    let mut agent = Agent::connect(&server).await;
    agent.open("agent-1").await;
    let params = json!({"calls": [
        {"id": "main", "name": "write", "arguments": "{}"},
        {"id": "sub", "name": "write", "arguments": "{}", "agent_type": "Explore", "agent_id": "a7f3e1"}
    ]});
    let reply = agent.call("batch/execute", params).await;
    let codes: Vec<(&str, &Value)> = reply["result"]["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["call_id"].as_str().unwrap(), &o["code"]))
        .collect();
    assert_eq!(codes, [("main", &Value::Null), ("sub", &json!("DENIED"))], "{reply}");
}

/// A call a human approved with edits reaches the agent with the edited
/// arguments and `"edited": true`, so it can tell the model what ran; a call
/// nobody edited carries no such word.
#[tokio::test]
async fn an_invoke_of_edited_arguments_says_so() {
    let server = server(
        json!([{"id": "ask-writes", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "ask"}}]),
        None,
    )
    .await;
    let _editor = server
        .registry
        .set_approval_answerer(|r: tether_tools::ApprovalRequest| {
            let write = r.execution().name() == "write";
            async move {
                Ok::<_, tether_tools::BoxError>(if write {
                    ApprovalAnswer::ApprovedWithEdits {
                        arguments: json!({"y": 3}),
                    }
                } else {
                    ApprovalAnswer::Approved
                })
            }
        });
    let mut agent = Agent::connect(&server).await;
    agent.open("agent-1").await;
    let invokes = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&invokes);
    let params = json!({"batch_id": "b1", "calls": [
        {"id": "a", "name": "echo", "arguments": "{\"x\": 1}"},
        {"id": "b", "name": "write", "arguments": "{\"y\": 2}"}
    ]});
    let reply = agent
        .call_with("batch/execute", params, move |p| {
            seen.lock().unwrap().push(p.clone());
            json!("ok")
        })
        .await;
    assert!(reply.get("result").is_some(), "{reply}");
    let mut invokes = invokes.lock().unwrap().clone();
    invokes.sort_by_key(|p| p["call_id"].as_str().unwrap_or_default().to_owned());
    assert_eq!(invokes[0]["call_id"], "a");
    assert_eq!(invokes[0].get("edited"), None, "{:?}", invokes[0]);
    assert_eq!(
        (&invokes[1]["arguments"], &invokes[1]["edited"]),
        (&json!({"y": 3}), &json!(true)),
        "{:?}",
        invokes[1]
    );
}

/// A session opened with `"notifications": false` (the MCP gateway, which
/// reads only answers) hears no `tool/call`, `tool/result` or
/// `tools/change`: its calls still run, and their outcomes come in the
/// answer. A session that says nothing hears them all, as before.
#[tokio::test]
async fn a_session_that_wants_no_notifications_gets_only_answers() {
    let server = server(json!([]), None).await;
    let mut quiet = Agent::connect(&server).await;
    let reply = quiet
        .call(
            "session/open",
            json!({"session_id": "gateway", "label": "gateway", "notifications": false}),
        )
        .await;
    assert!(reply.get("result").is_some(), "{reply}");
    let registered = quiet
        .call("tools/register", json!({"name": "echo", "description": "echo"}))
        .await;
    assert!(registered.get("result").is_some(), "{registered}");
    let reply = quiet
        .call("batch/execute", json!({"batch_id": "b1", "calls": calls(2, "echo")}))
        .await;
    let outcomes = reply["result"]["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 2, "{reply}");
    assert!(outcomes.iter().all(|o| o["code"].is_null()), "{reply}");
    assert_eq!(quiet.notifications, Vec::<Value>::new());

    let mut told = Agent::connect(&server).await;
    told.open("agent-2").await;
    told.call("batch/execute", json!({"batch_id": "b2", "calls": calls(1, "echo")}))
        .await;
    let methods: Vec<&str> = told.notifications.iter().filter_map(|n| n["method"].as_str()).collect();
    for method in ["tools/change", "tool/call", "tool/result"] {
        assert!(methods.contains(&method), "{method} in {methods:?}");
    }
}
