//! SPEC §11: `tools/change` events.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use serde_json::json;
use tether_tools::{AgentPipelineScope, CoreEvents, ListenerOrder, ToolRegistry, ToolsChangeKind};

type Seen = Arc<Mutex<Vec<(ToolsChangeKind, Option<u64>, String)>>>;

fn watch(registry: &ToolRegistry) -> (Seen, tether_tools::Registration) {
    let seen: Seen = Arc::default();
    let sink = Arc::clone(&seen);
    let handle = registry.on_tools_change(move |event| {
        assert_eq!(event.event_name(), CoreEvents::TOOLS_CHANGE);
        sink.lock().unwrap().push((
            event.kind,
            event.scope.as_ref().map(AgentPipelineScope::id),
            event.name.clone(),
        ));
    });
    (seen, handle)
}

#[test]
fn every_registration_and_disposal_emits_tools_change_with_scope_and_name() {
    assert_eq!(CoreEvents::TOOLS_CHANGE, "tools/change");
    let registry = ToolRegistry::new();
    let (seen, _watch) = watch(&registry);
    let scope = AgentPipelineScope::root();
    let global = register(&registry, returning("g", json!(1)), None);
    let scoped = register(&registry, returning("s", json!(1)), Some(&scope));
    global.dispose();
    global.dispose();
    drop(scoped);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            (ToolsChangeKind::Registered, None, "g".to_owned()),
            (ToolsChangeKind::Registered, Some(scope.id()), "s".to_owned()),
            (ToolsChangeKind::Disposed, None, "g".to_owned()),
            (ToolsChangeKind::Disposed, Some(scope.id()), "s".to_owned()),
        ],
        "one event per change; the second dispose emits nothing"
    );
}

#[test]
fn listener_and_guard_registrations_emit_nothing() {
    let registry = ToolRegistry::new();
    let (seen, _watch) = watch(&registry);
    let pre = registry.register_pre_execute(
        None,
        ListenerOrder::Append,
        pre_decides(tether_tools::ToolPreDecision::Allow),
    );
    let guard = registry.register_guard(None, ListenerOrder::Append, |_e| async { Ok(None) });
    drop((pre, guard));
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn a_failed_registration_emits_nothing() {
    let registry = ToolRegistry::new();
    let (seen, _watch) = watch(&registry);
    assert!(
        registry
            .register(returning("bad name", json!(1)), None, Default::default())
            .is_err()
    );
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn a_panicking_change_listener_is_contained_and_others_still_hear() {
    let registry = ToolRegistry::new();
    let _bad = registry.on_tools_change(|_| panic!("listener bug"));
    let (seen, _watch) = watch(&registry);
    register(&registry, returning("t", json!(1)), None).keep();
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(registry.tool_count(), 1);
}

#[test]
fn disposing_the_change_listener_stops_its_events() {
    let registry = ToolRegistry::new();
    let (seen, handle) = watch(&registry);
    handle.dispose();
    register(&registry, returning("t", json!(1)), None).keep();
    assert!(seen.lock().unwrap().is_empty());
}
