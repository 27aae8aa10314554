//! Every policy action and match kind, and every decision provenance, through
//! a real registry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tether_console::files::policy::{Policy, UNMATCHED_DENIED};
use tether_console::files::scenario::{NamedAnswer, Scenario};
use tether_console::files::source::Document;
use tether_console::session::provenance::TrailEntry;
use tether_console::session::replay::{CallReport, Session};

const SCENARIO: &str = r#"{
  "scopes": [
    {"id": "org", "owner": "acme"},
    {"id": "team", "parent": "org"},
    {"id": "solo", "owner": "bob"}
  ],
  "tools": [
    {"name": "fs.read", "scope": "org", "body": {"echo": true}},
    {"name": "fs.write", "scope": "org", "body": {"return": {"written": true}}},
    {"name": "fs.read", "scope": "solo", "body": {"echo": true}},
    {"name": "secret", "scope": "org", "body": {"return": {"token": "AKIAABCDEFGHIJKLMNOP", "level": 3}}},
    {"name": "slow", "scope": "org", "body": {"sleep_ms": 2000, "then": {"return": "late"}}},
    {"name": "quick", "scope": "org", "body": {"sleep_ms": 1, "then": {"return": "fast"}}},
    {"name": "strict", "scope": "org", "parameters": {"type": "object", "required": ["x"]}, "body": {"echo": true}},
    {"name": "broken", "scope": "org", "body": {"fail": "boom"}},
    {"name": "hang", "scope": "org", "concurrency": "always", "body": {"wait_for_cancel": true}}
  ],
  "batches": [{"calls": []}]
}"#;

fn scenario_with(batch_scope: &str, calls: Value) -> Scenario {
    let mut value: Value = serde_json::from_str(SCENARIO).unwrap();
    value["batches"] = json!([{ "scope": batch_scope, "calls": calls }]);
    let doc = Document::parse("s.json".into(), value.to_string()).unwrap();
    Scenario::from_document(&doc).unwrap()
}

/// A policy of these rules that lets calls no rule decides run, so each
/// test sees only what its own rules do.
fn policy(rules: Value) -> Policy {
    policy_of(json!({ "default": "allow", "rules": rules }))
}

fn policy_of(file: Value) -> Policy {
    let doc = Document::parse("p.json".into(), file.to_string()).unwrap();
    Policy::from_document(&doc).unwrap()
}

async fn run(scope: &str, calls: Value, rules: Value, answer: NamedAnswer) -> Vec<CallReport> {
    run_with(scope, calls, &policy(rules), answer).await
}

async fn run_with(scope: &str, calls: Value, policy: &Policy, answer: NamedAnswer) -> Vec<CallReport> {
    let session = Session::new(scenario_with(scope, calls), Some(policy)).unwrap();
    let _answerer = session.install_scripted_answerer(answer);
    let reports = session.run_batch(0, None).await;
    assert_eq!(session.log.len(), 0, "every trail is taken when its call ends");
    reports
}

fn summary(report: &CallReport) -> (Option<&'static str>, String) {
    (report.outcome.code().map(|c| c.as_str()), report.decided_by.clone())
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "name": name, "arguments": args})
}

#[tokio::test]
async fn a_call_no_rule_decides_is_asked_unless_the_policy_says_otherwise() {
    let rules = json!([
        {"id": "reads", "stage": "pre-execute", "match": {"tool": "fs.read"}, "action": {"type": "allow"}}
    ]);
    let calls = json!([call("1", "fs.read", json!({})), call("2", "fs.write", json!({}))]);
    let unstated = policy_of(json!({ "rules": rules }));
    let reports = run_with("org", calls.clone(), &unstated, NamedAnswer::Reject).await;
    assert_eq!(summary(&reports[0]), (None, "rule:reads".into()));
    assert_eq!(
        summary(&reports[1]),
        (Some("DENIED"), "script".into()),
        "asked, and rejected"
    );
    let reports = run_with("org", calls.clone(), &unstated, NamedAnswer::Approve).await;
    assert_eq!(summary(&reports[1]), (None, "script".into()), "asked, and approved");
    let ask = policy_of(json!({ "default": "ask", "rules": rules }));
    let reports = run_with("org", calls.clone(), &ask, NamedAnswer::Reject).await;
    assert_eq!(summary(&reports[1]), (Some("DENIED"), "script".into()));
    let deny = policy_of(json!({ "default": "deny", "rules": rules, "name": "strict" }));
    let reports = run_with("org", calls.clone(), &deny, NamedAnswer::Approve).await;
    assert_eq!(
        summary(&reports[1]),
        (Some("DENIED"), format!("rule:{UNMATCHED_DENIED}"))
    );
    assert_eq!(
        reports[1].outcome.value(),
        &json!({"message": "no rule of the policy \"strict\" decides this call"})
    );
    let allow = policy_of(json!({ "default": "allow", "rules": rules }));
    let reports = run_with("org", calls, &allow, NamedAnswer::Reject).await;
    assert_eq!(summary(&reports[1]), (None, "body".into()), "nobody was asked");
}

#[tokio::test]
async fn without_a_policy_file_every_call_is_asked() {
    let calls = json!([call("1", "fs.read", json!({}))]);
    let reports = run_with("org", calls.clone(), &Policy::implicit_only(), NamedAnswer::Reject).await;
    assert_eq!(summary(&reports[0]), (Some("DENIED"), "script".into()));
    let reports = run_with("org", calls, &Policy::implicit_only(), NamedAnswer::Approve).await;
    assert_eq!(summary(&reports[0]), (None, "script".into()));
}

#[tokio::test]
async fn pre_execute_allow_deny_and_ask_each_decide_and_say_so() {
    let rules = json!([
        {"id": "reads", "stage": "pre-execute", "match": {"tool": "fs.read"}, "action": {"type": "allow"}},
        {"id": "no-secrets", "stage": "pre-execute", "match": {"tool": "secret"}, "action": {"type": "deny", "reason": "never"}},
        {"id": "ask-writes", "stage": "pre-execute", "match": {"tool": "fs.*"}, "action": {"type": "ask", "reason": "a write"}}
    ]);
    let calls = json!([
        call("1", "fs.read", json!({})),
        call("2", "secret", json!({})),
        call("3", "fs.write", json!({}))
    ]);
    let reports = run("org", calls.clone(), rules.clone(), NamedAnswer::Approve).await;
    assert_eq!(summary(&reports[0]), (None, "rule:reads".into()));
    assert_eq!(summary(&reports[1]), (Some("DENIED"), "rule:no-secrets".into()));
    assert_eq!(reports[1].outcome.value(), &json!({"message": "never"}));
    assert_eq!(
        summary(&reports[2]),
        (None, "script".into()),
        "fs.read matched first; fs.write fell to the ask"
    );
    let rejected = run("org", calls, rules, NamedAnswer::Reject).await;
    assert_eq!(summary(&rejected[2]), (Some("DENIED"), "script".into()));
}

#[tokio::test]
async fn the_first_matching_rule_of_a_stage_decides() {
    let rules = json!([
        {"id": "first", "stage": "pre-execute", "match": {"tool": "fs.*"}, "action": {"type": "deny", "reason": "first"}},
        {"id": "second", "stage": "pre-execute", "match": {"tool": "fs.read"}, "action": {"type": "allow"}}
    ]);
    let reports = run(
        "org",
        json!([call("1", "fs.read", json!({}))]),
        rules,
        NamedAnswer::None,
    )
    .await;
    assert_eq!(summary(&reports[0]), (Some("DENIED"), "rule:first".into()));
}

#[tokio::test]
async fn a_guard_vetoes_even_an_allowed_call_and_the_first_veto_is_named() {
    let rules = json!([
        {"id": "allow-all", "stage": "pre-execute", "action": {"type": "allow"}},
        {"id": "no-etc", "stage": "guard", "match": {"args": [{"pointer": "/path", "regex": "^/etc"}]}, "action": {"type": "veto", "reason": "system path"}},
        {"id": "no-write", "stage": "guard", "match": {"tool": "fs.write"}, "action": {"type": "veto", "reason": "read-only"}}
    ]);
    let calls = json!([
        call("1", "fs.write", json!({"path": "/etc/passwd"})),
        call("2", "fs.read", json!({"path": "/home/me"})),
        call("3", "fs.write", json!({"path": "/tmp/x"}))
    ]);
    let reports = run("org", calls, rules, NamedAnswer::None).await;
    assert_eq!(summary(&reports[0]), (Some("DENIED"), "guard:no-etc".into()));
    let vetoes = reports[0]
        .trail
        .iter()
        .filter(|e| matches!(e, TrailEntry::GuardVeto { .. }))
        .count();
    assert_eq!(vetoes, 2, "both guards were asked: {:?}", reports[0].trail);
    assert_eq!(summary(&reports[1]), (None, "rule:allow-all".into()));
    assert_eq!(summary(&reports[2]), (Some("DENIED"), "guard:no-write".into()));
}

#[tokio::test]
async fn an_execute_timeout_aborts_a_slow_body_and_leaves_a_fast_one_alone() {
    let rules = json!([{"id": "deadline", "stage": "execute", "match": {"tool": "{slow,quick}"}, "action": {"type": "timeout", "ms": 50}}]);
    let calls = json!([call("1", "slow", json!({})), call("2", "quick", json!({}))]);
    let reports = run("org", calls, rules, NamedAnswer::None).await;
    assert_eq!(summary(&reports[0]), (Some("ABORTED"), "rule:deadline".into()));
    assert_eq!(reports[0].outcome.value(), &json!({"message": "timed out after 50 ms"}));
    assert_eq!(summary(&reports[1]), (None, "body".into()));
    assert_eq!(reports[1].outcome.value(), &json!("fast"));
}

#[tokio::test]
async fn post_execute_accepts_replaces_and_blocks_by_result() {
    let rules = json!([
        {"id": "keys", "stage": "post-execute", "match": {"tool": "secret"}, "result": {"regex": "AKIA[A-Z0-9]{16}"}, "action": {"type": "block", "reason": "a key"}},
        {"id": "redact", "stage": "post-execute", "match": {"tool": "fs.read"}, "result": {"pointer": "/path", "equals": "/private"}, "action": {"type": "replace", "value": "[redacted]"}},
        {"id": "keep", "stage": "post-execute", "action": {"type": "accept"}}
    ]);
    let calls = json!([
        call("1", "secret", json!({})),
        call("2", "fs.read", json!({"path": "/private"})),
        call("3", "fs.read", json!({"path": "/public"}))
    ]);
    let reports = run("org", calls, rules, NamedAnswer::None).await;
    assert_eq!(summary(&reports[0]), (Some("BLOCKED"), "rule:keys".into()));
    assert_eq!(summary(&reports[1]), (None, "rule:redact".into()));
    assert_eq!(reports[1].outcome.value(), &json!("[redacted]"));
    assert_eq!(
        reports[2].outcome.value(),
        &json!({"path": "/public"}),
        "accept keeps the result"
    );
}

#[tokio::test]
async fn a_scope_match_covers_the_scope_and_its_descendants_only() {
    let rules = json!([{"id": "org-only", "stage": "pre-execute", "match": {"scope": "org"}, "action": {"type": "deny", "reason": "org"}}]);
    let in_team = run(
        "team",
        json!([call("1", "fs.read", json!({}))]),
        rules.clone(),
        NamedAnswer::None,
    )
    .await;
    assert_eq!(summary(&in_team[0]), (Some("DENIED"), "rule:org-only".into()));
    let in_solo = run(
        "solo",
        json!([call("1", "fs.read", json!({}))]),
        rules,
        NamedAnswer::None,
    )
    .await;
    assert_eq!(summary(&in_solo[0]), (None, "body".into()));
}

#[tokio::test]
async fn an_owner_match_uses_the_inherited_owner() {
    let rules = json!([{"id": "bob", "stage": "pre-execute", "match": {"owner": "acme"}, "action": {"type": "deny", "reason": "acme"}}]);
    let team = run(
        "team",
        json!([call("1", "fs.read", json!({}))]),
        rules.clone(),
        NamedAnswer::None,
    )
    .await;
    assert_eq!(team[0].decided_by, "rule:bob");
    let solo = run(
        "solo",
        json!([call("1", "fs.read", json!({}))]),
        rules,
        NamedAnswer::None,
    )
    .await;
    assert_eq!(solo[0].decided_by, "body");
}

#[tokio::test]
async fn argument_predicates_exist_equal_and_match() {
    let deny = |id: &str, predicate: Value| json!({"id": id, "stage": "pre-execute", "match": {"args": [predicate]}, "action": {"type": "deny", "reason": id}});
    let rules = json!([
        deny("has-force", json!({"pointer": "/force", "exists": true})),
        deny("mode-rw", json!({"pointer": "/mode", "equals": "rw"})),
        deny("big-number", json!({"pointer": "/n", "regex": "^[0-9]{4,}$"})),
        deny("no-path", json!({"pointer": "/path", "exists": false}))
    ]);
    let calls = json!([
        call("1", "fs.read", json!({"path": "a", "force": false})),
        call("2", "fs.read", json!({"path": "a", "mode": "rw"})),
        call("3", "fs.read", json!({"path": "a", "mode": "ro", "n": 12345})),
        call("4", "fs.read", json!({"mode": "ro"})),
        call("5", "fs.read", json!({"path": "a", "n": 12}))
    ]);
    let reports = run("org", calls, rules, NamedAnswer::None).await;
    let decided: Vec<&str> = reports.iter().map(|r| r.decided_by.as_str()).collect();
    assert_eq!(
        decided,
        [
            "rule:has-force",
            "rule:mode-rw",
            "rule:big-number",
            "rule:no-path",
            "body"
        ]
    );
}

#[tokio::test]
async fn provenance_names_schema_body_registry_cancel_timeout_and_missing_answerer() {
    let rules =
        json!([{"id": "ask-hang", "stage": "pre-execute", "match": {"tool": "quick"}, "action": {"type": "ask"}}]);
    let calls = json!([
        call("1", "strict", json!({})),
        call("2", "broken", json!({})),
        call("3", "nope", json!({})),
        call("4", "quick", json!({}))
    ]);
    let reports = run("org", calls.clone(), rules.clone(), NamedAnswer::None).await;
    let decided: Vec<(Option<&str>, String)> = reports.iter().map(summary).collect();
    assert_eq!(
        decided,
        [
            (Some("INVALID_ARGS"), "schema".to_owned()),
            (Some("TOOL_ERROR"), "body".to_owned()),
            (Some("UNKNOWN_TOOL"), "registry".to_owned()),
            (Some("UNAVAILABLE"), "no-answerer".to_owned()),
        ]
    );
    let timed_out = run("org", calls, rules, NamedAnswer::Timeout).await;
    assert_eq!(summary(&timed_out[3]), (Some("UNAVAILABLE"), "timeout".into()));

    let mut value: Value = serde_json::from_str(SCENARIO).unwrap();
    value["batches"] = json!([{"scope": "org", "cancel_after_ms": 50, "calls": [call("1", "hang", json!({})), call("2", "quick", json!({}))]}]);
    let scenario = Scenario::from_document(&Document::parse("s.json".into(), value.to_string()).unwrap()).unwrap();
    let session = Session::new(scenario, None).unwrap();
    let reports = session.run_batch(0, None).await;
    assert_eq!(summary(&reports[0]), (Some("ABORTED"), "cancelled".into()));
    assert_eq!(
        summary(&reports[1]),
        (Some("ABORTED_BEFORE_DISPATCH"), "cancelled".into())
    );
}

#[tokio::test]
async fn reloading_a_policy_replaces_every_rule_at_once() {
    let session = Session::new(scenario_with("org", json!([call("1", "fs.read", json!({}))])), None).unwrap();
    assert_eq!(session.run_batch(0, None).await[0].decided_by, "body");
    session.set_policy(&policy(
        json!([{"id": "v1", "stage": "pre-execute", "action": {"type": "deny", "reason": "v1"}}]),
    ));
    assert_eq!(session.run_batch(0, None).await[0].decided_by, "rule:v1");
    session.set_policy(&policy(
        json!([{"id": "v2", "stage": "pre-execute", "action": {"type": "allow"}}]),
    ));
    assert_eq!(session.run_batch(0, None).await[0].decided_by, "rule:v2");
    assert_eq!(
        session.registry.listener_count(),
        2,
        "the body timer and v2's listener, nothing of v1"
    );
}

#[tokio::test]
async fn the_prompt_says_when_a_guard_will_veto_the_call_after_approval() {
    use tether_console::session::approval::ConsoleAnswerer;
    use tether_console::session::events::{AppEvent, AppEventSender, PromptReply};
    let rules = json!([
        {"id": "ask-writes", "stage": "pre-execute", "match": {"tool": "fs.write"}, "action": {"type": "ask", "reason": "a write"}},
        {"id": "no-etc", "stage": "guard", "match": {"args": [{"pointer": "/path", "regex": "^/etc"}]}, "action": {"type": "veto", "reason": "system files are off limits"}}
    ]);
    let calls = json!([
        call("w1", "fs.write", json!({"path": "/etc/passwd"})),
        call("w2", "fs.write", json!({"path": "notes.txt"}))
    ]);
    let session = Session::new(scenario_with("org", calls), Some(&policy(rules))).unwrap();
    let (events, mut receiver) = AppEventSender::new();
    let _answerer = session.registry.set_approval_answerer(ConsoleAnswerer {
        events,
        timeout: std::time::Duration::from_secs(30),
        always: Default::default(),
        log: session.log.clone(),
        registry: session.registry.clone(),
        notify: None,
        waiting: Default::default(),
        escalation: Default::default(),
    });
    let human = async {
        let mut seen = Vec::new();
        while seen.len() < 2 {
            for event in receiver.recv_many().await.unwrap() {
                if let AppEvent::ApprovalRequested(prompt) = event {
                    seen.push((prompt.call_id.clone(), prompt.guard_veto.clone()));
                    prompt.reply.answer(PromptReply::Approve, &"test".into()).unwrap();
                }
            }
        }
        seen
    };
    let (reports, seen) = tokio::join!(session.run_batch(0, None), human);
    assert_eq!(
        seen,
        [
            (
                "w1".to_owned(),
                Some("guard no-etc: system files are off limits".to_owned())
            ),
            ("w2".to_owned(), None)
        ]
    );
    assert_eq!(summary(&reports[0]), (Some("DENIED"), "guard:no-etc".to_owned()));
    assert_eq!(summary(&reports[1]), (None, "human".to_owned()));
}

/// A library user may run a batch whose calls share an id (only the front
/// doors refuse one): each call still keeps its own decision trail.
#[tokio::test]
async fn calls_sharing_one_id_in_a_batch_keep_one_trail_each() {
    use std::num::NonZeroUsize;
    use tether_console::session::provenance::DecisionLog;
    use tether_tools::{ApprovalRequest, Tool, ToolCall, ToolRegistrationOptions, ToolRegistry};

    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let policy = policy_of(json!({"rules": [
        {"id": "reads-are-fine", "stage": "pre-execute", "match": {"tool": "read"}, "action": {"type": "allow"}},
        {"id": "no-deletes", "stage": "pre-execute", "match": {"tool": "delete"}, "action": {"type": "deny", "reason": "never"}},
        {"id": "ask-writes", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "ask"}}
    ]}));
    let _policy = tether_console::session::policy::install(&registry, &policy, &log);
    let answer_log = log.clone();
    let _answerer = registry.set_approval_answerer(move |request: ApprovalRequest| {
        let log = answer_log.clone();
        async move {
            let script = tether_console::files::scenario::ApprovalScript::Named(NamedAnswer::Approve);
            let timeout = std::time::Duration::from_secs(5);
            Ok::<_, tether_tools::BoxError>(
                tether_console::session::replay::scripted_answer(&request, script, timeout, &log).await,
            )
        }
    });
    let _tools: Vec<_> = ["read", "delete", "write"]
        .into_iter()
        .map(|name| {
            let body = |_a: Value, _c| async { Ok(json!(1)) };
            registry
                .register(
                    Tool::new(name, name, json!({"type": "object"}), body),
                    None,
                    ToolRegistrationOptions::default(),
                )
                .unwrap()
        })
        .collect();
    let calls = ["read", "delete", "write"]
        .map(|name| ToolCall::new("x", name, "{}"))
        .to_vec();
    let view = registry.seal(None);
    let batch = registry
        .execute_batch(
            calls,
            &view,
            NonZeroUsize::MIN,
            None,
            &tether_tools::Cancellation::new(),
        )
        .await;
    assert_eq!(log.len(), 3, "one trail per call, not one per call id");
    assert_eq!(
        batch
            .outcomes
            .iter()
            .map(|o| o.code().map(|c| c.as_str()))
            .collect::<Vec<_>>(),
        [None, Some("DENIED"), None]
    );
    let decided: Vec<String> = batch
        .outcomes
        .iter()
        .map(|o| tether_console::session::provenance::decided_by(o, &log.take_of(o)))
        .collect();
    assert_eq!(decided, ["rule:reads-are-fine", "rule:no-deletes", "script"]);
    assert!(log.is_empty());
}
