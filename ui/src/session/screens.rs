//! The session's events, published to every screen that shows it: the main
//! console's own and each attached one (`tether attach`). Every screen is
//! the same `App` fed the same way; this hub is the only thing that knows
//! there may be several.
//!
//! A screen that subscribes late is first told what is still true: the
//! requests waiting for an answer, the agents connected, the scope tree, the
//! attach status, and the recent lines of the events pane.
//!
//! A subscriber that is not a screen (the answering page) takes only the
//! approvals' events ([`Feed::Approvals`]): a batch's progress is never
//! copied for it, so it costs a running batch nothing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tether_tools::AgentPipelineScope;

use crate::session::events::{AppEvent, AppEventReceiver, AppEventSender, ApprovalPrompt};

/// Lines of the events pane a screen that attaches is shown.
const RECENT_NOTES: usize = 200;

/// Which of the session's events a subscriber is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// Every event: a screen.
    Everything,
    /// A request waiting, reminded, answered or closed (the answering page).
    Approvals,
}

impl Feed {
    /// Whether a subscriber of this feed is given `event`.
    pub fn wants(self, event: &AppEvent) -> bool {
        match self {
            Feed::Everything => true,
            Feed::Approvals => matches!(
                event,
                AppEvent::ApprovalRequested(_)
                    | AppEvent::ApprovalReminder { .. }
                    | AppEvent::ApprovalAnswered { .. }
                    | AppEvent::ApprovalClosed { .. }
            ),
        }
    }
}

/// Publishes one session's events to any number of screens.
#[derive(Clone, Debug, Default)]
pub struct ScreenHub {
    state: Arc<Mutex<HubState>>,
}

#[derive(Debug, Default)]
struct HubState {
    screens: Vec<(u64, AppEventSender, Feed)>,
    next_id: u64,
    waiting: Vec<ApprovalPrompt>,
    agents: Option<usize>,
    scopes: Option<Vec<AgentPipelineScope>>,
    attach: Option<AppEvent>,
    notes: VecDeque<String>,
}

/// A screen's subscription; dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    hub: ScreenHub,
    id: u64,
    pub events: AppEventReceiver,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.lock().screens.retain(|(id, _, _)| *id != self.id);
    }
}

impl ScreenHub {
    /// Publishes everything `source` receives until every sender of it is
    /// gone. Must be called inside a runtime.
    pub fn spawn(mut source: AppEventReceiver) -> Self {
        let hub = Self::default();
        let publisher = hub.clone();
        tokio::spawn(async move {
            while let Some(events) = source.recv_many().await {
                publisher.publish(events);
            }
            // Every screen's channel ends with the session.
            publisher.lock().screens.clear();
        });
        hub
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands each event to every screen (each its feed's), and remembers
    /// what a screen that subscribes later must still be told.
    pub fn publish(&self, mut events: Vec<AppEvent>) {
        let mut state = self.lock();
        for event in &events {
            state.remember(event);
        }
        if let Some(((_, last, last_feed), rest)) = state.screens.split_last() {
            for (_, screen, feed) in rest {
                for event in events.iter().filter(|e| feed.wants(e)) {
                    screen.send(event.clone());
                }
            }
            for event in events.drain(..).filter(|e| last_feed.wants(e)) {
                last.send(event);
            }
        }
    }

    /// A new screen: it first gets what is still true, then every event.
    pub fn subscribe(&self) -> Subscription {
        self.subscribe_to(Feed::Everything)
    }

    /// A new subscriber of `feed`: it first gets what of it is still true
    /// (the requests waiting, for [`Feed::Approvals`]), then its events.
    pub fn subscribe_to(&self, feed: Feed) -> Subscription {
        let (sender, events) = AppEventSender::new();
        let mut state = self.lock();
        if feed == Feed::Everything {
            for note in &state.notes {
                sender.send(AppEvent::Note(note.clone()));
            }
            if let Some(scopes) = &state.scopes {
                sender.send(AppEvent::ScopesChanged(scopes.clone()));
            }
            if let Some(connected) = state.agents {
                sender.send(AppEvent::AgentsChanged { connected });
            }
            if let Some(attach) = &state.attach {
                sender.send(attach.clone());
            }
        }
        for prompt in &state.waiting {
            sender.send(AppEvent::ApprovalRequested(Box::new(prompt.clone())));
        }
        let id = state.next_id;
        state.next_id += 1;
        state.screens.push((id, sender, feed));
        Subscription {
            hub: self.clone(),
            id,
            events,
        }
    }

    /// How many screens are subscribed.
    pub fn screens(&self) -> usize {
        self.lock().screens.len()
    }
}

impl HubState {
    fn remember(&mut self, event: &AppEvent) {
        match event {
            AppEvent::ApprovalRequested(prompt) => self.waiting.push((**prompt).clone()),
            AppEvent::ApprovalClosed { id, .. } | AppEvent::ApprovalAnswered { id, .. } => {
                self.waiting.retain(|p| p.id != *id);
            }
            AppEvent::AgentsChanged { connected } => self.agents = Some(*connected),
            AppEvent::ScopesChanged(scopes) => self.scopes = Some(scopes.clone()),
            AppEvent::AttachChanged(_) => self.attach = Some(event.clone()),
            AppEvent::Note(text) => {
                self.notes.push_back(text.clone());
                if self.notes.len() > RECENT_NOTES {
                    self.notes.pop_front();
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::session::events::ReplySlot;
    use crate::session::provenance::CallKey;

    fn prompt(id: u64) -> ApprovalPrompt {
        ApprovalPrompt {
            id,
            key: CallKey::from(tether_tools::ExecutionId::fresh()),
            tool: "write".into(),
            call_id: format!("c{id}"),
            scope_label: "agent".into(),
            scope_id: None,
            owner: None,
            agent: None,
            reason: None,
            arguments: "{}".into(),
            validation: Ok(()),
            guard_veto: None,
            command_at: None,
            cwd: None,
            subagent: None,
            commands: Vec::new(),
            deadline: Instant::now() + Duration::from_secs(60),
            editing: crate::session::events::Editing::checked(|_| Ok(())),
            asked_at: Instant::now(),
            anchor: None,
            passed_over: Vec::new(),
            agent_name: None,
            reply: ReplySlot::channel().0,
        }
    }

    #[tokio::test]
    async fn a_screen_that_subscribes_late_is_shown_what_still_waits_and_then_everything() {
        let hub = ScreenHub::default();
        let mut main = hub.subscribe();
        hub.publish(vec![
            AppEvent::ApprovalRequested(Box::new(prompt(1))),
            AppEvent::ApprovalRequested(Box::new(prompt(2))),
            AppEvent::AgentsChanged { connected: 2 },
        ]);
        hub.publish(vec![AppEvent::ApprovalAnswered {
            id: 1,
            by: "main".into(),
            answer: "approved".into(),
        }]);
        assert_eq!(main.events.try_recv_many().len(), 4);
        let mut late = hub.subscribe();
        let told = late.events.try_recv_many();
        let waiting: Vec<u64> = told
            .iter()
            .filter_map(|e| match e {
                AppEvent::ApprovalRequested(p) => Some(p.id),
                _ => None,
            })
            .collect();
        assert_eq!(waiting, vec![2], "only the request still waiting");
        assert!(
            told.iter()
                .any(|e| matches!(e, AppEvent::AgentsChanged { connected: 2 }))
        );
        hub.publish(vec![AppEvent::Note("both see this".into())]);
        assert_eq!(main.events.try_recv_many().len(), 1);
        assert_eq!(late.events.try_recv_many().len(), 1);
        drop(late);
        assert_eq!(hub.screens(), 1, "a screen that went away is no longer fed");
    }

    #[tokio::test]
    async fn the_answering_page_is_given_the_approvals_and_no_batch_progress() {
        let hub = ScreenHub::default();
        hub.publish(vec![
            AppEvent::Note("said before".into()),
            AppEvent::ApprovalRequested(Box::new(prompt(1))),
        ]);
        let mut screen = hub.subscribe();
        let mut page = hub.subscribe_to(Feed::Approvals);
        let first = page.events.try_recv_many();
        assert!(
            matches!(&first[..], [AppEvent::ApprovalRequested(p)] if p.id == 1),
            "what still waits, and no notes: {first:?}"
        );
        hub.publish(vec![
            AppEvent::Progress { batch: 0 },
            AppEvent::Declared { batch: 0, upto: 3 },
            AppEvent::ApprovalReminder { id: 1 },
            AppEvent::ApprovalAnswered {
                id: 1,
                by: "main".into(),
                answer: "approved".into(),
            },
            AppEvent::BatchFinished { batch: 0 },
        ]);
        let told = page.events.try_recv_many();
        assert!(
            matches!(
                &told[..],
                [
                    AppEvent::ApprovalReminder { id: 1 },
                    AppEvent::ApprovalAnswered { id: 1, .. }
                ]
            ),
            "{told:?}"
        );
        assert_eq!(
            screen.events.try_recv_many().len(),
            2 + 5,
            "a screen is given everything"
        );
    }
}
