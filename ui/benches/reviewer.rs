//! The time a command reviewer adds to a call: one call through the whole
//! pipeline (policy, reviewer, body), the reviewer a shell command that
//! answers at once (`sh -c` started, the call written to it, its answer
//! read and checked), against the same call decided by an allow rule, the
//! two interleaved in the same run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_console::files::policy::Policy;
use tether_console::files::scenario::{NamedAnswer, Scenario};
use tether_console::files::source::Document;
use tether_console::session::replay::Session;

fn session(rules: Value) -> Session {
    let scenario = json!({
        "scopes": [{"id": "agent0"}],
        "tools": [{"name": "shell", "scope": "agent0", "body": {"return": {"ran": true}}}],
        "batches": [{"scope": "agent0", "calls": [{"id": "c1", "name": "shell", "arguments": {"cmd": "cargo test"}}]}]
    });
    let policy = json!({
        "reviewers": {"gate": {"command": "echo '{\"decision\": \"allow\", \"reason\": \"ok\"}'"}},
        "rules": rules,
    });
    let scenario = Scenario::from_document(&Document::parse("s.json".into(), scenario.to_string()).unwrap()).unwrap();
    let policy = Policy::from_document(&Document::parse("p.json".into(), policy.to_string()).unwrap()).unwrap();
    Session::new(scenario, Some(&policy)).unwrap()
}

async fn once(session: &Session, decider: &str) -> Duration {
    let started = Instant::now();
    let reports = session.run_batch(0, None).await;
    let took = started.elapsed();
    assert_eq!(reports[0].decided_by, decider);
    took
}

fn p50(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ruled = session(json!([{"id": "shell", "stage": "pre-execute", "match": {"tool": "shell"}, "action": {"type": "allow"}}]));
        let reviewed = session(json!([{"id": "shell", "stage": "pre-execute", "match": {"tool": "shell"}, "action": {"type": "review", "reviewer": "gate"}}]));
        let _a = ruled.install_scripted_answerer(NamedAnswer::Reject);
        let _b = reviewed.install_scripted_answerer(NamedAnswer::Reject);
        for _ in 0..20 {
            once(&ruled, "rule:shell").await;
            once(&reviewed, "reviewer:gate").await;
        }
        let rounds = 300;
        let (mut by_rule, mut by_reviewer) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            by_rule.push(once(&ruled, "rule:shell").await);
            by_reviewer.push(once(&reviewed, "reviewer:gate").await);
        }
        let (rule, reviewer) = (p50(by_rule), p50(by_reviewer));
        println!(
            "SUMMARY reviewer: a call a command reviewer allows at once p50 {:.2} ms ({:.2} ms added) against the same call allowed by a rule, p50 {:.1} µs ({:.0}x), {rounds} calls each, interleaved",
            reviewer.as_secs_f64() * 1e3,
            (reviewer.saturating_sub(rule)).as_secs_f64() * 1e3,
            rule.as_secs_f64() * 1e6,
            reviewer.as_secs_f64() / rule.as_secs_f64()
        );
    });
}
