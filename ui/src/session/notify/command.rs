//! The notify command (`--notify-cmd`): run for each approval that starts
//! waiting and each that closes, a few at once, never on the threads that
//! run calls.

use std::collections::{HashSet, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::session::events::{AppEvent, AppEventSender};

use super::{COMMAND_DEADLINE, Lifecycle};

/// How many notify commands run at once; the next event waits for one to
/// end (at most [`COMMAND_DEADLINE`]).
pub const MAX_RUNNING: usize = 4;

/// How long an approval waits before its `approval/waiting` runs the
/// command. No human answers sooner (the console ignores answer keys for
/// 400 ms after a request reaches the screen), so what is answered within
/// it was answered by a script or a rule-like answerer, and nobody needs
/// telling: neither of its events runs. The approval keeps the time
/// itself, on the one timer it waits with (`session::approval`): an
/// approval answered within it costs the command nothing at all.
pub const GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// The user's notify command (`--notify-cmd`), run through `sh -c`.
///
/// An approval's events are told only once it has waited [`GRACE`] (its
/// caller's part: [`NotifyCommand::run`] queues at once). At
/// most [`MAX_RUNNING`] run at once, the others wait in order. When an
/// approval ends before its `approval/waiting` could start, none of its
/// events runs (nobody needs telling about a request already answered); an
/// `approval/closed` runs exactly when its `approval/waiting` did. So a slow
/// command costs nothing however fast approvals come and go: without this,
/// each of them started two processes on the console's own threads.
#[derive(Clone, Debug)]
pub struct NotifyCommand {
    pub command: Arc<str>,
    /// The console's socket, for the payload (`tether attach --socket`).
    pub socket: Arc<str>,
    /// The web page's origin (`tether serve --web`): the payload's `url`
    /// opens the approval there (a link that grants nothing by itself).
    pub web: Option<Arc<str>>,
    /// Where a failure is said besides the log (the events pane).
    pub events: Option<AppEventSender>,
    queue: Arc<Mutex<Queue>>,
}

/// An event's payload, built only when the event runs (most of a fast
/// stream of approvals is never told).
type Payload = Box<dyn FnOnce() -> Value + Send>;

/// The events waiting for a free run, and what each approval was told.
#[derive(Default)]
pub(super) struct Queue {
    pub(super) pending: VecDeque<(u64, Lifecycle, Payload)>,
    pub(super) running: usize,
    /// Approvals whose `approval/closed` is among the pending events.
    closing: HashSet<u64>,
    /// Approvals whose `approval/waiting` ran: their other events run too.
    told: HashSet<u64>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("pending", &self.pending.len())
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

impl Queue {
    /// Whether an event is still worth telling now that it is its turn.
    fn worth_telling(&mut self, id: u64, lifecycle: Lifecycle) -> bool {
        match lifecycle {
            Lifecycle::Waiting if self.closing.contains(&id) => false,
            Lifecycle::Waiting => {
                self.told.insert(id);
                true
            }
            Lifecycle::Reminder => self.told.contains(&id) && !self.closing.contains(&id),
            // The escalation command is told nothing else of the approval.
            Lifecycle::Escalated => !self.closing.contains(&id),
            Lifecycle::Closed => {
                self.closing.remove(&id);
                self.told.remove(&id)
            }
        }
    }
}

impl NotifyCommand {
    pub fn new(command: String, socket: String, events: Option<AppEventSender>) -> Self {
        Self {
            command: command.into(),
            socket: socket.into(),
            web: None,
            events,
            queue: Arc::default(),
        }
    }

    pub(super) fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells the command of approval `id`'s event, with what `payload`
    /// makes (when its turn comes) on its stdin, detached: returns at once,
    /// whatever the command does. Must be called inside a runtime.
    pub fn run(&self, id: u64, lifecycle: Lifecycle, payload: impl FnOnce() -> Value + Send + 'static) {
        self.enqueue(id, lifecycle, Box::new(payload));
    }

    /// Queues an event and starts what may start.
    fn enqueue(&self, id: u64, lifecycle: Lifecycle, payload: Payload) {
        {
            let mut queue = self.queue();
            if lifecycle == Lifecycle::Closed {
                queue.closing.insert(id);
            }
            queue.pending.push_back((id, lifecycle, payload));
        }
        self.start_next();
    }

    /// Starts the events whose turn it is, while fewer than [`MAX_RUNNING`] run.
    fn start_next(&self) {
        loop {
            let payload = {
                let mut queue = self.queue();
                if queue.running >= MAX_RUNNING {
                    return;
                }
                let Some((id, lifecycle, payload)) = queue.pending.pop_front() else {
                    return;
                };
                if !queue.worth_telling(id, lifecycle) {
                    continue;
                }
                queue.running += 1;
                payload
            };
            let this = self.clone();
            tokio::spawn(async move {
                let payload = payload();
                let event = payload["event"].as_str().unwrap_or("approval").to_owned();
                if let Err(problem) = this.run_to_end(&payload).await {
                    let line = format!("notify command failed on {event}: {problem}");
                    tracing::warn!("{line}");
                    if let Some(events) = &this.events {
                        events.send(AppEvent::Note(crate::sanitize::escape(&line)));
                    }
                }
                this.queue().running -= 1;
                this.start_next();
            });
        }
    }

    async fn run_to_end(&self, payload: &Value) -> Result<(), String> {
        // Starting a process costs a millisecond or more: not on the
        // threads that run the calls, and the command itself (its start
        // included) at the lowest priority, so it takes only idle CPU.
        let command = Arc::clone(&self.command);
        // Killed at the deadline with everything it started.
        let started = tokio::task::spawn_blocking(move || {
            crate::session::process_group::Group::spawn(
                tokio::process::Command::new("nice")
                    .args(["-n", "19", "sh", "-c"])
                    .arg(&*command)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null()),
            )
        })
        .await
        .map_err(|e| format!("could not start `sh -c`: {e}"))?;
        let (mut child, group) = started.map_err(|e| format!("could not start `sh -c`: {e}"))?;
        let mut line = payload.to_string();
        line.push('\n');
        let finished = tokio::time::timeout(COMMAND_DEADLINE, async {
            if let Some(mut stdin) = child.stdin.take() {
                // A command that does not read its stdin is not a failure.
                let _ = stdin.write_all(line.as_bytes()).await;
            }
            child.wait().await
        })
        .await;
        if let Ok(Ok(_)) = &finished {
            group.ended();
        }
        match finished {
            Err(_) => {
                let _ = child.kill().await;
                Err(format!("still running after {} s, killed", COMMAND_DEADLINE.as_secs()))
            }
            Ok(Err(e)) => Err(format!("waiting for it: {e}")),
            // `sh` (or `nice`) says 127 when the command is not found.
            Ok(Ok(status)) if status.code() == Some(127) => Err("command not found (exit status 127)".to_owned()),
            Ok(Ok(status)) if !status.success() => Err(format!("it exited with {status}")),
            Ok(Ok(_)) => Ok(()),
        }
    }
}
