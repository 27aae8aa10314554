//! Scheduling: 256 parallel calls each sleeping 10 ms with `max_parallelism`
//! 16, against the ideal 160 ms; and with every 8th call exclusive, against
//! the ideal of that plan.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tether_tools::{BoxError, Tool, ToolCall, ToolContext, ToolRegistrationOptions, ToolRegistry};
use tokio_util::sync::CancellationToken;

const CALLS: usize = 256;
const SLEEP: Duration = Duration::from_millis(10);
const CAP: usize = 16;

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    let tool = Tool::new(
        "sleep",
        "sleeps 10 ms",
        json!({"type": "object"}),
        |_a: Value, _c: ToolContext| async {
            tokio::time::sleep(SLEEP).await;
            Ok::<Value, BoxError>(Value::Null)
        },
    );
    let options = ToolRegistrationOptions::default().with_concurrency(|a| a.get("par") == Some(&json!(true)));
    registry.register(tool, None, options).unwrap().keep();
    registry
}

fn calls(every_nth_exclusive: Option<usize>) -> Vec<ToolCall> {
    (0..CALLS)
        .map(|i| {
            let parallel = every_nth_exclusive.is_none_or(|n| (i + 1) % n != 0);
            ToolCall::new(format!("c{i}"), "sleep", json!({ "par": parallel }).to_string())
        })
        .collect()
}

/// The makespan of a perfect scheduler: each run of parallel calls takes
/// ceil(run / CAP) sleeps, each exclusive call one.
fn ideal(every_nth_exclusive: Option<usize>) -> Duration {
    let Some(n) = every_nth_exclusive else {
        return SLEEP * CALLS.div_ceil(CAP) as u32;
    };
    let groups = CALLS / n;
    SLEEP * (groups * ((n - 1).div_ceil(CAP) + 1)) as u32
}

fn makespan(rt: &tokio::runtime::Runtime, registry: &ToolRegistry, batch: &[ToolCall]) -> Duration {
    let view = registry.seal(None);
    let cancel = CancellationToken::new();
    rt.block_on(async {
        let start = Instant::now();
        let out = registry
            .execute_batch(batch.to_vec(), &view, NonZeroUsize::new(CAP).unwrap(), None, &cancel)
            .await;
        assert!(out.outcomes.iter().all(|o| !o.is_error()));
        start.elapsed()
    })
}

/// The same plan run by hand with plain tokio: each group of consecutive
/// parallel calls as tasks behind a semaphore of `CAP`, each exclusive call
/// alone. It pays the same timer granularity as the engine, so the ratio to it
/// is what the engine's scheduling itself costs.
fn raw_tokio(rt: &tokio::runtime::Runtime, batch: &[ToolCall]) -> Duration {
    let parallel: Vec<bool> = batch.iter().map(|c| c.arguments.contains("true")).collect();
    rt.block_on(async {
        let start = Instant::now();
        let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(CAP));
        let mut i = 0;
        while i < parallel.len() {
            if !parallel[i] {
                tokio::time::sleep(SLEEP).await;
                i += 1;
                continue;
            }
            let end = parallel[i..].iter().position(|p| !p).map_or(parallel.len(), |p| i + p);
            let tasks: Vec<_> = (i..end)
                .map(|_| {
                    let gate = std::sync::Arc::clone(&gate);
                    tokio::spawn(async move {
                        let _permit = gate.acquire().await.unwrap();
                        tokio::time::sleep(SLEEP).await;
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
            i = end;
        }
        start.elapsed()
    })
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = registry();
    let mut group = c.benchmark_group("scheduling");
    group.sample_size(10);
    for (label, plan) in [("all_parallel", None), ("every_8th_exclusive", Some(8))] {
        let batch = calls(plan);
        group.bench_function(label, |b| b.iter(|| makespan(&rt, &registry, &batch)));
        let measured = support::median(15, || makespan(&rt, &registry, &batch));
        let baseline = support::median(15, || raw_tokio(&rt, &batch));
        support::report(
            &format!("makespan {label}"),
            measured,
            "ideal",
            ideal(plan),
            "at most 1.05x",
        );
        support::report(
            &format!("makespan {label}"),
            measured,
            "hand-written tokio plan",
            baseline,
            "about 1.0x",
        );
        support::report(
            &format!("hand-written tokio plan {label}"),
            baseline,
            "ideal",
            ideal(plan),
            "none; the floor",
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
