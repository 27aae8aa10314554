//! SPEC §2: registering tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tether_tools::{RegistrationError, Tool, ToolRegistrationOptions, ToolRegistry};

#[test]
fn names_outside_the_model_api_alphabet_are_rejected() {
    let registry = ToolRegistry::new();
    for bad in ["", "has space", "slash/name", "ünï", &"x".repeat(65), "semi;colon"] {
        let error = registry
            .register(returning(bad, json!(1)), None, ToolRegistrationOptions::default())
            .unwrap_err();
        assert!(
            matches!(error, RegistrationError::InvalidName { .. }),
            "{bad:?}: {error}"
        );
    }
    assert_eq!(registry.tool_count(), 0);
}

#[test]
fn names_from_the_alphabet_up_to_64_characters_are_accepted() {
    let registry = ToolRegistry::new();
    for good in ["a", "read_file", "fs.read", "web-search", "A9", &"x".repeat(64)] {
        register(&registry, returning(good, json!(1)), None).keep();
    }
    assert_eq!(registry.tool_count(), 6);
}

#[test]
fn a_schema_that_is_not_an_object_is_a_registration_error() {
    let registry = ToolRegistry::new();
    let tool = Tool::new(
        "t",
        "d",
        json!(["not", "an", "object"]),
        |_a: serde_json::Value, _c| async { Ok::<_, tether_tools::BoxError>(json!(null)) },
    );
    let error = registry
        .register(tool, None, ToolRegistrationOptions::default())
        .unwrap_err();
    assert!(
        matches!(error, RegistrationError::SchemaNotObject { found: "an array", .. }),
        "{error}"
    );
}

#[test]
fn a_schema_that_does_not_compile_is_a_registration_error_not_a_panic() {
    let registry = ToolRegistry::new();
    let tool = echo("t", json!({"type": "no-such-type"}));
    let error = registry
        .register(tool, None, ToolRegistrationOptions::default())
        .unwrap_err();
    assert!(matches!(error, RegistrationError::InvalidSchema { .. }), "{error}");
    assert!(error.to_string().contains("does not compile"));
    assert_eq!(registry.tool_count(), 0, "nothing is half-registered");
}

#[tokio::test]
async fn disposing_a_handle_removes_exactly_that_registration() {
    let registry = ToolRegistry::new();
    let first = register(&registry, returning("t", json!("first")), None);
    let second = register(&registry, returning("u", json!("second")), None);
    first.dispose();
    let names: Vec<_> = registry
        .declarations(None)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(names, ["u"]);
    drop(second);
}

#[tokio::test]
async fn disposing_twice_is_a_no_op() {
    let registry = ToolRegistry::new();
    let older = register(&registry, returning("t", json!("older")), None);
    let newer = register(&registry, returning("t", json!("newer")), None);
    newer.dispose();
    newer.dispose();
    assert!(newer.is_disposed());
    assert_eq!(run_t(&registry).await.value(), &json!("older"));
    drop(older);
}

#[tokio::test]
async fn dropping_a_handle_disposes_it_and_keep_makes_it_permanent() {
    let registry = ToolRegistry::new();
    drop(register(&registry, returning("dropped", json!(1)), None));
    register(&registry, returning("kept", json!(2)), None).keep();
    let names: Vec<_> = registry
        .declarations(None)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(names, ["kept"]);
}

#[tokio::test]
async fn latest_registration_in_a_scope_wins_and_disposing_it_reveals_the_previous() {
    let registry = ToolRegistry::new();
    let _a = register(&registry, returning("t", json!("a")), None);
    let b = register(&registry, returning("t", json!("b")), None);
    let _c = register(&registry, returning("t", json!("c")), None);
    assert_eq!(run(&registry, None, call("1", "t", "{}")).await.value(), &json!("c"));
    // Disposing one in the middle of the stack changes nothing visible.
    b.dispose();
    assert_eq!(run(&registry, None, call("2", "t", "{}")).await.value(), &json!("c"));
    drop(_c);
    assert_eq!(run(&registry, None, call("3", "t", "{}")).await.value(), &json!("a"));
    assert_eq!(registry.declarations(None).len(), 1, "one tool per name");
}

#[tokio::test]
async fn a_nearer_scope_wins_over_an_ancestor_and_the_global_layer() {
    let registry = ToolRegistry::new();
    let root = tether_tools::AgentPipelineScope::root();
    let leaf = root.child();
    let _global = register(&registry, returning("t", json!("global")), None);
    let near = register(&registry, returning("t", json!("leaf")), Some(&leaf));
    // Registered after the leaf's, but in a farther scope: still loses.
    let _far = register(&registry, returning("t", json!("root")), Some(&root));
    assert_eq!(
        run(&registry, Some(&leaf), call("1", "t", "{}")).await.value(),
        &json!("leaf")
    );
    near.dispose();
    assert_eq!(
        run(&registry, Some(&leaf), call("2", "t", "{}")).await.value(),
        &json!("root")
    );
    assert_eq!(
        run(&registry, None, call("3", "t", "{}")).await.value(),
        &json!("global")
    );
}

#[test]
fn free_metadata_is_readable_from_a_view_but_not_part_of_the_declaration() {
    let registry = ToolRegistry::new();
    let options = ToolRegistrationOptions::default().with_metadata(json!({"risk": "high"}));
    registry
        .register(returning("t", json!(1)), None, options)
        .unwrap()
        .keep();
    let view = registry.seal(None);
    assert_eq!(view.metadata("t"), Some(&json!({"risk": "high"})));
    let declaration = serde_json::to_value(view.declaration("t").unwrap()).unwrap();
    assert_eq!(
        declaration,
        json!({"name": "t", "description": "returns 1", "parameters": {"type": "object"}})
    );
}
