//! Pipeline overhead: a no-op tool through a sealed view with two listeners
//! per stage and two guards, against calling the body directly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tether_tools::{
    BoxError, ExecuteNext, ExecutedResult, ListenerOrder, PostExecuteNext, PreExecuteNext, Tool, ToolBody, ToolCall,
    ToolContext, ToolDispatch, ToolExecution, ToolExecutionOutcome, ToolRegistrationOptions, ToolRegistry,
};
use tokio_util::sync::CancellationToken;

fn noop() -> impl ToolBody + Clone {
    |_args: Value, _ctx: ToolContext| async { Ok::<Value, BoxError>(Value::Null) }
}

fn loaded_registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    let tool = Tool::new("noop", "does nothing", json!({"type": "object"}), noop());
    registry
        .register(tool, None, ToolRegistrationOptions::default())
        .unwrap()
        .keep();
    for _ in 0..2 {
        registry
            .register_pre_execute(
                None,
                ListenerOrder::Append,
                |_e: ToolExecution, next: PreExecuteNext| next.run(),
            )
            .keep();
        registry
            .register_guard(None, ListenerOrder::Append, |_e: ToolExecution| async { Ok(None) })
            .keep();
        registry
            .register_execute(
                None,
                ListenerOrder::Append,
                |_e: ToolExecution, d: ToolDispatch, n: ExecuteNext| n.run(d),
            )
            .keep();
        registry
            .register_post_execute(
                None,
                ListenerOrder::Append,
                |_e: ToolExecution, _r: ExecutedResult, n: PostExecuteNext| n.run(),
            )
            .keep();
        registry
            .register_result(
                None,
                ListenerOrder::Append,
                |_e: ToolExecution, _o: Arc<ToolExecutionOutcome>| async { Ok(()) },
            )
            .keep();
    }
    registry
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let registry = loaded_registry();
    let view = registry.seal(None);
    let cancel = CancellationToken::new();
    let call = ToolCall::new("c1", "noop", "{}");
    let body = noop();
    // The baseline needs a context; borrow one from a real execution.
    let context = rt.block_on(async {
        let (tx, rx) = std::sync::mpsc::channel();
        let probe = ToolRegistry::new();
        probe
            .register(
                Tool::new(
                    "probe",
                    "",
                    json!({"type": "object"}),
                    move |_a: Value, ctx: ToolContext| {
                        let tx = tx.clone();
                        async move {
                            tx.send(ctx).unwrap();
                            Ok::<Value, BoxError>(Value::Null)
                        }
                    },
                ),
                None,
                Default::default(),
            )
            .unwrap()
            .keep();
        probe
            .execute(ToolCall::new("p", "probe", "{}"), &probe.seal(None), &cancel)
            .await;
        rx.recv().unwrap()
    });

    let mut group = c.benchmark_group("pipeline_overhead");
    group.bench_function("body_direct", |b| {
        b.to_async(&rt)
            .iter(|| body.invoke(black_box(json!({})), context.clone()));
    });
    group.bench_function("pipeline_2_listeners_per_stage_2_guards", |b| {
        b.to_async(&rt)
            .iter(|| registry.execute(black_box(call.clone()), &view, &cancel));
    });
    group.finish();

    // Same-run medians for the summary line: 31 samples of 20,000 calls each.
    let direct = support::median(31, || {
        rt.block_on(async {
            let start = std::time::Instant::now();
            for _ in 0..20_000 {
                black_box(body.invoke(json!({}), context.clone()).await.unwrap());
            }
            start.elapsed() / 20_000
        })
    });
    let piped = support::median(31, || {
        rt.block_on(async {
            let start = std::time::Instant::now();
            for _ in 0..20_000 {
                black_box(registry.execute(call.clone(), &view, &cancel).await);
            }
            start.elapsed() / 20_000
        })
    });
    support::report(
        "pipeline per call",
        piped,
        "body direct",
        direct,
        "at most 1.5 µs added",
    );
    println!("SUMMARY pipeline added per call: {:.3?}", piped.saturating_sub(direct));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
