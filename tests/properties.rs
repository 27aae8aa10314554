//! Invariants stated once and checked over generated inputs (proptest).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use proptest::prelude::*;
use serde_json::json;
use tether_tools::{BoxError, ListenerOrder, ToolExecution, ToolRegistry};

/// What one generated guard does.
#[derive(Clone, Debug)]
enum GuardKind {
    Abstain,
    Veto,
    Fail,
}

fn guard_kind() -> impl Strategy<Value = GuardKind> {
    prop_oneof![Just(GuardKind::Abstain), Just(GuardKind::Veto), Just(GuardKind::Fail)]
}

fn install(registry: &ToolRegistry, kinds: &[GuardKind]) {
    for (i, kind) in kinds.iter().cloned().enumerate() {
        registry
            .register_guard(None, ListenerOrder::Append, move |_e: ToolExecution| {
                let kind = kind.clone();
                async move {
                    match kind {
                        GuardKind::Abstain => Ok(None),
                        GuardKind::Veto => Ok(Some(format!("veto {i}"))),
                        GuardKind::Fail => Err::<Option<String>, BoxError>("guard down".into()),
                    }
                }
            })
            .keep();
    }
}

fn outcome_code(kinds: &[GuardKind]) -> Option<&'static str> {
    let registry = registry_with(returning("t", json!(1)));
    install(&registry, kinds);
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let outcome = runtime.block_on(run(&registry, None, call("c", "t", "{}")));
    code(&outcome)
}

proptest! {
    #[test]
    fn declarations_are_always_sorted_and_unique_by_name(
        names in proptest::collection::vec("[A-Za-z0-9_.-]{1,6}", 0..40),
        scoped in proptest::collection::vec(any::<bool>(), 40),
        disposals in proptest::collection::vec(any::<bool>(), 40),
    ) {
        let registry = ToolRegistry::new();
        let scope = tether_tools::AgentPipelineScope::root();
        let mut handles = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let s = scoped[i].then_some(&scope);
            handles.push(register(&registry, returning(name, json!(i)), s));
        }
        for (handle, dispose) in handles.iter().zip(&disposals) {
            if *dispose {
                handle.dispose();
            }
        }
        for view_scope in [None, Some(&scope)] {
            let got: Vec<String> = registry.declarations(view_scope).iter().map(|d| d.name().to_owned()).collect();
            let mut expected = got.clone();
            expected.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            expected.dedup();
            prop_assert_eq!(&got, &expected);
        }
    }

    #[test]
    fn adding_guards_never_turns_a_denied_call_into_an_allowed_one(
        base in proptest::collection::vec(guard_kind(), 0..5),
        extra in proptest::collection::vec(guard_kind(), 0..5),
    ) {
        let before = outcome_code(&base);
        let mut more = base.clone();
        more.extend(extra);
        let after = outcome_code(&more);
        if before.is_some() {
            prop_assert!(after.is_some(), "{before:?} became allowed");
        }
        if before == Some("DENIED") {
            prop_assert_eq!(after, Some("DENIED"));
        }
    }

    #[test]
    fn the_outcome_never_depends_on_the_order_guards_were_registered_in(
        kinds in proptest::collection::vec(guard_kind(), 0..6),
        seed in any::<u64>(),
    ) {
        let mut shuffled = kinds.clone();
        // A deterministic shuffle driven by the seed.
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        prop_assert_eq!(outcome_code(&kinds), outcome_code(&shuffled));
    }
}
