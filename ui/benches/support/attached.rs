//! A batch run as the console runs one with a screen attached: announced
//! on the event channel, its progress through the console's sink, its
//! trails and its end sent after it.

use std::sync::Arc;
use std::time::Instant;

use tether_console::session::events::{AppEvent, AppEventSender};
use tether_console::session::observer::UiSink;
use tether_console::session::progress::BatchProgress;
use tether_console::session::replay::Session;

/// Runs `session`'s first batch (`calls` calls, 16 at most at once) as
/// batch number `batch`, telling `events` what the console is told.
pub async fn run_attached(session: &Arc<Session>, batch: usize, calls: usize, events: &AppEventSender) {
    let progress = Arc::new(BatchProgress::new(calls, Instant::now()));
    events.send(AppEvent::BatchStarted {
        batch,
        label: "bench".into(),
        scope: None,
        scope_label: "global".into(),
        calls: session.calls_for_screen(0),
        progress: Some(Arc::clone(&progress)),
        max_parallelism: 16,
    });
    let sink = UiSink::new(batch, progress, events.clone(), None);
    let reports = session.run_batch(0, Some(&sink)).await;
    events.send(AppEvent::Trails {
        batch,
        trails: reports.into_iter().map(|r| r.trail).collect(),
    });
    // As the console does: a finished batch can leave memory.
    events.send(AppEvent::BatchFinished { batch });
}
