//! The batch sink is how the screen learns where each call is: declared,
//! running (its body started), done, and what decided it. Driven by the
//! real engine, read back from the console's own model and its frames.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_console::session::events::{AppEventReceiver, AppEventSender, CallList, Stage};
use tether_console::session::observer::UiSink;
use tether_console::session::progress::BatchProgress;
use tether_console::session::provenance::TrailEntry;
use tether_console::tui::app::{App, AppEvent, HeaderInfo, ScopeEntry};
use tether_console::tui::console::ReplayConsole;
use tether_tools::{
    BoxError, Tool, ToolCall, ToolContext, ToolExecutionMode, ToolExecutionOutcome, ToolFailureCode,
    ToolRegistrationOptions, ToolRegistry,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

fn stages(app: &mut App, receiver: &mut AppEventReceiver) -> Vec<Stage> {
    for event in receiver.try_recv_many() {
        app.update(event);
    }
    let batch = app.batches.get(0).unwrap();
    (0..batch.len()).map(|i| batch.stage(i).unwrap()).collect()
}

#[tokio::test]
async fn rows_show_declared_running_and_done_as_the_batch_sink_reports_them() {
    let registry = ToolRegistry::new();
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (s, r) = (Arc::clone(&started), Arc::clone(&release));
    let tool = Tool::new(
        "slow",
        "waits",
        json!({"type": "object"}),
        move |_: Value, _: ToolContext| {
            let (s, r) = (Arc::clone(&s), Arc::clone(&r));
            async move {
                s.notify_one();
                r.notified().await;
                Ok::<_, BoxError>(json!("done"))
            }
        },
    );
    let options = ToolRegistrationOptions::default().with_concurrency(|_| true);
    registry.register(tool, None, options).unwrap().keep();

    let (events, mut receiver) = AppEventSender::new();
    let mut app = App::new(
        registry.clone(),
        vec![ScopeEntry::global()],
        HeaderInfo::default(),
        Instant::now(),
    );
    let calls = vec![ToolCall::new("a", "slow", "{}"), ToolCall::new("b", "slow", "{}")];
    let progress = Arc::new(BatchProgress::new(2, Instant::now()));
    app.update(AppEvent::BatchStarted {
        batch: 0,
        label: "two slow calls".into(),
        scope: None,
        scope_label: "global".into(),
        calls: calls
            .iter()
            .map(|c| (c.clone(), ToolExecutionMode::Parallel))
            .collect::<Vec<_>>()
            .into(),
        progress: Some(Arc::clone(&progress)),
        max_parallelism: 1,
    });
    assert_eq!(stages(&mut app, &mut receiver), [Stage::Queued, Stage::Queued]);

    let sink = UiSink::new(0, progress, events.clone(), None);
    let engine = registry.clone();
    let batch = tokio::spawn(async move {
        let view = engine.seal(None);
        engine
            .execute_batch(calls, &view, NonZeroUsize::MIN, Some(&sink), &CancellationToken::new())
            .await
    });

    // One body at a time: a runs, b is declared and waits for its slot.
    started.notified().await;
    assert_eq!(stages(&mut app, &mut receiver), [Stage::Running, Stage::Declared]);
    release.notify_one();
    started.notified().await;
    assert_eq!(stages(&mut app, &mut receiver), [Stage::Done, Stage::Running]);
    release.notify_one();
    let outcome = batch.await.unwrap();
    assert!(outcome.outcomes.iter().all(|o| !o.is_error()));
    assert_eq!(stages(&mut app, &mut receiver), [Stage::Done, Stage::Done]);
    let row = app.batches.get(0).unwrap().row(0).unwrap();
    assert!(
        row.started.is_some() && row.ended >= row.started,
        "a's time is measured from its body's start"
    );
}

fn screen(app: &App) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    terminal
        .draw(|frame| tether_console::tui::view::draw(app, frame))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

#[test]
fn a_frame_builds_only_the_rows_it_shows_and_a_batch_nobody_draws_none() {
    let built = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&built);
    let mut app = App::new(
        ToolRegistry::new(),
        vec![ScopeEntry::global()],
        HeaderInfo::default(),
        Instant::now(),
    );
    let at = Instant::now();
    app.update(AppEvent::BatchStarted {
        batch: 0,
        label: "flood".into(),
        scope: None,
        scope_label: "global".into(),
        calls: CallList::Later {
            len: 1_000,
            bytes: 0,
            call_at: std::sync::Arc::new(move |i| {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                // Every tenth call is exclusive: barriers between groups.
                let mode = if i % 10 == 9 {
                    ToolExecutionMode::Exclusive
                } else {
                    ToolExecutionMode::Parallel
                };
                (ToolCall::new(format!("call_{i}"), "t", "{}"), mode)
            }),
        },
        progress: None,
        max_parallelism: 4,
    });
    app.update(AppEvent::Declared { batch: 0, upto: 1_000 });
    for index in 0..1_000 {
        app.update(AppEvent::Started { batch: 0, index, at });
        let result = if index % 100 == 1 {
            Err((ToolFailureCode::ToolError, "boom".to_owned()))
        } else {
            Ok(json!(index))
        };
        app.update(AppEvent::Outcome {
            batch: 0,
            index,
            outcome: ToolExecutionOutcome::from_parts(format!("call_{index}"), "t", result),
            at,
        });
    }
    app.update(AppEvent::BatchFinished { batch: 0 });
    let built_now = || built.load(std::sync::atomic::Ordering::SeqCst);
    let batch = app.batches.get(0).unwrap();
    assert_eq!(built_now(), 0, "nothing asked for the calls yet");
    assert_eq!(
        (batch.done(), batch.summary(0).calls, batch.summary(0).failed),
        (1_000, 1_000, 10)
    );

    // The first frame shows the top of the batch and builds its first rows.
    let shown = screen(&app);
    assert!(shown.contains("call_1 ") && shown.contains("TOOL_ERROR"), "{shown}");
    assert!(shown.contains("1000/1000 done"), "{shown}");
    assert!(built_now() < 100, "built {} rows for one screen", built_now());
    assert_eq!(app.batches.get(0).unwrap().rows_built(), built_now());

    // Far down: the rows before it are built for their display lines, the
    // ones after it are not.
    app.selected_call = 900;
    let shown = screen(&app);
    assert!(shown.contains("call_900"), "{shown}");
    assert!(shown.contains("barrier"), "{shown}");
    assert!(built_now() < 1_000, "built {} rows", built_now());
    let batch = app.batches.get(0).unwrap();
    assert_eq!(batch.row_at(batch.line_of(900)), Some(900));
    // Rows 0-8 are one group; exclusive row 9 is a group of its own, with a
    // barrier line before it and after it.
    assert_eq!((batch.line_of(8), batch.line_of(9), batch.line_of(10)), (8, 10, 12));
    assert_eq!((batch.row_at(9), batch.row_at(11)), (None, None));
}

/// Applies events until one matches `last` (and that one too).
async fn pump_until(app: &mut App, receiver: &mut AppEventReceiver, last: impl Fn(&AppEvent) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = tokio::time::timeout_at(deadline.into(), receiver.recv_many())
            .await
            .expect("the event came in time")
            .expect("the console is still sending");
        let mut seen = false;
        for event in events {
            seen |= last(&event);
            app.update(event);
        }
        if seen {
            return;
        }
    }
}

#[tokio::test]
async fn the_replay_hands_the_screen_each_calls_trail_and_a_call_in_flight_shows_the_log() {
    let loaded = tether_console::files::inputs::default_demo().unwrap();
    let (events, mut receiver) = AppEventSender::new();
    // A short approval timeout: batch 2's save_note waits for a human who
    // never answers.
    let (mut console, mut app) =
        ReplayConsole::new(loaded, None, None, Duration::from_millis(1_500), events, None).unwrap();
    let log = console.session.log.clone();

    // Batch 1: three reads, allowed by a rule.
    console.run_next(&mut app, false);
    pump_until(&mut app, &mut receiver, |e| {
        matches!(e, AppEvent::BatchFinished { batch: 0 })
    })
    .await;
    let done = screen(&app);
    assert!(done.contains("pre-execute rule reads-are-fine: allow"), "{done}");
    assert!(done.contains("body ran"), "{done}");
    assert!(done.contains("decided by rule:reads-are-fine"), "{done}");
    assert!(
        log.is_empty(),
        "the front door took every trail; the screen keeps its own"
    );

    // Batch 2: call_4 is asked about; while it waits its trail is the log's.
    console.run_next(&mut app, false);
    pump_until(&mut app, &mut receiver, |e| matches!(e, AppEvent::ApprovalRequested(_))).await;
    let batch = app.current_batch().unwrap();
    let row = batch.row(0).unwrap();
    assert_eq!(row.call.call_id, "call_4");
    assert!(row.outcome.is_none() && batch.trail(row.index).is_none());
    let waiting = app.trail_of(batch, &row).into_owned();
    assert_eq!(
        waiting.first(),
        Some(&TrailEntry::PreRule {
            id: "ask-before-writing".into(),
            action: "ask",
        }),
        "{waiting:?}"
    );
    pump_until(&mut app, &mut receiver, |e| {
        matches!(e, AppEvent::BatchFinished { batch: 1 })
    })
    .await;
    let batch = app.current_batch().unwrap();
    let row = batch.row(0).unwrap();
    assert!(
        batch
            .trail(row.index)
            .is_some_and(|t| t.iter().any(|e| matches!(e, TrailEntry::ApprovalTimedOut { .. })))
    );
    assert_eq!(app.decided_by(batch, &row).as_deref(), Some("timeout"));
    console.shutdown().await;
}

/// Under a flood the screens of one process together take at most a
/// fortieth of a core: each attached console spaces its frames by how many
/// draw, within the fastest and slowest frame.
#[test]
fn screens_share_one_frame_budget() {
    use tether_console::tui::console::{FRAME, SLOWEST_FRAME, frame_interval};
    let ms = Duration::from_millis;
    assert_eq!(frame_interval(ms(1), 1), ms(40));
    assert_eq!(frame_interval(ms(1), 3), ms(120), "three screens, a third each");
    assert_eq!(frame_interval(ms(1), 0), ms(40), "a console counts itself");
    assert_eq!(frame_interval(Duration::ZERO, 3), FRAME);
    assert_eq!(frame_interval(ms(5), 3), SLOWEST_FRAME);
}
