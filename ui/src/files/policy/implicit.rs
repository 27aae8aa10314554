//! The rules every policy runs besides its own, and the only rules a console
//! started without `--policy` runs: MCP pinning is enforced whatever the
//! policy file says (a held tool is denied, and a tool whose definition is
//! not pinned yet is asked, before any rule of the file can allow it), a
//! rule on annotations only believes the pinned tools of the servers the
//! policy trusts, and a call no rule decides gets the policy's default
//! (asked, unless the file says `"default"`).

use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

use super::rule::{Matcher, Predicate, Rule};
use super::{Action, Stage, Unmatched};

/// The id of the rule every policy starts with: a call of an MCP tool whose
/// definition changed since it was approved is denied.
pub const HELD_DENIED: &str = "mcp-held-tools-are-denied";

/// The id of the rule every policy runs second, before its own: a call of
/// an MCP tool whose definition is not pinned yet is asked.
pub const UNPINNED_ASKS: &str = "mcp-unpinned-tools-are-asked";

/// The id of the rule that asks every call no other pre-execute rule
/// decides: the default, and what a console without `--policy` does.
pub const UNMATCHED_ASKS: &str = "unmatched-calls-are-asked";

/// The id of the rule that denies every call no other pre-execute rule
/// decides (`"default": "deny"`).
pub const UNMATCHED_DENIED: &str = "unmatched-calls-are-denied";

/// The id of the rule that sends every call no other pre-execute rule
/// decides to the policy's only reviewer (`"default": "review"`).
pub const UNMATCHED_REVIEWED: &str = "unmatched-calls-are-reviewed";

/// Why a held tool's calls are denied (what the model reads).
pub const HELD_REASON: &str = "definition changed since approved";

fn metadata_is(pointer: &str, value: bool) -> Matcher {
    Matcher {
        metadata: vec![Predicate::Equals {
            pointer: pointer.into(),
            value: Value::Bool(value),
        }],
        ..Matcher::default()
    }
}

/// Rules that run before a policy's own.
pub(super) fn before() -> Vec<Rule> {
    // A gateway holds a tool whose definition changed (a rug pull) until the
    // human approves the new one; no rule of a file can let its calls through.
    let held = Rule {
        id: Arc::from(HELD_DENIED),
        stage: Stage::PreExecute,
        matcher: metadata_is("/mcp/held", true),
        result: None,
        action: Action::Deny {
            reason: HELD_REASON.into(),
        },
    };
    // Until its definition is pinned (seen in an earlier session, or
    // approved), an MCP tool is asked, whatever it claims and whatever a
    // rule of the file would allow: what it is was never seen by anyone.
    let unpinned = Rule {
        id: Arc::from(UNPINNED_ASKS),
        stage: Stage::PreExecute,
        matcher: metadata_is("/mcp/pinned", false),
        result: None,
        action: Action::Ask {
            reason: Some("an MCP tool whose definition is not pinned yet".into()),
            timeout: None,
            approvals: None,
        },
    };
    vec![held, unpinned]
}

/// A rule of the file as it runs: a condition on annotations holds only
/// for a pinned, not held, tool of a server in `trusted` (the policy's
/// `trust_annotations`). Elsewhere a server's annotations are claims no
/// rule may believe, as if the tool had none: annotation conditions are
/// `equals` conditions, which no absent value meets, so requiring the
/// trust beside them is the same as hiding the annotations.
pub(super) fn believing(mut rule: Rule, trusted: &[String]) -> Rule {
    let on_annotations = |p: &Predicate| match p {
        Predicate::Equals { pointer, .. }
        | Predicate::Exists { pointer, .. }
        | Predicate::Regex { pointer, .. }
        | Predicate::Within { pointer, .. }
        | Predicate::Secret { pointer, .. } => pointer.starts_with("/annotations"),
    };
    if !rule.matcher.metadata.iter().any(on_annotations) {
        return rule;
    }
    let names: Vec<String> = trusted.iter().map(|name| regex::escape(name)).collect();
    let pattern = format!("^(?:{})$", names.join("|"));
    let server = match Regex::new(&pattern) {
        Ok(regex) if !names.is_empty() => Predicate::Regex {
            pointer: "/mcp/server".into(),
            regex,
        },
        // No server is trusted: a condition nothing meets (the whole
        // metadata always exists).
        _ => Predicate::Exists {
            pointer: String::new(),
            exists: false,
        },
    };
    let trust = [
        Predicate::Equals {
            pointer: "/mcp/pinned".into(),
            value: Value::Bool(true),
        },
        Predicate::Equals {
            pointer: "/mcp/held".into(),
            value: Value::Bool(false),
        },
        server,
    ];
    rule.matcher.metadata.splice(0..0, trust);
    rule
}

/// Rules that run after a policy's own: every call no rule decided gets
/// the policy's default (`name` is the policy's, `None` without a file).
pub(super) fn after(default: Unmatched, name: Option<&str>, reviewer: Option<&str>) -> Vec<Rule> {
    let why = match name {
        Some(name) => format!("no rule of the policy {name:?} decides this call"),
        None => "no rule decides this call".to_owned(),
    };
    let default = match default {
        // Nothing decides, and the engine allows.
        Unmatched::Allow => None,
        Unmatched::Ask => Some(Rule {
            id: Arc::from(UNMATCHED_ASKS),
            stage: Stage::PreExecute,
            matcher: Matcher::default(),
            result: None,
            action: Action::Ask {
                reason: Some(why),
                timeout: None,
                approvals: None,
            },
        }),
        Unmatched::Deny => Some(Rule {
            id: Arc::from(UNMATCHED_DENIED),
            stage: Stage::PreExecute,
            matcher: Matcher::default(),
            result: None,
            action: Action::Deny { reason: why },
        }),
        // Checked at load: there is exactly one reviewer.
        Unmatched::Review => reviewer.map(|reviewer| Rule {
            id: Arc::from(UNMATCHED_REVIEWED),
            stage: Stage::PreExecute,
            matcher: Matcher::default(),
            result: None,
            action: Action::Review {
                reviewer: reviewer.to_owned(),
            },
        }),
    };
    default.into_iter().collect()
}
