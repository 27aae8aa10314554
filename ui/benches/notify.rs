//! What a slow notify command costs the human answering (docs/attach.md,
//! "Notifications"): the time to answer 1,000 approvals, each call asked
//! by the policy and answered by a console as soon as its prompt arrives,
//! with `--notify-cmd 'sleep 5'` against no notify command. The answerer,
//! the engine and the notify command are the console's own
//! (`ConsoleAnswerer`, `NotifyCommand`); only the human is the bench.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "support/noops.rs"]
mod noops;
use noops::noop_batch;

#[path = "support/paired.rs"]
mod paired;
use paired::Paired;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tether_console::files::policy::Policy;
use tether_console::files::source::Document;
use tether_console::session::approval::ConsoleAnswerer;
use tether_console::session::events::{AppEvent, AppEventSender, PromptReply};
use tether_console::session::notify::NotifyCommand;
use tether_console::session::replay::Session;

/// Approvals answered in one sample.
const APPROVALS: usize = 1_000;

/// Calls waiting for an answer at once (an agent's batch, a few at a time).
const PARALLEL: usize = 4;

/// The slow notify command.
const SLOW: &str = "sleep 5";

fn policy() -> Policy {
    let text = json!({"rules": [{"id": "ask-every-call", "stage": "pre-execute", "match": {"tool": "noop"},
                                 "action": {"type": "ask", "reason": "the bench asks"}}]})
    .to_string();
    Policy::from_document(&Document::parse("policy.json".into(), text).unwrap()).unwrap()
}

/// A session whose every call is asked, answered by a human who approves
/// each prompt as it arrives; `notify` is the notify command, if any.
struct Console {
    session: Session,
    _answerer: tether_tools::Registration,
}

fn console(rt: &tokio::runtime::Runtime, notify: Option<&str>) -> Console {
    let session = Session::new(noop_batch(APPROVALS, PARALLEL), Some(&policy())).unwrap();
    let (events, mut receiver) = AppEventSender::new();
    let answerer = session.registry.set_approval_answerer(ConsoleAnswerer {
        events: events.clone(),
        timeout: Duration::from_secs(120),
        always: Default::default(),
        log: session.log.clone(),
        registry: session.registry.clone(),
        notify: notify.map(|command| {
            NotifyCommand::new(
                command.to_owned(),
                "/bench/console.sock".to_owned(),
                Some(events.clone()),
            )
        }),
        waiting: Default::default(),
        escalation: Default::default(),
    });
    rt.spawn(async move {
        let by: Arc<str> = Arc::from("main");
        while let Some(batch) = receiver.recv_many().await {
            for event in batch {
                if let AppEvent::ApprovalRequested(prompt) = event {
                    let _ = prompt.reply.answer(PromptReply::Approve, &by);
                }
            }
        }
    });
    Console {
        session,
        _answerer: answerer,
    }
}

/// How many processes this one started are still running.
fn children() -> usize {
    std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .count()
        })
        .sum()
}

/// Answers every approval of the batch; the time until the last call is
/// done. Each sample starts once the notify commands of the one before
/// have ended (untimed), so no sample pays for another's processes.
fn answer_all(rt: &tokio::runtime::Runtime, console: &Console) -> Duration {
    while children() > 0 {
        std::thread::sleep(Duration::from_millis(100));
    }
    rt.block_on(async {
        let start = Instant::now();
        let reports = console.session.run_batch(0, None).await;
        let elapsed = start.elapsed();
        assert!(
            reports.iter().all(|r| r.outcome.code().is_none()),
            "every call approved and run"
        );
        elapsed
    })
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let quiet = console(&rt, None);
    let slow = console(&rt, Some(SLOW));
    // Samples alternate, and each slow one is compared with the quiet one
    // just before it (this VM's speed drifts within a run).
    let pairs: usize = std::env::var("TETHER_PAIRS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(9);
    answer_all(&rt, &quiet);
    // First the slow side, so the ratio reads slow ÷ quiet; the quiet one runs first.
    let paired = Paired::run(pairs, || {
        let q = answer_all(&rt, &quiet);
        (answer_all(&rt, &slow), q)
    });
    let (s, q) = (paired.first, paired.second);
    let (low, high) = paired.quartiles();
    println!(
        "SUMMARY notify: answering {APPROVALS} approvals ({PARALLEL} waiting at a time): no notify command median {q:.3?}, `{SLOW}` {s:.3?}; paired median {:.2}x, quartiles {:.2}x-{:.2}x (goal: at most 1.05x)",
        paired.ratio(),
        low,
        high,
    );
    println!(
        "SUMMARY notify: a 5 s notify command = {:.2}x the time to answer 1,000 approvals",
        paired.ratio()
    );
}
