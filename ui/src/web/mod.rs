//! The answering page (`tether serve --web`): a paired phone or browser
//! answers the same approval queue as the terminal and attached consoles.
//! It follows the approvals' events of the session's [`ScreenHub`] (never
//! a batch's progress: a page watching costs a batch nothing), keeps the
//! requests that wait, and answers through each request's own reply slot,
//! so the first answer wins wherever it comes from.
//!
//! Every answer is bound ([`binding`]) to the request the page showed, and
//! taken once, from a paired device ([`devices`]), from this page's origin.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;

use crate::session::events::{AppEvent, AppEventSender, PromptReply, Refused};
use crate::session::journal::JournalWriter;
use crate::session::screens::ScreenHub;

pub mod binding;
pub mod control;
pub mod devices;
mod page;
mod routes;
pub mod server;
mod shown;

use binding::Binding;
use devices::{Device, Devices};
pub use shown::{Shown, now_ms, qr_code};

/// Requests that ended, remembered to say why a page's answer came late.
const ENDED_KEPT: usize = 512;

#[derive(Debug, Default)]
struct Queue {
    waiting: Vec<Shown>,
    /// Requests that left the queue, newest last: id and how it ended.
    ended: VecDeque<(u64, String)>,
    /// The MACs of every answer taken (each is taken once).
    used: HashSet<Vec<u8>>,
}

/// Why the page's answer was not taken, as the page says it.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No device cookie, or one of a device that was revoked.
    NotPaired,
    /// The POST did not come from this page (Origin / Sec-Fetch-Site).
    CrossOrigin,
    /// The form's binding is not one this console made for this device.
    NotOurs,
    /// This very answer was taken already.
    Replayed,
    /// The call no longer waits: answered (by whom) or closed (why).
    NoLongerWaiting(String),
    /// The call waiting under that id is not the one shown.
    Changed,
    /// Its deadline passed.
    Expired,
    /// The call still waits, and takes no such answer from this device
    /// (its approval counted already on a call that needs several).
    NotTaken(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotPaired => write!(
                f,
                "this browser is not paired with the console (or its device was revoked): run `tether web pair` in a terminal"
            ),
            Refusal::CrossOrigin => write!(f, "refused: an answer must come from this console's own page"),
            Refusal::NotOurs => write!(
                f,
                "refused: this answer was not made by this console's page for this device"
            ),
            Refusal::Replayed => write!(f, "refused: this answer was given already; an answer counts once"),
            Refusal::NoLongerWaiting(how) => {
                write!(
                    f,
                    "not taken: this call no longer waits ({how}); your answer changed nothing"
                )
            }
            Refusal::Changed => write!(f, "refused: the call waiting is not the one this page showed"),
            Refusal::Expired => write!(f, "not taken: the call's time ran out"),
            Refusal::NotTaken(why) => write!(f, "not taken: {why}"),
        }
    }
}

/// What the page answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Approve,
    Reject { reason: Option<String> },
}

/// The answering page's state, shared by its handlers.
pub struct Web {
    key: [u8; 32],
    pub devices: Devices,
    queue: Mutex<Queue>,
    /// Bumped whenever the queue or the devices change (the live updates).
    changed: tokio::sync::watch::Sender<u64>,
    journal: Option<Arc<JournalWriter>>,
    events: AppEventSender,
    /// The URL phones open, without a trailing `/` (`https://host:port`).
    pub base: String,
    /// Whether the page is reached over TLS (the cookie is `Secure`).
    pub secure: bool,
}

impl Web {
    /// The page's state for a session: its MAC key is drawn here and lives
    /// only in this process.
    pub fn new(
        base: String,
        secure: bool,
        journal: Option<Arc<JournalWriter>>,
        events: AppEventSender,
    ) -> std::io::Result<Arc<Self>> {
        let (key, _) = devices::secret()?;
        Ok(Arc::new(Self {
            key,
            devices: Devices::default(),
            queue: Mutex::default(),
            changed: tokio::sync::watch::channel(0).0,
            journal,
            events,
            base,
            secure,
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follows the session's requests until the hub ends: their events
    /// only, never a batch's progress. Must be called inside a runtime.
    pub fn follow(self: &Arc<Self>, hub: &ScreenHub) -> tokio::task::JoinHandle<()> {
        let mut subscription = hub.subscribe_to(crate::session::screens::Feed::Approvals);
        let web = Arc::clone(self);
        tokio::spawn(async move {
            while let Some(events) = subscription.events.recv_many().await {
                // Every event is taken in (`any` would stop at the first
                // that changed the queue, and lose a request sent with it).
                if events.iter().filter(|e| web.told(e)).count() > 0 {
                    web.bump();
                }
            }
        })
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// A receiver told of every change (the page's live updates).
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Takes in one event; whether the queue changed.
    fn told(&self, event: &AppEvent) -> bool {
        // Most events are a batch's progress: not the page's, and no lock.
        if !crate::session::screens::Feed::Approvals.wants(event) {
            return false;
        }
        let mut queue = self.lock();
        let (id, how) = match event {
            AppEvent::ApprovalRequested(prompt) => {
                queue.waiting.push(Shown::of((**prompt).clone()));
                return true;
            }
            AppEvent::ApprovalReminder { id } => {
                let reminded = queue.waiting.iter_mut().find(|s| s.prompt.id == *id);
                return reminded.map(|s| s.reminded = true).is_some();
            }
            AppEvent::ApprovalAnswered { id, by, answer } => (*id, format!("{answer} by {by}")),
            AppEvent::ApprovalClosed { id, reason } => (*id, format!("closed: {reason}")),
            _ => return false,
        };
        queue.waiting.retain(|s| s.prompt.id != id);
        queue.ended.push_back((id, crate::sanitize::escape(&how)));
        if queue.ended.len() > ENDED_KEPT {
            queue.ended.pop_front();
        }
        true
    }

    /// The requests waiting now, oldest first.
    pub fn waiting(&self) -> Vec<Shown> {
        self.lock().waiting.clone()
    }

    /// Waits (at most `limit`) until none of the requests `ids` is in the
    /// queue any more: the page rendered after an answer then shows the
    /// queue without it, and its live updates have nothing to reload.
    pub async fn settled(&self, ids: &[u64], limit: std::time::Duration) {
        let mut changes = self.watch();
        let _ = tokio::time::timeout(limit, async {
            while self.lock().waiting.iter().any(|s| ids.contains(&s.prompt.id)) {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
    }

    /// How the request `id` ended, when it did recently.
    pub fn ended(&self, id: u64) -> Option<String> {
        self.lock()
            .ended
            .iter()
            .rev()
            .find(|(i, _)| *i == id)
            .map(|(_, how)| how.clone())
    }

    /// The form field that answers `shown` from `device`.
    pub fn field(&self, shown: &Shown, device: &Device) -> String {
        shown.binding().field(&self.key, device.id)
    }

    /// Answers the requests the form's `fields` are bound to, from `device`:
    /// one, or (a session's group) several, each through its own reply slot.
    /// Every binding must be this console's for this device and unused; a
    /// request of a group that left the queue meanwhile is skipped, as the
    /// terminal's group answer skips it. How many were answered.
    pub fn answer(&self, device: &Device, fields: &[String], verdict: &Verdict) -> Result<usize, Refusal> {
        if !self.devices.is_paired(device.id) {
            return Err(Refusal::NotPaired);
        }
        let mut bound = Vec::with_capacity(fields.len());
        for field in fields {
            bound.push(Binding::verify(field, &self.key, device.id).ok_or(Refusal::NotOurs)?);
        }
        if bound.is_empty() {
            return Err(Refusal::NotOurs);
        }
        let now = now_ms();
        let mut slots = Vec::new();
        {
            let mut queue = self.lock();
            if bound.iter().any(|(_, mac)| queue.used.contains(mac)) {
                return Err(Refusal::Replayed);
            }
            for (binding, _) in &bound {
                let Some(shown) = queue.waiting.iter().find(|s| s.prompt.id == binding.prompt) else {
                    continue;
                };
                if shown.binding() != *binding {
                    return Err(Refusal::Changed);
                }
                if binding.deadline_ms <= now {
                    return Err(Refusal::Expired);
                }
                slots.push(shown.prompt.reply.clone());
            }
            if slots.is_empty() {
                let how = self_ended(&queue, bound[0].0.prompt);
                return Err(Refusal::NoLongerWaiting(how));
            }
            for (_, mac) in &bound {
                queue.used.insert(mac.clone());
            }
        }
        let by = device.answerer();
        let reply = match verdict {
            Verdict::Approve => PromptReply::Approve,
            Verdict::Reject { reason } => PromptReply::Reject { reason: reason.clone() },
        };
        let group = (bound.len() > 1).then_some(bound.len());
        let mut answered = 0;
        let mut late = None;
        for slot in slots {
            let result = match group {
                Some(of) => slot.answer_in_group(reply.clone(), &by, of),
                None => slot.answer(reply.clone(), &by),
            };
            match result {
                Ok(()) => answered += 1,
                Err(refused) => late = Some(refused),
            }
        }
        match (answered, late) {
            (0, Some(how)) => {
                // Nothing was taken: the page may say so again, not "replayed".
                let mut queue = self.lock();
                for (_, mac) in &bound {
                    queue.used.remove(mac);
                }
                let said = crate::sanitize::escape(&how.to_string());
                Err(match how {
                    Refused::AnsweredBy(_) | Refused::Gone => Refusal::NoLongerWaiting(said),
                    Refused::ApprovedAlready { .. } | Refused::OnlyPlainAnswers { .. } => Refusal::NotTaken(said),
                })
            }
            (n, _) => Ok(n),
        }
    }

    /// Records a pairing or a revocation in the journal and on every screen.
    pub fn record(&self, event: &str, device: &Device, note: String) {
        if let Some(journal) = &self.journal {
            let fields = json!({"device": &*device.name, "answerer": &*device.answerer()});
            if let serde_json::Value::Object(fields) = fields {
                if let Err(error) = journal.record_event(event, fields) {
                    tracing::warn!(%error, event, "could not journal a web device");
                }
            }
        }
        self.events.send(AppEvent::Note(crate::sanitize::escape(&note)));
        self.bump();
    }

    /// A new one-time pairing link, said on every screen.
    pub fn pairing_link(&self) -> std::io::Result<String> {
        let token = self.devices.new_link()?;
        self.events.send(AppEvent::Note(
            "a one-time pairing link was made (valid 2 minutes)".to_owned(),
        ));
        Ok(format!("{}/pair/{token}", self.base))
    }

    /// Revokes the device `name` at once; whether there was one.
    pub fn revoke(&self, name: &str, by: &str) -> bool {
        match self.devices.revoke(name) {
            Some(device) => {
                self.record(
                    "web/revoke",
                    &device,
                    format!("web device {} revoked ({by})", device.name),
                );
                true
            }
            None => false,
        }
    }
}

fn self_ended(queue: &Queue, id: u64) -> String {
    queue
        .ended
        .iter()
        .rev()
        .find(|(i, _)| *i == id)
        .map_or_else(|| "it is not in the queue".to_owned(), |(_, how)| how.clone())
}

#[cfg(test)]
mod tests;
