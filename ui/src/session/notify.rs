//! Reaching the human when an approval waits (CONSOLE.md, "Reaching the
//! human"): the terminal's bell, a desktop notification by OSC 9 / OSC 777,
//! and the user's own notify command with one JSON object on stdin.
//!
//! Nothing here can hold up a call: the command runs detached on its own
//! task, is killed after [`COMMAND_DEADLINE`], and its failure is a line in
//! the log and the events pane, never part of an outcome. A few run at once
//! ([`MAX_RUNNING`]), and an approval over before its turn is not told.

use std::collections::{HashSet, VecDeque};
use std::process::Stdio;
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::session::events::{AppEvent, AppEventSender, ApprovalPrompt};

/// How long a notify command may run before it is killed.
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(10);

/// Longest `args_preview`, in characters.
const PREVIEW_CHARS: usize = 200;

/// What `--notify LIST` asks for on the console's own terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminalNotify {
    /// BEL when an approval starts waiting.
    pub bell: bool,
    /// A desktop notification by OSC 9 and OSC 777.
    pub osc: bool,
    /// Wrap OSC sequences for tmux's passthrough (`$TMUX` is set).
    pub tmux: bool,
}

impl Default for TerminalNotify {
    fn default() -> Self {
        Self {
            bell: true,
            osc: false,
            tmux: false,
        }
    }
}

impl FromStr for TerminalNotify {
    type Err = String;

    /// `bell`, `osc`, `none`, or a comma list of `bell` and `osc`.
    fn from_str(list: &str) -> Result<Self, String> {
        let mut notify = Self {
            bell: false,
            osc: false,
            tmux: false,
        };
        let mut none = false;
        for item in list.split(',').map(str::trim) {
            match item {
                "bell" => notify.bell = true,
                "osc" => notify.osc = true,
                "none" => none = true,
                other => {
                    return Err(format!(
                        "unknown notification `{other}`: expected a comma list of bell and osc, or none"
                    ));
                }
            }
        }
        if none && (notify.bell || notify.osc) {
            return Err("`none` cannot be combined with bell or osc".to_owned());
        }
        Ok(notify)
    }
}

impl TerminalNotify {
    /// Takes `$TMUX` into account (OSC sequences need tmux's passthrough).
    pub fn with_env(mut self) -> Self {
        self.tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
        self
    }

    /// The bytes that tell the terminal `count` approvals started waiting,
    /// the first for `tool` in `scope` (both escaped, and stripped of what
    /// could end an OSC string early).
    pub fn bytes(&self, count: usize, tool: &str, scope: &str) -> Vec<u8> {
        let mut out = Vec::new();
        if count == 0 {
            return out;
        }
        if self.bell {
            out.push(0x07);
        }
        if self.osc {
            let body = if count == 1 {
                format!("approval waiting: {} in {}", osc_text(tool), osc_text(scope))
            } else {
                format!(
                    "{count} approvals waiting, the first: {} in {}",
                    osc_text(tool),
                    osc_text(scope)
                )
            };
            for sequence in [
                format!("\x1b]9;Tether: {body}\x07"),
                format!("\x1b]777;notify;Tether;{body}\x07"),
            ] {
                if self.tmux {
                    // tmux passes a sequence through when it is wrapped in a
                    // DCS and its own ESCs are doubled.
                    out.extend_from_slice(b"\x1bPtmux;");
                    out.extend_from_slice(sequence.replace('\x1b', "\x1b\x1b").as_bytes());
                    out.extend_from_slice(b"\x1b\\");
                } else {
                    out.extend_from_slice(sequence.as_bytes());
                }
            }
        }
        out
    }
}

/// Text fit for inside an OSC string: escaped as on screen, and without the
/// `;` that separates OSC 777's fields.
fn osc_text(text: &str) -> String {
    crate::sanitize::escape(text).replace(';', ",")
}

/// An approval's life as the notify command hears of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    Waiting,
    Reminder,
    Closed,
}

impl Lifecycle {
    pub fn event(self) -> &'static str {
        match self {
            Lifecycle::Waiting => "approval/waiting",
            Lifecycle::Reminder => "approval/reminder",
            Lifecycle::Closed => "approval/closed",
        }
    }
}

/// The JSON object a notify command reads on stdin. Every text an agent or
/// a model wrote is escaped as the screen shows it.
pub fn payload(
    lifecycle: Lifecycle,
    prompt: &ApprovalPrompt,
    queue: (usize, usize),
    expires_in: Duration,
    socket: &str,
) -> Value {
    let escape = |s: &str| crate::sanitize::escape(s);
    // As the prompt shows them: decoded, then every hostile character escaped.
    let args = crate::sanitize::argument_lines(&prompt.arguments)
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    let preview = match args.char_indices().nth(PREVIEW_CHARS - 1) {
        Some((at, _)) if args.chars().count() > PREVIEW_CHARS => format!("{}…", &args[..at]),
        _ => args,
    };
    json!({
        "event": lifecycle.event(),
        "tool": escape(&prompt.tool),
        "call_id": escape(&prompt.call_id),
        "agent": prompt.agent.as_deref().map(escape),
        "scope": escape(&prompt.scope_label),
        // The subagent that asked (`null` for the main agent).
        "agent_type": prompt.subagent.as_ref().map(|s| escape(&s.kind)),
        "agent_id": prompt.subagent.as_ref().and_then(|s| s.id.as_deref()).map(escape),
        "reason": prompt.reason.as_deref().map(escape),
        "args_preview": preview,
        "queue_position": queue.0,
        "queue_length": queue.1,
        "expires_in_ms": u64::try_from(expires_in.as_millis()).unwrap_or(u64::MAX),
        "socket": socket,
    })
}

/// How many notify commands run at once; the next event waits for one to
/// end (at most [`COMMAND_DEADLINE`]).
pub const MAX_RUNNING: usize = 4;

/// The user's notify command (`--notify-cmd`), run through `sh -c`.
///
/// At most [`MAX_RUNNING`] run at once, the others wait in order. When an
/// approval ends before its `approval/waiting` could start, none of its
/// events runs (nobody needs telling about a request already answered); an
/// `approval/closed` runs exactly when its `approval/waiting` did. So a slow
/// command costs nothing however fast approvals come and go: without this,
/// each of them started two processes on the console's own threads.
#[derive(Clone, Debug)]
pub struct NotifyCommand {
    pub command: String,
    /// The console's socket, for the payload (`tether attach --socket`).
    pub socket: String,
    /// Where a failure is said besides the log (the events pane).
    pub events: Option<AppEventSender>,
    queue: Arc<Mutex<Queue>>,
}

/// An event's payload, built only when the event runs (most of a fast
/// stream of approvals is never told).
type Payload = Box<dyn FnOnce() -> Value + Send>;

/// The events waiting for a free run, and what each approval was told.
#[derive(Default)]
struct Queue {
    pending: VecDeque<(u64, Lifecycle, Payload)>,
    running: usize,
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
            command,
            socket,
            events,
            queue: Arc::default(),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells the command of approval `id`'s event, with what `payload`
    /// makes (when its turn comes) on its stdin, detached: returns at once,
    /// whatever the command does. Must be called inside a runtime.
    pub fn run(&self, id: u64, lifecycle: Lifecycle, payload: impl FnOnce() -> Value + Send + 'static) {
        {
            let mut queue = self.queue();
            if lifecycle == Lifecycle::Closed {
                queue.closing.insert(id);
            }
            queue.pending.push_back((id, lifecycle, Box::new(payload)));
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
        let command = self.command.clone();
        let started = tokio::task::spawn_blocking(move || {
            tokio::process::Command::new("nice")
                .args(["-n", "19", "sh", "-c"])
                .arg(command)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
        })
        .await
        .map_err(|e| format!("could not start `sh -c`: {e}"))?;
        let mut child = started.map_err(|e| format!("could not start `sh -c`: {e}"))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_names_the_subagent_that_asks_escaped_and_null_for_the_main_agent() {
        let (reply, _answer) = crate::session::events::ReplySlot::channel();
        let now = std::time::Instant::now();
        let mut prompt = ApprovalPrompt {
            id: 1,
            key: crate::session::provenance::CallKey::from(tether_tools::ExecutionId::fresh()),
            tool: "Bash".into(),
            call_id: "toolu_1".into(),
            scope_label: "claude-code 2cea18a0".into(),
            scope_id: None,
            owner: None,
            agent: Some("2cea18a0".into()),
            reason: None,
            arguments: r#"{"command": "ls"}"#.into(),
            validation: Ok(()),
            guard_veto: None,
            command_at: None,
            cwd: None,
            subagent: None,
            commands: Vec::new(),
            editing: crate::session::events::Editing::checked(|_| Ok(())),
            deadline: now,
            asked_at: now,
            reply,
        };
        let main = payload(Lifecycle::Waiting, &prompt, (1, 1), Duration::ZERO, "s");
        assert_eq!((&main["agent_type"], &main["agent_id"]), (&Value::Null, &Value::Null));
        prompt.subagent = Some(crate::subagent::Subagent {
            kind: "Explore\u{1b}[2J".into(),
            id: Some("aed64e52aca1f6d0c".into()),
        });
        let sub = payload(Lifecycle::Waiting, &prompt, (1, 1), Duration::ZERO, "s");
        assert_eq!(sub["agent_type"], "Explore\\u{1b}[2J");
        assert_eq!(sub["agent_id"], "aed64e52aca1f6d0c");
    }

    #[test]
    fn the_list_is_bell_osc_or_none() {
        let both: TerminalNotify = "bell,osc".parse().unwrap_or_default();
        assert!(both.bell && both.osc);
        let none: TerminalNotify = "none".parse().unwrap_or_default();
        assert!(!none.bell && !none.osc);
        assert!("bell,none".parse::<TerminalNotify>().is_err());
        assert!("beep".parse::<TerminalNotify>().is_err());
    }

    #[test]
    fn osc_is_wrapped_for_tmux_and_cannot_be_ended_by_the_tool_name() {
        let osc = TerminalNotify {
            bell: false,
            osc: true,
            tmux: false,
        };
        let plain = String::from_utf8(osc.bytes(1, "rm\x07;\x1b]0;x", "agent")).unwrap_or_default();
        assert!(plain.starts_with("\x1b]9;Tether: approval waiting: rm\\u{7},\\u{1b}]0,x in agent\x07"));
        assert_eq!(
            plain.matches('\x07').count(),
            2,
            "one BEL ends each sequence: {plain:?}"
        );
        let tmux = TerminalNotify { tmux: true, ..osc };
        let wrapped = String::from_utf8(tmux.bytes(1, "write", "agent")).unwrap_or_default();
        assert!(wrapped.starts_with("\x1bPtmux;\x1b\x1b]9;"), "{wrapped:?}");
        assert!(wrapped.ends_with("\x07\x1b\\"), "{wrapped:?}");
        assert!(TerminalNotify::default().bytes(0, "x", "y").is_empty());
    }
    /// The lines the notify command appended to `log`, once there are `n`.
    async fn heard(log: &std::path::Path, n: usize) -> Vec<(u64, String)> {
        loop {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let lines: Vec<(u64, String)> = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .map(|l| {
                    (
                        l["id"].as_u64().unwrap_or_default(),
                        l["event"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            if lines.len() >= n {
                return lines;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_slow_command_runs_a_few_at_once_and_never_for_an_approval_answered_before_its_turn() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (log, gate) = (dir.path().join("log"), dir.path().join("gate"));
        // Each run says what it heard, then waits until the test opens the gate.
        let command = NotifyCommand::new(
            format!(
                "cat >> {}; while [ ! -e {} ]; do sleep 0.05; done",
                log.display(),
                gate.display()
            ),
            "/tmp/console.sock".to_owned(),
            None,
        );
        let tell = |id: u64, lifecycle: Lifecycle| {
            command.run(id, lifecycle, move || json!({"event": lifecycle.event(), "id": id}))
        };
        for id in 1..=10 {
            tell(id, Lifecycle::Waiting);
        }
        // Answered while the first ones still run: 5 to 10 are never told.
        for id in 5..=10 {
            tell(id, Lifecycle::Closed);
        }
        assert_eq!(heard(&log, MAX_RUNNING).await.len(), MAX_RUNNING);
        for id in 1..=4 {
            tell(id, Lifecycle::Closed);
        }
        std::fs::write(&gate, "").unwrap_or_else(|e| panic!("{e}"));
        loop {
            let idle = {
                let queue = command.queue();
                queue.running == 0 && queue.pending.is_empty()
            };
            if idle {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut told = heard(&log, 0).await;
        told.sort();
        let expected: Vec<(u64, String)> = (1..=4)
            .flat_map(|id| [(id, "approval/closed".to_owned()), (id, "approval/waiting".to_owned())])
            .collect();
        assert_eq!(
            told, expected,
            "each told approval heard how it ended; nothing else ran"
        );
    }
}
