//! SPEC §6: concurrency classification.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tether_tools::{ToolExecutionMode, ToolRegistrationOptions, ToolRegistry, classify};

fn registry_with(options: ToolRegistrationOptions) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(echo("t", object_schema()), None, options)
        .unwrap()
        .keep();
    registry
}

#[test]
fn parallel_only_when_the_predicate_says_true_over_object_arguments() {
    let registry = registry_with(
        ToolRegistrationOptions::default().with_concurrency(|args| args.get("mode") == Some(&json!("read"))),
    );
    let view = registry.seal(None);
    assert_eq!(
        classify(&call("1", "t", r#"{"mode":"read"}"#), &view),
        ToolExecutionMode::Parallel
    );
    assert_eq!(
        classify(&call("2", "t", r#"{"mode":"write"}"#), &view),
        ToolExecutionMode::Exclusive
    );
}

#[test]
fn no_predicate_means_exclusive() {
    let registry = registry_with(ToolRegistrationOptions::default());
    assert_eq!(
        registry.seal(None).classify(&call("1", "t", "{}")),
        ToolExecutionMode::Exclusive
    );
}

#[test]
fn unparsable_or_non_object_arguments_are_exclusive_without_asking_the_predicate() {
    let asked = Trail::default();
    let seen = asked.clone();
    let registry = registry_with(ToolRegistrationOptions::default().with_concurrency(move |_| {
        seen.push("asked");
        true
    }));
    let view = registry.seal(None);
    for raw in ["{not json", "[1,2]", "\"text\"", "42", ""] {
        assert_eq!(
            classify(&call("1", "t", raw), &view),
            ToolExecutionMode::Exclusive,
            "{raw:?}"
        );
    }
    assert!(asked.entries().is_empty());
}

#[test]
fn an_unknown_tool_is_exclusive() {
    let registry = ToolRegistry::new();
    assert_eq!(
        classify(&call("1", "nope", "{}"), &registry.seal(None)),
        ToolExecutionMode::Exclusive
    );
}

#[test]
fn a_panicking_predicate_is_caught_and_gives_exclusive() {
    let registry = registry_with(ToolRegistrationOptions::default().with_concurrency(|_| panic!("predicate bug")));
    assert_eq!(
        classify(&call("1", "t", "{}"), &registry.seal(None)),
        ToolExecutionMode::Exclusive
    );
}
