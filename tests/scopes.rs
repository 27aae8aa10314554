//! SPEC §3: scopes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use serde_json::json;
use tether_tools::{AgentPipelineScope, ScopeError, ToolRegistry};

#[test]
fn identity_is_by_reference_not_by_value() {
    let a = AgentPipelineScope::builder()
        .session_id("s")
        .owner("o")
        .build()
        .unwrap();
    let b = AgentPipelineScope::builder()
        .session_id("s")
        .owner("o")
        .build()
        .unwrap();
    assert_ne!(a, b);
    assert_eq!(a, a.clone());
}

#[test]
fn a_child_inherits_every_identity_field_it_does_not_set() {
    let session: Arc<dyn std::any::Any + Send + Sync> = Arc::new(42_u32);
    let parent = AgentPipelineScope::builder()
        .session_id("sess-1")
        .session(Arc::clone(&session))
        .owner("alice")
        .build()
        .unwrap();
    let child = parent.child();
    assert_eq!(child.session_id(), Some("sess-1"));
    assert_eq!(child.owner(), Some("alice"));
    assert_eq!(child.session().and_then(|s| s.downcast_ref::<u32>()), Some(&42));
    let grandchild = AgentPipelineScope::builder()
        .parent(&child)
        .session_id("sess-2")
        .build()
        .unwrap();
    assert_eq!(grandchild.session_id(), Some("sess-2"));
    assert_eq!(grandchild.owner(), Some("alice"));
    assert_eq!(grandchild.parent(), Some(&child));
    assert_eq!(grandchild.depth(), 2);
}

#[test]
fn a_child_may_not_replace_an_ancestors_owner() {
    let root = AgentPipelineScope::builder().owner("alice").build().unwrap();
    let middle = root.child();
    let error = AgentPipelineScope::builder()
        .parent(&middle)
        .owner("mallory")
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        ScopeError::OwnerConflict {
            inherited: "alice".into(),
            requested: "mallory".into()
        }
    );
}

#[test]
fn a_child_may_restate_the_same_owner_or_set_one_where_none_is_inherited() {
    let root = AgentPipelineScope::builder().owner("alice").build().unwrap();
    assert!(
        AgentPipelineScope::builder()
            .parent(&root)
            .owner("alice")
            .build()
            .is_ok()
    );
    let anonymous = AgentPipelineScope::root();
    let owned = AgentPipelineScope::builder()
        .parent(&anonymous)
        .owner("bob")
        .build()
        .unwrap();
    assert_eq!(owned.owner(), Some("bob"));
    assert_eq!(anonymous.owner(), None);
}

#[tokio::test]
async fn a_call_sees_its_scope_its_ancestors_and_the_global_layer_but_not_siblings_or_children() {
    let registry = ToolRegistry::new();
    let root = AgentPipelineScope::root();
    let left = root.child();
    let right = root.child();
    let below_left = left.child();
    let _g = register(&registry, returning("global", json!(0)), None);
    let _r = register(&registry, returning("at_root", json!(1)), Some(&root));
    let _l = register(&registry, returning("at_left", json!(2)), Some(&left));
    let _s = register(&registry, returning("at_right", json!(3)), Some(&right));
    let _b = register(&registry, returning("below_left", json!(4)), Some(&below_left));
    let names = |scope: Option<&AgentPipelineScope>| -> Vec<String> {
        registry
            .declarations(scope)
            .iter()
            .map(|d| d.name().to_owned())
            .collect()
    };
    assert_eq!(names(Some(&left)), ["at_left", "at_root", "global"]);
    assert_eq!(names(Some(&below_left)), ["at_left", "at_root", "below_left", "global"]);
    assert_eq!(names(None), ["global"]);
    let outcome = run(&registry, Some(&left), call("c", "at_right", "{}")).await;
    assert_eq!(code(&outcome), Some("UNKNOWN_TOOL"));
}

#[test]
fn two_scopes_built_alike_do_not_share_registrations() {
    let registry = ToolRegistry::new();
    let a = AgentPipelineScope::builder().session_id("same").build().unwrap();
    let b = AgentPipelineScope::builder().session_id("same").build().unwrap();
    let _t = register(&registry, returning("t", json!(1)), Some(&a));
    assert_eq!(registry.declarations(Some(&a)).len(), 1);
    assert!(registry.declarations(Some(&b)).is_empty());
}
