//! The console's costs: drawing a frame of a 10,000-call batch at 200×60,
//! and engine throughput with the console attached against headless.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "support/attached.rs"]
mod attached;
#[path = "support/noops.rs"]
mod noops;
use noops::noop_batch;

#[path = "support/paired.rs"]
mod paired;
use paired::Paired;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tether_console::session::observer;
use tether_console::session::replay::Session;
use tether_console::tui::app::{App, AppEvent, AppEventSender, HeaderInfo, ScopeEntry};
use tether_console::tui::{console, view};
use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome, ToolRegistry};

/// Batches run back to back in one throughput sample.
const BLOCK: usize = 5;

/// The note that ends an attached block (see `run_block`).
const FLUSH_MARKER: &str = "bench: end of block";

fn median(samples: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..samples).map(|_| f()).collect();
    times.sort();
    times[times.len() / 2]
}

fn big_app(calls: usize) -> App {
    let start = Instant::now();
    let mut app = App::new(
        ToolRegistry::new(),
        vec![ScopeEntry::global()],
        HeaderInfo::default(),
        start,
    );
    let batch: Vec<_> = (0..calls)
        .map(|i| {
            let mode = if i % 8 == 7 {
                ToolExecutionMode::Exclusive
            } else {
                ToolExecutionMode::Parallel
            };
            (
                ToolCall::new(format!("call_{i}"), "read_file", r#"{"path":"src/lib.rs"}"#),
                mode,
            )
        })
        .collect();
    app.update(AppEvent::BatchStarted {
        batch: 0,
        label: "big".into(),
        scope: None,
        scope_label: "global".into(),
        calls: batch.into(),
        progress: None,
        max_parallelism: 16,
    });
    for i in 0..calls / 2 {
        let outcome = ToolExecutionOutcome::from_parts(format!("call_{i}"), "read_file", Ok(json!("contents")));
        app.update(AppEvent::Outcome {
            batch: 0,
            index: i,
            outcome,
            at: start,
        });
    }
    app.selected_call = calls / 2;
    app
}

fn frame_time(app: &App, terminal: &mut Terminal<TestBackend>) -> Duration {
    let start = Instant::now();
    terminal.draw(|frame| view::draw(app, frame)).unwrap();
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    // Frame rendering.
    let big = big_app(10_000);
    let empty = big_app(0);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    c.bench_function("frame_200x60_10000_calls", |b| {
        b.iter(|| {
            terminal.draw(|f| view::draw(black_box(&big), f)).unwrap();
        })
    });
    let frame = median(101, || frame_time(&big, &mut terminal));
    let frame_empty = median(101, || frame_time(&empty, &mut terminal));
    println!(
        "SUMMARY frame 200x60 with a 10,000-call batch: median {frame:.3?} vs an empty console {frame_empty:.3?} = {:.2}x (goal: under 5 ms)",
        frame.as_secs_f64() / frame_empty.as_secs_f64()
    );

    // Throughput: the same 2,000-call batch headless and with the console attached.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let headless = Session::new(noop_batch(2_000, 16), None).unwrap();
    // Attached as the console attaches it: the change listener is
    // registered, and the batch's trails reach the screen once it is over.
    let (events, mut receiver) = AppEventSender::new();
    let attached = std::sync::Arc::new(Session::new(noop_batch(2_000, 16), None).unwrap());
    let _handles = observer::attach(&attached.registry, &events);
    let registry = attached.registry.clone();
    let decisions = attached.log.clone();
    // The console's own work (applying events, drawing), in nanoseconds.
    let busy = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let busy_in_consumer = std::sync::Arc::clone(&busy);
    // Of which drawing, and how many frames.
    let drawing = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let drawing_in_consumer = std::sync::Arc::clone(&drawing);
    let frames = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let frames_in_consumer = std::sync::Arc::clone(&frames);
    // The console's side: apply every event and draw at most every 16 ms.
    // Diagnosis: TETHER_CONSUMER=drain only drops the events (what is left
    // is the engine's side of the cost; since the progress slots, dropping a
    // BatchStarted leaves the engine's sink the last owner of the batch's
    // outcomes, so it frees them too, which the screen would), =update
    // applies them undrawn.
    let mode = std::env::var("TETHER_CONSUMER").unwrap_or_default();
    // A block of attached batches ends when the console has applied every
    // event of it: the bench sends a marker note and wakes the console from
    // its frame pause; the console says when it has applied the marker.
    let flush = std::sync::Arc::new(tokio::sync::Notify::new());
    let flushed = std::sync::Arc::new(tokio::sync::Notify::new());
    let (flush_in_consumer, flushed_in_consumer) = (std::sync::Arc::clone(&flush), std::sync::Arc::clone(&flushed));
    let consumer = rt.spawn(async move {
        let mut app = App::new(
            registry,
            vec![ScopeEntry::global()],
            HeaderInfo::default(),
            Instant::now(),
        );
        app.decisions = Some(decisions);
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        // As the console does: drain, apply, draw, then wait for the next
        // frame before draining again, so a flood costs one wake-up a frame,
        // and the frames are spaced so the screen's work stays under a
        // fortieth of a core (`console::frame_interval`).
        while let Some(events) = receiver.recv_many().await {
            let start = Instant::now();
            let marker = events
                .iter()
                .any(|e| matches!(e, AppEvent::Note(text) if text == FLUSH_MARKER));
            if mode == "drain" {
                drop(events);
            } else {
                for event in events {
                    app.update(event);
                }
            }
            let drawn = Instant::now();
            if marker {
                // Applied: the block is over. The frame is left to the next
                // drain, as it would be in a flood.
                flushed_in_consumer.notify_one();
            } else if mode.is_empty() {
                terminal.draw(|f| view::draw(&app, f)).unwrap();
            }
            drawing_in_consumer.fetch_add(drawn.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
            frames_in_consumer.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let work = start.elapsed();
            busy_in_consumer.fetch_add(work.as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
            tokio::select! {
                () = tokio::time::sleep_until((Instant::now() + console::frame_interval(work, 1)).into()) => {}
                () = flush_in_consumer.notified() => {}
            }
        }
    });
    let run_headless = || {
        rt.block_on(async {
            let start = Instant::now();
            black_box(headless.run_batch(0, None).await);
            start.elapsed()
        })
    };
    let mut batch_number = 0;
    let mut run_attached = || {
        batch_number += 1;
        rt.block_on(async {
            let start = Instant::now();
            attached::run_attached(&attached, batch_number, 2_000, &events).await;
            start.elapsed()
        })
    };
    // Blocks of batches back to back, as a busy agent sends them, so the
    // console's work on a batch overlaps the next batch as it would in a
    // flood; an attached block ends once the console has applied all of it.
    let mut run_block = |attached: bool| {
        let start = Instant::now();
        for _ in 0..BLOCK {
            if attached {
                run_attached();
            } else {
                run_headless();
            }
        }
        if attached {
            events.send(AppEvent::Note(FLUSH_MARKER.to_owned()));
            rt.block_on(async {
                let applied = flushed.notified();
                flush.notify_one();
                applied.await;
            });
        }
        start.elapsed()
    };
    // Diagnosis under `valgrind --tool=callgrind`: TETHER_ONLY=headless or
    // =attached runs 20 batches of that one kind and stops, so the engine's
    // instructions per call with and without the console are two totals.
    if let Ok(only) = std::env::var("TETHER_ONLY") {
        for _ in 0..20 / BLOCK {
            run_block(only != "headless");
        }
        println!("SUMMARY ran 20 batches of 2,000 calls, {only} only");
        return;
    }
    // TETHER_SUMMARY_ONLY=1 skips criterion's own sampling and analysis
    // (minutes under valgrind) and keeps the alternating samples below.
    if std::env::var_os("TETHER_SUMMARY_ONLY").is_none() {
        let mut group = c.benchmark_group("throughput_5x2000_calls");
        group.sample_size(10);
        group.bench_function("headless", |b| b.iter(|| run_block(false)));
        group.finish();
    }
    // Blocks alternate, so drift on a noisy machine hits both alike, and
    // each attached block is compared with the headless block just before
    // it: the median of those paired ratios is the figure, as this VM's
    // speed moves by 2x between seconds (the medians of each side are
    // printed too).
    const PAIRS: usize = 21;
    busy.store(0, std::sync::atomic::Ordering::Relaxed);
    drawing.store(0, std::sync::atomic::Ordering::Relaxed);
    frames.store(0, std::sync::atomic::Ordering::Relaxed);
    let paired = Paired::run(PAIRS, || (run_block(false), run_block(true)));
    let (plain, with_ui) = (paired.first, paired.second);
    let (low, high) = paired.quartiles();
    let calls = (2_000 * BLOCK) as f64;
    println!(
        "SUMMARY throughput, blocks of {BLOCK} batches of 2,000 calls: headless median {plain:.3?} ({:.0} calls/s), console attached {with_ui:.3?} ({:.0} calls/s, every event applied) = {:.2}x of headless; paired: median {:.2}x, quartiles {:.2}x-{:.2}x (goal: at least 0.95x)",
        calls / plain.as_secs_f64(),
        calls / with_ui.as_secs_f64(),
        plain.as_secs_f64() / with_ui.as_secs_f64(),
        paired.ratio(),
        low,
        high,
    );
    let busy_per_batch = Duration::from_nanos(busy.load(std::sync::atomic::Ordering::Relaxed) / (PAIRS * BLOCK) as u64);
    println!(
        "SUMMARY the console's own work per 2,000-call batch (applying events and drawing): {busy_per_batch:.3?} = {:.0} ns a call",
        busy_per_batch.as_nanos() as f64 / 2_000.0
    );
    let drawing_per_batch =
        Duration::from_nanos(drawing.load(std::sync::atomic::Ordering::Relaxed) / (PAIRS * BLOCK) as u64);
    println!(
        "SUMMARY of which drawing: {drawing_per_batch:.3?} a batch, {:.1} frames a batch",
        frames.load(std::sync::atomic::Ordering::Relaxed) as f64 / (PAIRS * BLOCK) as f64
    );
    drop(events);
    drop(_handles);
    drop(attached);
    rt.block_on(async {
        let _ = tokio::time::timeout(Duration::from_secs(5), consumer).await;
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
