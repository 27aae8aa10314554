//! Scale: 1,000 scopes 8 deep; `declarations` and `seal` from a leaf that
//! sees 100 tools, with 1,000, 10,000 and 100,000 tools in the registry.
//! The goal is under 50 µs each and no growth with the registry's size.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tether_tools::{AgentPipelineScope, BoxError, Tool, ToolContext, ToolRegistry};

const SCOPES: usize = 1_000;
const DEPTH: usize = 8;
const VISIBLE_PER_LEVEL: usize = 10;
const VISIBLE_GLOBAL: usize = 20;

fn tool(name: String) -> Tool {
    Tool::new(
        name,
        "a tool",
        json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        |_a: Value, _c: ToolContext| async { Ok::<Value, BoxError>(Value::Null) },
    )
}

/// 125 chains of 8 scopes; the leaf of chain 0 sees 8 × 10 + 20 = 100 tools.
/// The rest of `total` is spread over the other 992 scopes.
fn build(total: usize) -> (ToolRegistry, AgentPipelineScope) {
    let registry = ToolRegistry::new();
    let mut chains = Vec::new();
    for _ in 0..SCOPES / DEPTH {
        let mut chain = vec![AgentPipelineScope::root()];
        for _ in 1..DEPTH {
            let child = chain.last().unwrap().child();
            chain.push(child);
        }
        chains.push(chain);
    }
    let mut count = 0;
    for (level, scope) in chains[0].iter().enumerate() {
        for i in 0..VISIBLE_PER_LEVEL {
            registry
                .register(tool(format!("l{level}_t{i}")), Some(scope), Default::default())
                .unwrap()
                .keep();
            count += 1;
        }
    }
    for i in 0..VISIBLE_GLOBAL {
        registry
            .register(tool(format!("global_{i}")), None, Default::default())
            .unwrap()
            .keep();
        count += 1;
    }
    let others: Vec<&AgentPipelineScope> = chains[1..].iter().flatten().collect();
    let mut i = 0;
    while count < total {
        registry
            .register(
                tool(format!("other_{i}")),
                Some(others[i % others.len()]),
                Default::default(),
            )
            .unwrap()
            .keep();
        i += 1;
        count += 1;
    }
    let leaf = chains[0].last().unwrap().clone();
    assert_eq!(registry.declarations(Some(&leaf)).len(), 100);
    (registry, leaf)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    let mut medians = Vec::new();
    for total in [1_000, 10_000, 100_000] {
        let (registry, leaf) = build(total);
        group.bench_with_input(BenchmarkId::new("seal", total), &total, |b, _| {
            b.iter(|| black_box(registry.seal(Some(&leaf))));
        });
        group.bench_with_input(BenchmarkId::new("declarations", total), &total, |b, _| {
            b.iter(|| black_box(registry.declarations(Some(&leaf))));
        });
        let seal = support::median(31, || {
            support::per_call(2_000, || drop(black_box(registry.seal(Some(&leaf)))))
        });
        let decl = support::median(31, || {
            support::per_call(2_000, || drop(black_box(registry.declarations(Some(&leaf)))))
        });
        medians.push((total, seal, decl));
    }
    group.finish();
    let (_, base_seal, base_decl) = medians[0];
    for (total, seal, decl) in &medians {
        support::report(
            &format!("seal at {total} tools"),
            *seal,
            "seal at 1000 tools",
            base_seal,
            "under 50 µs, flat",
        );
        support::report(
            &format!("declarations at {total} tools"),
            *decl,
            "declarations at 1000 tools",
            base_decl,
            "under 50 µs, flat",
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
