//! The channel events travel on: a sender that never blocks and a receiver
//! that drains everything queued at once, woken at most once per drain.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

use super::AppEvent;

/// The sending side: cloneable, never blocks, never waits for the screen.
///
/// Events are appended to a shared queue under a short lock, and the
/// console is woken at most once until it next drains the queue, so a burst
/// of thousands of events costs the engine a push each and the screen one
/// wake-up: updates are coalesced, not back-pressured onto the pipeline.
#[derive(Debug)]
pub struct AppEventSender {
    shared: Arc<Shared>,
}

/// The receiving side, owned by the console's event loop.
#[derive(Debug)]
pub struct AppEventReceiver {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Vec<AppEvent>>,
    /// How many events the last drain took: the next queue starts that big,
    /// so a flood does not regrow (and copy) it from nothing every frame.
    last_drain: AtomicUsize,
    /// Set by the first send after a drain; cleared by the drain.
    pending: AtomicBool,
    senders: AtomicUsize,
    wake: Notify,
}

impl AppEventSender {
    pub fn new() -> (Self, AppEventReceiver) {
        let shared = Arc::new(Shared {
            senders: AtomicUsize::new(1),
            ..Shared::default()
        });
        (
            Self {
                shared: Arc::clone(&shared),
            },
            AppEventReceiver { shared },
        )
    }

    pub fn send(&self, event: AppEvent) {
        self.shared
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
        // Read before writing: while the console has not drained yet, a
        // burst of sends leaves the flag's cache line shared.
        if !self.shared.pending.load(Ordering::Acquire) && !self.shared.pending.swap(true, Ordering::AcqRel) {
            self.shared.wake.notify_one();
        }
    }
}

impl Clone for AppEventSender {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::AcqRel);
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for AppEventSender {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.wake.notify_one();
        }
    }
}

impl AppEventReceiver {
    /// Every event sent since the last call, oldest first; waits while there
    /// is none. `None` once every sender is gone and the queue is empty.
    pub async fn recv_many(&mut self) -> Option<Vec<AppEvent>> {
        loop {
            let events = self.drain();
            if !events.is_empty() {
                return Some(events);
            }
            if self.shared.senders.load(Ordering::Acquire) == 0 {
                return None;
            }
            self.shared.wake.notified().await;
        }
    }

    /// What is queued now, without waiting.
    pub fn try_recv_many(&mut self) -> Vec<AppEvent> {
        self.drain()
    }

    fn drain(&self) -> Vec<AppEvent> {
        self.shared.pending.store(false, Ordering::Release);
        let capacity = self.shared.last_drain.load(Ordering::Relaxed).min(1 << 16);
        let events = std::mem::replace(
            &mut *self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner),
            Vec::with_capacity(capacity),
        );
        self.shared.last_drain.store(events.len(), Ordering::Relaxed);
        events
    }
}
