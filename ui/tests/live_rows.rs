//! The batch sink is how the screen learns where each call is: declared,
//! running (its body started), done. Driven by the real engine, read back
//! from the console's own model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tether_console::session::events::{AppEventReceiver, AppEventSender, Stage};
use tether_console::session::observer::UiSink;
use tether_console::tui::app::{App, AppEvent, HeaderInfo, ScopeEntry};
use tether_tools::{BoxError, Tool, ToolCall, ToolContext, ToolExecutionMode, ToolRegistrationOptions, ToolRegistry};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

fn stages(app: &mut App, receiver: &mut AppEventReceiver) -> Vec<Stage> {
    for event in receiver.try_recv_many() {
        app.update(event);
    }
    app.batches.get(0).unwrap().calls.iter().map(|row| row.stage).collect()
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
        max_parallelism: 1,
    });
    assert_eq!(stages(&mut app, &mut receiver), [Stage::Queued, Stage::Queued]);

    let sink = UiSink::new(0, events.clone(), None);
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
    let row = &app.batches.get(0).unwrap().calls[0];
    assert!(
        row.started.is_some() && row.ended >= row.started,
        "a's time is measured from its body's start"
    );
}
