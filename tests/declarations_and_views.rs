//! SPEC §4 and §5: declarations and sealed views.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tether_tools::{AgentPipelineScope, BoxError, Tool, ToolContext, ToolRegistry};

#[test]
fn declarations_are_sorted_by_ordinal_byte_order() {
    let registry = ToolRegistry::new();
    for name in ["b", "B", "a", "_x", "A-1", "a.b", "Z"] {
        register(&registry, returning(name, json!(1)), None).keep();
    }
    let names: Vec<_> = registry
        .declarations(None)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    // Byte order: uppercase before '_' before lowercase, unlike a locale sort.
    assert_eq!(names, ["A-1", "B", "Z", "_x", "a", "a.b", "b"]);
}

#[test]
fn declarations_carry_name_description_and_schema() {
    let registry = registry_with(echo("read", path_schema()));
    let declarations = registry.declarations(None);
    assert_eq!(declarations[0].name(), "read");
    assert_eq!(declarations[0].description(), "echoes its arguments");
    assert_eq!(declarations[0].parameters(), &path_schema());
}

#[test]
fn a_returned_snapshot_is_detached_from_later_changes() {
    let registry = ToolRegistry::new();
    let first = register(&registry, returning("t", json!("first")), None);
    let snapshot = registry.declarations(None);
    let _second = register(
        &registry,
        Tool::new(
            "t",
            "second",
            json!({"type": "object", "properties": {"x": {}}}),
            |_a, _c: ToolContext| async { Ok::<_, BoxError>(json!(2)) },
        ),
        None,
    );
    first.dispose();
    let _other = register(&registry, returning("u", json!(3)), None);
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot[0].description(), "returns \"first\"");
    assert_eq!(snapshot[0].parameters(), &json!({"type": "object"}));
}

#[tokio::test]
async fn a_tool_registered_after_sealing_is_unknown_to_the_view() {
    let registry = ToolRegistry::new();
    let view = registry.seal(None);
    let _late = register(&registry, returning("late", json!(1)), None);
    let outcome = registry
        .execute(call("c", "late", "{}"), &view, &Default::default())
        .await;
    assert_eq!(code(&outcome), Some("UNKNOWN_TOOL"));
    assert!(view.declarations().is_empty());
}

#[tokio::test]
async fn a_tool_disposed_after_sealing_still_resolves_in_the_view() {
    let registry = ToolRegistry::new();
    let tool = register(&registry, returning("t", json!("still here")), None);
    let view = registry.seal(None);
    tool.dispose();
    let outcome = registry.execute(call("c", "t", "{}"), &view, &Default::default()).await;
    assert_eq!(outcome.value(), &json!("still here"));
    assert_eq!(view.declarations().len(), 1);
    assert!(registry.declarations(None).is_empty());
}

#[tokio::test]
async fn a_view_keeps_the_registration_that_was_visible_when_sealed() {
    let registry = ToolRegistry::new();
    let _old = register(&registry, returning("t", json!("old")), None);
    let view = registry.seal(None);
    let _new = register(&registry, returning("t", json!("new")), None);
    let outcome = registry.execute(call("c", "t", "{}"), &view, &Default::default()).await;
    assert_eq!(outcome.value(), &json!("old"));
}

#[test]
fn a_view_tells_where_each_visible_tool_was_registered() {
    let registry = ToolRegistry::new();
    let scope = AgentPipelineScope::root();
    register(&registry, returning("g", json!(1)), None).keep();
    register(&registry, returning("s", json!(1)), Some(&scope)).keep();
    let view = registry.seal(Some(&scope));
    assert_eq!(view.origin("g"), Some(None));
    assert_eq!(view.origin("s"), Some(Some(&scope)));
    assert_eq!(view.origin("nope"), None);
    assert_eq!(view.scope(), Some(&scope));
}

#[test]
fn a_view_checks_arguments_as_the_pipeline_will() {
    let registry = registry_with(echo("read", path_schema()));
    let view = registry.seal(None);
    let execution =
        |name: &str, raw: &str| tether_tools::ToolExecution::new(&call("c", name, raw), None, Default::default());
    assert_eq!(view.check_arguments(&execution("read", r#"{"path": "a"}"#)), Ok(()));
    let problem = view.check_arguments(&execution("read", r#"{"path": 7}"#)).unwrap_err();
    assert!(
        problem.starts_with("arguments do not match the schema: at /path"),
        "{problem}"
    );
    assert!(
        view.check_arguments(&execution("read", "[]"))
            .unwrap_err()
            .contains("found an array")
    );
    assert!(
        view.check_arguments(&execution("ghost", "{}"))
            .unwrap_err()
            .starts_with("unknown tool")
    );
}
