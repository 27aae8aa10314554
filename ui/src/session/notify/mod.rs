//! Reaching the human when an approval waits (CONSOLE.md, "Reaching the
//! human"): the terminal's bell, a desktop notification by OSC 9 / OSC 777,
//! and the user's own notify command with one JSON object on stdin.
//!
//! Nothing here can hold up a call: the command runs detached on its own
//! task, is killed after [`COMMAND_DEADLINE`], and its failure is a line in
//! the log and the events pane, never part of an outcome. A few run at once
//! ([`MAX_RUNNING`]), and an approval over before its turn is not told.

use std::str::FromStr;
use std::time::Duration;

use serde_json::{Value, json};

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
    /// Nobody answered in `--escalate-after`: the escalation command's event.
    Escalated,
    Closed,
}

impl Lifecycle {
    pub fn event(self) -> &'static str {
        match self {
            Lifecycle::Waiting => "approval/waiting",
            Lifecycle::Reminder => "approval/reminder",
            Lifecycle::Escalated => "approval/escalated",
            Lifecycle::Closed => "approval/closed",
        }
    }
}

/// What a notify command is told of the call an approval is for, borrowed
/// from the call when an event runs.
#[derive(Clone, Copy, Debug)]
pub struct Asking<'a> {
    pub tool: &'a str,
    pub call_id: &'a str,
    pub agent: Option<&'a str>,
    pub scope: &'a str,
    pub subagent: Option<&'a crate::subagent::Subagent>,
    pub reason: Option<&'a str>,
    /// The arguments' text as the model wrote it.
    pub arguments: &'a str,
}

/// The JSON object a notify command reads on stdin. Every text an agent or
/// a model wrote is escaped as the screen shows it.
pub fn payload(
    lifecycle: Lifecycle,
    asking: Asking<'_>,
    queue: (usize, usize),
    expires_in: Duration,
    socket: &str,
) -> Value {
    let escape = |s: &str| crate::sanitize::escape(s);
    // As the prompt shows them: decoded, then every hostile character escaped.
    let args = crate::sanitize::argument_lines(asking.arguments)
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    let preview = crate::sanitize::shortened(&args, PREVIEW_CHARS);
    json!({
        "event": lifecycle.event(),
        "tool": escape(asking.tool),
        "call_id": escape(asking.call_id),
        "agent": asking.agent.map(escape),
        "scope": escape(asking.scope),
        // The subagent that asked (`null` for the main agent).
        "agent_type": asking.subagent.map(|s| escape(&s.kind)),
        "agent_id": asking.subagent.and_then(|s| s.id.as_deref()).map(escape),
        "reason": asking.reason.map(escape),
        "args_preview": preview,
        "queue_position": queue.0,
        "queue_length": queue.1,
        "expires_in_ms": u64::try_from(expires_in.as_millis()).unwrap_or(u64::MAX),
        "socket": socket,
    })
}

mod command;
pub use command::{GRACE, MAX_RUNNING, NotifyCommand};

#[cfg(test)]
mod tests;
