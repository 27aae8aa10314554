//! The reviewer tier with command reviewers (docs/policy.md, "Reviewers"):
//! it only narrows, and anything short of a clear answer asks the human.
//! Reviewers in policy files, `tether check` and replays are in
//! `reviewer_files.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod reviewers_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reviewers_support::*;
use serde_json::{Value, json};
use tether_console::files::policy::Policy;
use tether_console::files::scenario::Scenario;
use tether_console::files::source::Document;
use tether_console::session::journal::Decision;
use tether_console::session::provenance::{ReviewVerdict, TrailEntry};
use tether_console::session::replay::{CallReport, Session};
use tether_tools::{ApprovalAnswer, ApprovalRequest, BoxError};

/// What the human was asked: (call id, the reason on the prompt).
type Asked = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// Runs the calls; the "human" rejects every prompt and notes what it saw.
async fn run(policy: &Policy, calls: Value) -> (Vec<CallReport>, Vec<(String, Option<String>)>) {
    run_in("agent0", policy, calls).await
}

async fn run_in(scope: &str, policy: &Policy, calls: Value) -> (Vec<CallReport>, Vec<(String, Option<String>)>) {
    let session = Session::new(scenario(scope, calls), Some(policy)).unwrap();
    let asked: Asked = Arc::default();
    let seen = Arc::clone(&asked);
    let log = session.log.clone();
    let _human = session.registry.set_approval_answerer(move |request: ApprovalRequest| {
        seen.lock().unwrap().push((
            request.execution().call_id().to_owned(),
            request.reason().map(str::to_owned),
        ));
        log.record(
            request.execution(),
            TrailEntry::Human {
                approved: false,
                reason: Some("the human said no".into()),
                by: "main".into(),
                waited: Duration::ZERO,
            },
        );
        async {
            Ok::<_, BoxError>(ApprovalAnswer::Rejected {
                reason: Some("the human said no".into()),
            })
        }
    });
    let reports = session.run_batch(0, None).await;
    let asked = asked.lock().unwrap().clone();
    (reports, asked)
}

fn summary(report: &CallReport) -> (Option<&'static str>, String) {
    (report.outcome.code().map(|c| c.as_str()), report.decided_by.clone())
}

fn review_of(report: &CallReport) -> Option<(ReviewVerdict, String)> {
    report.trail.iter().find_map(|e| match e {
        TrailEntry::Reviewed { verdict, reason, .. } => Some((*verdict, reason.clone())),
        _ => None,
    })
}

const ALLOW_ALL: &str = r#"echo '{"decision": "allow", "reason": "looks fine"}'"#;

#[tokio::test]
async fn a_reviewer_that_allows_everything_cannot_clear_an_ask_rule_a_deny_rule_or_a_guard() {
    let rules = json!([
        {"id": "writes-are-asked", "stage": "pre-execute", "match": {"tool": "fs.write"}, "action": {"type": "ask", "reason": "a write"}},
        {"id": "rm-is-denied", "stage": "pre-execute", "match": {"tool": "shell", "args": [{"pointer": "/cmd", "regex": "^rm"}]},
         "action": {"type": "deny", "reason": "no rm"}},
        {"id": "no-etc", "stage": "guard", "match": {"tool": "fs.read", "args": [{"pointer": "/path", "regex": "^/etc"}]},
         "action": {"type": "veto", "reason": "not /etc"}}
    ]);
    let calls = json!([
        call("read", "fs.read", json!({"path": "src/lib.rs"})),
        call("write", "fs.write", json!({"path": "src/lib.rs"})),
        call("rm", "shell", json!({"cmd": "rm -rf target"})),
        call("etc", "fs.read", json!({"path": "/etc/shadow"})),
    ]);
    let (reports, asked) = run(&gated(ALLOW_ALL, 10_000, rules), calls).await;
    assert_eq!(summary(&reports[0]), (None, "reviewer:gate".into()));
    assert_eq!(
        review_of(&reports[0]),
        Some((ReviewVerdict::Allow, "looks fine".into()))
    );
    // The ask rule reached the human, and the reviewer never saw the call.
    assert_eq!(summary(&reports[1]), (Some("DENIED"), "human".into()));
    assert_eq!(review_of(&reports[1]), None);
    assert_eq!(asked, vec![("write".to_owned(), Some("a write".to_owned()))]);
    assert_eq!(summary(&reports[2]), (Some("DENIED"), "rule:rm-is-denied".into()));
    assert_eq!(review_of(&reports[2]), None);
    // Allowed by the reviewer, vetoed by the guard all the same.
    assert_eq!(summary(&reports[3]), (Some("DENIED"), "guard:no-etc".into()));
    assert_eq!(review_of(&reports[3]).map(|r| r.0), Some(ReviewVerdict::Allow));
}

#[tokio::test]
async fn a_reviewer_that_hangs_prints_garbage_or_exits_3_sends_each_call_to_the_human() {
    for (command, timeout_ms, why) in [
        ("sleep 30", 300, "no answer within 300 ms"),
        ("echo 'sure, go ahead'", 10_000, "its output is not {\"decision\""),
        (
            r#"echo '{"decision": "allow", "reason": "ok", "also": 1}'"#,
            10_000,
            "its output is not",
        ),
        (
            r#"echo '{"decision": "yes", "reason": "ok"}'"#,
            10_000,
            "its output is not",
        ),
        ("echo broken >&2; exit 3", 10_000, "it exited with 3: broken"),
    ] {
        let (reports, asked) = run(
            &gated(command, timeout_ms, json!([])),
            json!([call("c1", "fs.write", json!({}))]),
        )
        .await;
        assert_eq!(summary(&reports[0]), (Some("DENIED"), "human".into()), "{command}");
        let (verdict, reason) = review_of(&reports[0]).unwrap();
        assert_eq!(verdict, ReviewVerdict::Failed, "{command}");
        assert!(reason.contains(why), "{command}: {reason}");
        // Why is on the prompt.
        let prompt = asked[0].1.clone().unwrap();
        assert!(prompt.starts_with("reviewer gate failed: "), "{prompt}");
        assert!(prompt.contains(why), "{prompt}");
        let decision = Decision::of(&reports[0].outcome, &reports[0].trail);
        assert_eq!(decision.review.as_deref(), Some("failed"));
        assert_eq!(decision.asked_by.as_deref(), Some("unmatched-calls-are-reviewed"));
    }
}

#[tokio::test]
async fn a_reviewer_that_denies_gives_the_agent_its_reason_and_one_that_asks_puts_it_on_the_prompt() {
    let deny = r#"echo '{"decision": "deny", "reason": "deletes files outside the project"}'"#;
    let (reports, asked) = run(
        &gated(deny, 10_000, json!([])),
        json!([call("c1", "shell", json!({"cmd": "rm -rf ~"}))]),
    )
    .await;
    assert_eq!(summary(&reports[0]), (Some("DENIED"), "reviewer:gate".into()));
    assert_eq!(
        reports[0].outcome.value()["message"],
        "reviewer gate: deletes files outside the project"
    );
    assert!(asked.is_empty(), "{asked:?}");
    let decision = Decision::of(&reports[0].outcome, &reports[0].trail);
    assert_eq!(
        (
            decision.decided_by.as_str(),
            decision.stage.as_str(),
            decision.review.as_deref()
        ),
        ("reviewer:gate", "review", Some("deny"))
    );
    assert!(Decision::decider_matches(&decision.decided_by, "reviewer"));

    let ask = r#"echo '{"decision": "ask", "reason": "deletes files outside the project"}'"#;
    let (reports, asked) = run(
        &gated(ask, 10_000, json!([])),
        json!([call("c1", "shell", json!({"cmd": "rm -rf ~"}))]),
    )
    .await;
    assert_eq!(summary(&reports[0]), (Some("DENIED"), "human".into()));
    assert_eq!(
        asked,
        vec![(
            "c1".to_owned(),
            Some("reviewer: deletes files outside the project".to_owned())
        )]
    );
}

#[tokio::test]
async fn the_reviewer_is_given_the_call_its_agent_the_routing_rule_and_the_agents_last_calls() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.jsonl");
    let command = format!(
        r#"cat >> {}; echo '{{"decision": "allow", "reason": "ok"}}'"#,
        seen.display()
    );
    let rules = json!([
        {"id": "shell-is-reviewed", "stage": "pre-execute", "match": {"tool": "shell"}, "action": {"type": "review", "reviewer": "gate"}},
        {"id": "reads", "stage": "pre-execute", "match": {"tool": "fs.read"}, "action": {"type": "allow"}}
    ]);
    let policy = policy(json!({
        "reviewers": {"gate": {"command": command}},
        "rules": rules,
    }));
    // Two batches in one session: the second call's reviewer sees the first.
    let mut value: Value = serde_json::from_str(SCENARIO).unwrap();
    value["batches"] = json!([
        {"scope": "helper", "calls": [call("r1", "fs.read", json!({"path": "a"}))]},
        {"scope": "helper", "calls": [call("s1", "shell", json!({"cmd": "ls"}))]}
    ]);
    let doc = Document::parse("s.json".into(), value.to_string()).unwrap();
    let session = Session::new(Scenario::from_document(&doc).unwrap(), Some(&policy)).unwrap();
    let _human = session.install_scripted_answerer(tether_console::files::scenario::NamedAnswer::Reject);
    session.run_batch(0, None).await;
    let reports = session.run_batch(1, None).await;
    assert_eq!(summary(&reports[0]), (None, "reviewer:gate".into()));
    let given: Value = serde_json::from_str(std::fs::read_to_string(&seen).unwrap().trim()).unwrap();
    assert_eq!(given["tool"], "shell");
    assert_eq!(given["arguments"], json!({"cmd": "ls"}));
    assert_eq!(given["rule"], "shell-is-reviewed");
    assert_eq!(given["reviewer"], "gate");
    assert_eq!(given["agent"], "agent0");
    assert_eq!(given["subagent"], "helper");
    assert_eq!(given["scope"], "agent0/helper");
    assert_eq!(
        given["recent"],
        json!([{"tool": "fs.read", "arguments": "{\"path\":\"a\"}", "outcome": "ok", "decided_by": "rule:reads"}])
    );
}

/// A reviewer that answers only once `n` reviews are running at once.
fn barrier(dir: &std::path::Path, n: usize) -> String {
    format!(
        r#"touch {d}/$$; while [ "$(ls {d} | wc -l)" -lt {n} ]; do sleep 0.02; done; echo '{{"decision": "allow", "reason": "ok"}}'"#,
        d = dir.display()
    )
}

#[tokio::test]
async fn a_batchs_parallel_calls_are_reviewed_side_by_side_up_to_the_reviewers_bound() {
    let calls = json!([
        call("a", "fs.list", json!({"n": 1})),
        call("b", "fs.list", json!({"n": 2})),
        call("c", "fs.list", json!({"n": 3}))
    ]);
    // Each review finishes only when all three run at once.
    let dir = tempfile::tempdir().unwrap();
    let (reports, asked) = run(&gated(&barrier(dir.path(), 3), 20_000, json!([])), calls.clone()).await;
    assert!(asked.is_empty(), "{asked:?}");
    for report in &reports {
        assert_eq!(summary(report), (None, "reviewer:gate".into()));
    }
    // Bound to one at a time, no review ever runs beside another: each
    // counts the reviews running as it starts, and leaves before the next.
    let dir = tempfile::tempdir().unwrap();
    let counting = format!(
        r#"touch {d}/$$; ls {d} | wc -l >> {d}.counts; sleep 0.05; rm {d}/$$; echo '{{"decision": "allow", "reason": "ok"}}'"#,
        d = dir.path().display()
    );
    let one = policy(json!({
        "default": "review",
        "reviewers": {"gate": {"command": counting, "max_concurrent": 1}},
        "rules": [],
    }));
    let (reports, asked) = run(&one, calls).await;
    assert!(asked.is_empty(), "{asked:?}");
    for report in &reports {
        assert_eq!(summary(report), (None, "reviewer:gate".into()));
    }
    let counts = std::fs::read_to_string(format!("{}.counts", dir.path().display())).unwrap();
    let counts: Vec<usize> = counts.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(counts, [1, 1, 1]);
}

#[tokio::test]
async fn a_held_mcp_tool_stays_denied_and_an_unpinned_one_is_asked_whatever_the_reviewer_says() {
    let mut value: Value = serde_json::from_str(SCENARIO).unwrap();
    value["tools"] = json!([
        {"name": "held", "scope": "agent0", "metadata": {"mcp": {"server": "fs", "pinned": true, "held": true}}, "body": {"echo": true}},
        {"name": "fresh", "scope": "agent0", "metadata": {"mcp": {"server": "fs", "pinned": false, "held": false}}, "body": {"echo": true}}
    ]);
    value["batches"] =
        json!([{"scope": "agent0", "calls": [call("h", "held", json!({})), call("f", "fresh", json!({}))]}]);
    let doc = Document::parse("s.json".into(), value.to_string()).unwrap();
    let session = Session::new(
        Scenario::from_document(&doc).unwrap(),
        Some(&gated(ALLOW_ALL, 10_000, json!([]))),
    )
    .unwrap();
    let _human = session.install_scripted_answerer(tether_console::files::scenario::NamedAnswer::Reject);
    let reports = session.run_batch(0, None).await;
    assert_eq!(
        summary(&reports[0]),
        (Some("DENIED"), "rule:mcp-held-tools-are-denied".into())
    );
    assert_eq!(summary(&reports[1]), (Some("DENIED"), "script".into()));
    assert!(
        reports.iter().all(|r| review_of(r).is_none()),
        "the reviewer saw neither"
    );
}

#[tokio::test]
async fn a_reviewers_long_reason_is_cut_before_it_reaches_the_prompt_and_the_record() {
    let long = "x".repeat(2_000);
    let command = format!(r#"echo '{{"decision": "ask", "reason": "{long}"}}'"#);
    let (reports, asked) = run(
        &gated(&command, 10_000, json!([])),
        json!([call("c1", "fs.write", json!({}))]),
    )
    .await;
    let (_, reason) = review_of(&reports[0]).unwrap();
    assert_eq!(reason, format!("{}…", "x".repeat(500)));
    assert_eq!(asked[0].1.as_deref(), Some(format!("reviewer: {reason}").as_str()));
}

#[tokio::test]
async fn a_slow_review_of_one_agents_call_never_holds_up_another_agents_calls() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("b-done");
    // The review of agent0's call answers only once agent1's batch is over:
    // were agent1's call held behind it, neither would finish, and the
    // review would time out instead.
    let command = format!(
        r#"while [ ! -e {} ]; do sleep 0.02; done; echo '{{"decision": "allow", "reason": "ok"}}'"#,
        done.display()
    );
    let rules =
        json!([{"id": "writes", "stage": "pre-execute", "match": {"tool": "fs.write"}, "action": {"type": "allow"}}]);
    let mut value: Value = serde_json::from_str(SCENARIO).unwrap();
    value["scopes"] = json!([{"id": "agent0"}, {"id": "agent1"}]);
    value["tools"] = json!([
        {"name": "shell", "scope": "agent0", "body": {"return": {"ran": true}}},
        {"name": "fs.write", "scope": "agent1", "body": {"return": {"written": true}}}
    ]);
    value["batches"] = json!([
        {"scope": "agent0", "calls": [call("slow", "shell", json!({"cmd": "make"}))]},
        {"scope": "agent1", "calls": [call("quick", "fs.write", json!({}))]}
    ]);
    let doc = Document::parse("s.json".into(), value.to_string()).unwrap();
    let session = Session::new(
        Scenario::from_document(&doc).unwrap(),
        Some(&gated(&command, 20_000, rules)),
    )
    .unwrap();
    let _human = session.install_scripted_answerer(tether_console::files::scenario::NamedAnswer::Reject);
    let (slow, quick) = tokio::join!(session.run_batch(0, None), async {
        let reports = session.run_batch(1, None).await;
        std::fs::write(&done, "").unwrap();
        reports
    });
    assert_eq!(summary(&quick[0]), (None, "rule:writes".into()));
    assert_eq!(summary(&slow[0]), (None, "reviewer:gate".into()));
}
