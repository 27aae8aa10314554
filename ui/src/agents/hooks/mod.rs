//! `tether hook claude-code|codex`: a coding agent's tool-use hook bridged
//! to the running console, so its calls go through the console's pipeline
//! and its human. The agent runs the real tool; the console only decides.
//!
//! Both agents fail open when a hook crashes, hangs or prints an answer they
//! do not support, so this bridge never does any of that: a console that is
//! down, a protocol error, malformed input or its own deadline all end in a
//! deny with a reason the model can read (Claude Code may be told to fall
//! back to `ask` instead; Codex runs the tool on `ask`, so it cannot). The
//! exact answers each agent honours were learned by running it
//! (`answer.rs`); `ui/tests/hooks_real_agents.rs` proves them against the
//! real CLIs.

mod answer;
pub mod install;
mod replace;
pub mod trust;
pub mod uninstall;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_util::codec::{Framed, LinesCodec};

pub use answer::{Answer, Verdict};

use crate::agents::link::protocol::{self, MAX_LINE};
use crate::agents::link::socket;

/// How the reason the model reads when no console is listening begins
/// (the socket tried follows it).
pub const CONSOLE_DOWN: &str = socket::NOT_RUNNING;

/// Which agent's hook format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentKind {
    ClaudeCode,
    Codex,
}

impl AgentKind {
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::ClaudeCode => "claude-code",
            AgentKind::Codex => "codex",
        }
    }
}

/// What Claude Code is told when the console cannot decide. Deny is the
/// default; `ask` hands the call to Claude's own prompt (in `claude -p`
/// there is nobody to ask and Claude refuses the call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Fallback {
    Ask,
    #[default]
    Deny,
}

/// One bridge: the agent and, where the agent allows a choice, its fallback.
/// Codex has no fallback choice: it runs a tool when a hook says `ask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bridge {
    ClaudeCode(Fallback),
    Codex,
}

impl Bridge {
    pub fn kind(self) -> AgentKind {
        match self {
            Bridge::ClaudeCode(_) => AgentKind::ClaudeCode,
            Bridge::Codex => AgentKind::Codex,
        }
    }

    fn fallback(self) -> Fallback {
        match self {
            Bridge::ClaudeCode(fallback) => fallback,
            Bridge::Codex => Fallback::Deny,
        }
    }
}

/// The hook events the bridge answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    /// Before the tool runs.
    PreToolUse,
    /// Where the agent would show its own permission dialog.
    PermissionRequest,
    /// After the tool ran: its result may be withheld from the model.
    PostToolUse,
}

impl HookEvent {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "PreToolUse" => Some(Self::PreToolUse),
            "PermissionRequest" => Some(Self::PermissionRequest),
            "PostToolUse" => Some(Self::PostToolUse),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PermissionRequest => "PermissionRequest",
            Self::PostToolUse => "PostToolUse",
        }
    }

    /// Every event the installer registers, in the order Codex lists them.
    pub const ALL: [HookEvent; 3] = [Self::PreToolUse, Self::PermissionRequest, Self::PostToolUse];
}

/// A hook input the console can judge.
struct Forwarded {
    event: HookEvent,
    params: Value,
}

/// The hook event as the console needs it; `Err(None)` for an event the
/// bridge does not judge (answered with no decision).
fn forwarded(kind: AgentKind, input: &Value) -> Result<Forwarded, Option<String>> {
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
    let name = text("hook_event_name").ok_or(Some("malformed hook input: no hook_event_name".to_owned()))?;
    let event = HookEvent::parse(&name).ok_or(None)?;
    let tool_name = text("tool_name").ok_or(Some("malformed hook input: no tool_name".to_owned()))?;
    let params = json!({
        "agent": kind.name(),
        "event": event.name(),
        "session_id": text("session_id").unwrap_or_else(|| "default".to_owned()),
        "tool_name": tool_name,
        "tool_input": input.get("tool_input").cloned().unwrap_or(json!({})),
        "tool_use_id": text("tool_use_id"),
        "tool_response": input.get("tool_response").cloned(),
        "cwd": text("cwd"),
        "transcript_path": text("transcript_path"),
        "turn_id": text("turn_id"),
        // Present only when a subagent made the call.
        "agent_type": text("agent_type"),
        "agent_id": text("agent_id"),
    });
    Ok(Forwarded { event, params })
}

/// The reason for a hook input the console's line limit would refuse.
fn too_large(bytes: usize) -> String {
    format!(
        "Tether could not decide: the hook input is {bytes} bytes, larger than the {} MiB Tether can judge",
        MAX_LINE >> 20
    )
}

async fn ask_console(socket: &Path, params: Value) -> Result<Value, String> {
    let request = protocol::request(1, "hook/tool_use", params).to_string();
    // Refused here, at once: the console would skip the line.
    if request.len() > MAX_LINE {
        return Err(too_large(request.len()));
    }
    // What to do, and the socket tried: an agent that hid the environment
    // the console was started with shows here.
    let stream = socket::connect(socket).await.map_err(|why| why.to_string())?;
    let mut lines = Framed::new(stream, LinesCodec::new_with_max_length(MAX_LINE));
    lines
        .send(request)
        .await
        .map_err(|e| format!("Tether could not decide (sending to the console failed: {e})"))?;
    while let Some(line) = lines.next().await {
        let line = line.map_err(|e| format!("Tether could not decide (reading the console's answer failed: {e})"))?;
        let frame: Value =
            serde_json::from_str(&line).map_err(|e| format!("Tether could not decide (the console's answer: {e})"))?;
        // One request per connection: an error the console could not tie
        // to a request (`id: null`, a line it could not read) is about ours.
        let ours = frame["id"] == json!(1) || (frame["id"].is_null() && frame.get("error").is_some());
        if !ours {
            continue;
        }
        if let Some(error) = frame.get("error") {
            let said = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(format!(
                "Tether could not decide (the console refused the hook: {said})"
            ));
        }
        return Ok(frame["result"].clone());
    }
    Err("Tether could not decide (the console closed the connection)".to_owned())
}

/// The agent's answer, and what went wrong when the bridge had to fall
/// back (for the log; the answer already tells the model).
#[derive(Debug)]
pub struct Decided {
    pub answer: Answer,
    pub fell_back: Option<String>,
}

/// Reads the hook input, asks the console (within `deadline`) and returns
/// the agent's answer. Never fails: every problem becomes a deny (or, for
/// Claude Code with `--fallback ask`, an ask).
pub async fn decide(bridge: Bridge, socket: &Path, deadline: Duration, input: &str) -> Decided {
    let parsed = serde_json::from_str::<Value>(input)
        .map_err(|e| {
            Some(format!(
                "malformed hook input: not a JSON hook payload (line {}, column {})",
                e.line(),
                e.column()
            ))
        })
        .and_then(|value| forwarded(bridge.kind(), &value).map(|f| (value, f)));
    let (value, forwarded) = match parsed {
        Ok(parsed) => parsed,
        Err(None) => {
            return Decided {
                answer: Answer::nothing(),
                fell_back: None,
            };
        }
        Err(Some(why)) => {
            return Decided {
                answer: Answer::unreadable(&why),
                fell_back: Some(format!("hook input refused: {why}")),
            };
        }
    };
    let event = forwarded.event;
    let verdict = match tokio::time::timeout(deadline, ask_console(socket, forwarded.params)).await {
        Ok(Ok(reply)) => Verdict::from_reply(event, &reply),
        Ok(Err(why)) => Verdict::Undecided(why),
        Err(_) => Verdict::Undecided(format!(
            "Tether could not decide (the console did not answer within {} s)",
            deadline.as_secs()
        )),
    };
    let fell_back = match &verdict {
        Verdict::Undecided(why) => Some(format!("{} fell back ({:?}): {why}", event.name(), bridge.fallback())),
        _ => None,
    };
    Decided {
        answer: answer::render(bridge, event, &value, verdict),
        fell_back,
    }
}

/// [`decide`], then the answer written to `out` (and `err`); returns the
/// exit status the agent reads and what to log, if anything.
///
/// # Errors
/// Writing the answer failed.
pub async fn run(
    bridge: Bridge,
    socket: &Path,
    deadline: Duration,
    input: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<(u8, Option<String>)> {
    let Decided { answer, fell_back } = decide(bridge, socket, deadline, input).await;
    if let Some(stdout) = &answer.stdout {
        writeln!(out, "{stdout}")?;
        out.flush()?;
    }
    if let Some(stderr) = &answer.stderr {
        writeln!(err, "{stderr}")?;
        err.flush()?;
    }
    Ok((answer.exit, fell_back))
}
