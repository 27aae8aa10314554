//! `tether hook claude-code|codex`: a coding agent's tool-use hook bridged
//! to the running console, so its calls go through the console's pipeline
//! and its human. The agent runs the real tool; the console only decides.
//!
//! Agents fail open when a hook crashes or hangs, so this bridge never does:
//! a console that is down, a protocol error, malformed input or its own
//! deadline (kept below the agent's hook timeout) all give the configured
//! fallback — `ask` (the agent shows its own prompt) by default, or `deny` —
//! and are logged.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::UnixStream;
use tokio_util::codec::{Framed, LinesCodec};

use crate::agents::link::protocol::{self, MAX_LINE};

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

/// What the bridge answers when the console cannot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Fallback {
    Ask,
    Deny,
}

/// The hook event as the console needs it.
fn forwarded(kind: AgentKind, input: &Value) -> Result<(String, Value), String> {
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .map(str::to_owned)
    };
    let event = text(&["hook_event_name"]).ok_or("no hook_event_name")?;
    if event != "PreToolUse" && event != "PostToolUse" {
        return Err(format!("unsupported hook event {event:?}"));
    }
    let tool_name = text(&["tool_name"]).ok_or("no tool_name")?;
    let session_id = text(&["session_id"]).unwrap_or_else(|| "default".to_owned());
    let tool_input = input
        .get("tool_input")
        .or_else(|| input.get("input"))
        .cloned()
        .unwrap_or(json!({}));
    let params = json!({
        "agent": kind.name(),
        "event": event,
        "session_id": session_id,
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": text(&["tool_use_id", "call_id"]),
        "tool_response": input.get("tool_response").cloned(),
        "cwd": text(&["cwd", "working_directory"]),
    });
    Ok((event, params))
}

fn pre_output(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }})
}

fn fallback_output(event: &str, fallback: Fallback, why: &str) -> Value {
    tracing::warn!(event, why, ?fallback, "tether hook fell back");
    let reason = format!("Tether could not decide ({why})");
    match (event, fallback) {
        ("PostToolUse", Fallback::Ask) => json!({}),
        ("PostToolUse", Fallback::Deny) => json!({"decision": "block", "reason": reason}),
        (_, Fallback::Ask) => pre_output("ask", &reason),
        (_, Fallback::Deny) => pre_output("deny", &reason),
    }
}

/// What the console's answer means for the agent.
fn decision(event: &str, reply: &Value, fallback: Fallback) -> Value {
    let code = reply["code"].as_str();
    let message = reply["message"].as_str().unwrap_or_default();
    let decided = reply["decided_by"].as_str().unwrap_or("tether");
    match (event, code) {
        ("PostToolUse", Some("BLOCKED")) => json!({"decision": "block", "reason": message}),
        ("PostToolUse", None) => json!({}),
        ("PreToolUse", None) => pre_output("allow", &format!("allowed by Tether ({decided})")),
        ("PreToolUse", Some("DENIED")) => pre_output("deny", message),
        (_, Some(code)) => fallback_output(event, fallback, &format!("{code}: {message}")),
        _ => fallback_output(event, fallback, "unexpected reply"),
    }
}

async fn ask_console(socket: &Path, params: Value) -> Result<Value, String> {
    let stream = UnixStream::connect(socket)
        .await
        .map_err(|e| format!("console unreachable at {}: {e}", socket.display()))?;
    let mut lines = Framed::new(stream, LinesCodec::new_with_max_length(MAX_LINE));
    let request = protocol::request(1, "hook/tool_use", params);
    lines.send(request.to_string()).await.map_err(|e| e.to_string())?;
    while let Some(line) = lines.next().await {
        let frame: Value = serde_json::from_str(&line.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        if frame["id"] != json!(1) {
            continue;
        }
        if let Some(error) = frame.get("error") {
            return Err(format!("protocol error: {error}"));
        }
        return Ok(frame["result"].clone());
    }
    Err("the console closed the connection".to_owned())
}

/// Reads the hook input, asks the console (within `deadline`), writes the
/// agent's answer. Never fails: every problem becomes the fallback.
pub async fn run(
    kind: AgentKind,
    socket: &Path,
    deadline: Duration,
    fallback: Fallback,
    input: &str,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let parsed = serde_json::from_str::<Value>(input)
        .map_err(|e| format!("malformed hook input: {e}"))
        .and_then(|v| forwarded(kind, &v));
    let answer = match parsed {
        Err(why) => fallback_output("PreToolUse", fallback, &why),
        Ok((event, params)) => match tokio::time::timeout(deadline, ask_console(socket, params)).await {
            Ok(Ok(reply)) => decision(&event, &reply, fallback),
            Ok(Err(why)) => fallback_output(&event, fallback, &why),
            Err(_) => fallback_output(&event, fallback, &format!("no answer within {} s", deadline.as_secs())),
        },
    };
    writeln!(out, "{answer}")?;
    out.flush()
}

/// Where an agent keeps the settings that register hooks: the project's
/// (`DIR/.claude/settings.json`, `DIR/.codex/hooks.json`) or the user's.
pub fn settings_path(kind: AgentKind, project: Option<&Path>) -> std::path::PathBuf {
    let base = project.map_or_else(
        || std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default()),
        Path::to_path_buf,
    );
    match kind {
        AgentKind::ClaudeCode => base.join(".claude").join("settings.json"),
        AgentKind::Codex => base.join(".codex").join("hooks.json"),
    }
}

/// The settings at `path` with the bridge registered for PreToolUse and
/// PostToolUse; everything else in the file, other hooks included, is kept,
/// and a bridge already registered is not added twice.
///
/// # Errors
/// A settings file that exists but is not a JSON object.
pub fn merged_settings(kind: AgentKind, path: &Path) -> anyhow::Result<Value> {
    let mut settings = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<Value>(&text)
            .map_err(|e| anyhow::anyhow!("{} is not valid JSON ({e}); nothing was changed", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(e.into()),
    };
    let Some(root) = settings.as_object_mut() else {
        anyhow::bail!("{} is not a JSON object; nothing was changed", path.display());
    };
    let command = format!("tether hook {}", kind.name());
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        anyhow::bail!("\"hooks\" in {} is not an object; nothing was changed", path.display());
    };
    for event in ["PreToolUse", "PostToolUse"] {
        let entries = hooks.entry(event).or_insert_with(|| json!([]));
        let Some(entries) = entries.as_array_mut() else {
            anyhow::bail!(
                "\"hooks.{event}\" in {} is not an array; nothing was changed",
                path.display()
            );
        };
        let present = entries.iter().any(|e| {
            e["hooks"]
                .as_array()
                .is_some_and(|hs| hs.iter().any(|h| h["command"] == json!(command)))
        });
        if !present {
            entries.push(json!({"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 60}]}));
        }
    }
    Ok(settings)
}

/// Writes settings back, creating the directory if needed.
///
/// # Errors
/// I/O failures.
pub fn write_settings(path: &Path, settings: &Value) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(settings)? + "\n")?;
    Ok(())
}
