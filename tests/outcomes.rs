//! SPEC §9: outcomes and failure codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tether_tools::{ToolExecutionOutcome, ToolFailureCode, ToolRegistry};

#[test]
fn failure_codes_have_stable_wire_forms() {
    let wire: Vec<_> = ToolFailureCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        wire,
        [
            "UNKNOWN_TOOL",
            "INVALID_ARGS",
            "TOOL_ERROR",
            "ABORTED",
            "ABORTED_BEFORE_DISPATCH",
            "DENIED",
            "UNAVAILABLE",
            "BLOCKED"
        ]
    );
    for code in ToolFailureCode::ALL {
        assert_eq!(ToolFailureCode::from_wire(code.as_str()), Some(code));
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        assert_eq!(code.to_string(), code.as_str());
    }
}

#[tokio::test]
async fn a_success_carries_the_value_and_no_failure() {
    let registry = registry_with(returning("t", json!({"rows": 3})));
    let outcome = run_t(&registry).await;
    assert!(!outcome.is_error());
    assert_eq!(outcome.failure(), None);
    assert_eq!(outcome.call_id(), "c");
    assert_eq!(outcome.name(), "t");
    let result = outcome.to_function_result();
    assert_eq!(
        (result.call_id.as_str(), result.content, result.is_error),
        ("c", json!({"rows": 3}), false)
    );
}

#[tokio::test]
async fn a_failure_shows_the_model_exactly_a_message_object() {
    let registry = ToolRegistry::new();
    let outcome = run(&registry, None, call("c", "ghost", "{}")).await;
    assert!(outcome.is_error());
    let message = outcome.failure().unwrap().message.clone();
    assert_eq!(outcome.value(), &json!({ "message": message }));
    let result = outcome.to_function_result();
    assert!(result.is_error);
    assert_eq!(result.content, json!({ "message": message }));
    assert_eq!(result.call_id, "c");
}

#[test]
fn an_outcome_round_trips_through_json() {
    let outcome = ToolExecutionOutcome::from_parts("c", "t", Err((ToolFailureCode::Blocked, "secret".into())));
    let text = serde_json::to_string(&outcome).unwrap();
    let back: ToolExecutionOutcome = serde_json::from_str(&text).unwrap();
    assert_eq!(back, outcome);
    assert_eq!(back.code(), Some(ToolFailureCode::Blocked));
}

#[tokio::test]
async fn an_outcome_is_detached_from_the_tool_that_produced_it() {
    let registry = ToolRegistry::new();
    let handle = register(&registry, returning("t", json!([1, 2])), None);
    let outcome = run_t(&registry).await;
    handle.dispose();
    let _other = register(&registry, returning("t", json!("changed")), None);
    assert_eq!(outcome.value(), &json!([1, 2]));
}
