//! The declarative concurrency rule each tool was registered with, kept by
//! scope and name: the engine holds only the predicate built from it, and
//! the journal records the rule beside the tool's schema (`tool/declared`)
//! so a replay classifies calls as they were classified then.
//!
//! Kept for the most recent registrations only, so a console that runs all
//! day stays flat; a tool registered so long ago that its rule was let go
//! is recorded with `concurrency: null`, and a replay falls back to the
//! modes its calls were recorded in.

use std::collections::{HashMap, VecDeque};
use std::sync::{LazyLock, Mutex, PoisonError};

use serde_json::Value;

use super::{Concurrency, NamedConcurrency};

/// Registrations whose rule is kept.
const KEPT: usize = 16_384;

type Key = (Option<u64>, String);

#[derive(Default)]
struct Rules {
    by_key: HashMap<Key, Value>,
    order: VecDeque<Key>,
}

static RULES: LazyLock<Mutex<Rules>> = LazyLock::new(Mutex::default);

/// The rule as the journal writes it: `"always"`, `"never"` (also for a tool
/// registered without one) or `{"pointer": …, "equals": …}`.
pub fn as_json(rule: Option<&Concurrency>) -> Value {
    let rule = rule.cloned().unwrap_or(Concurrency::Named(NamedConcurrency::Never));
    serde_json::to_value(rule).unwrap_or(Value::Null)
}

/// Notes that the tool `name` in the scope with id `scope` (`None`: global)
/// was registered with `rule`.
pub fn remember(scope: Option<u64>, name: &str, rule: Option<&Concurrency>) {
    let mut rules = RULES.lock().unwrap_or_else(PoisonError::into_inner);
    let key = (scope, name.to_owned());
    if rules.by_key.insert(key.clone(), as_json(rule)).is_none() {
        rules.order.push_back(key);
    }
    while rules.order.len() > KEPT {
        if let Some(old) = rules.order.pop_front() {
            rules.by_key.remove(&old);
        }
    }
}

/// The rule the tool was registered with, if it is still known.
pub fn rule_of(scope: Option<u64>, name: &str) -> Option<Value> {
    let rules = RULES.lock().unwrap_or_else(PoisonError::into_inner);
    rules.by_key.get(&(scope, name.to_owned())).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_kept_by_scope_and_name_and_a_later_registration_replaces_it() {
        let always = Concurrency::Named(NamedConcurrency::Always);
        remember(Some(u64::MAX - 7), "lookup", Some(&always));
        assert_eq!(rule_of(Some(u64::MAX - 7), "lookup"), Some(Value::from("always")));
        assert_eq!(rule_of(Some(u64::MAX - 8), "lookup"), None);
        remember(Some(u64::MAX - 7), "lookup", None);
        assert_eq!(rule_of(Some(u64::MAX - 7), "lookup"), Some(Value::from("never")));
        let when = Concurrency::When {
            pointer: "/mode".into(),
            equals: "read".into(),
        };
        assert_eq!(
            as_json(Some(&when)),
            serde_json::json!({"pointer": "/mode", "equals": "read"})
        );
    }
}
