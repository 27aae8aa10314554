//! `tether hook install`: the agent's settings with the bridge registered
//! for PreToolUse, PermissionRequest and PostToolUse, merged into what is
//! there (other hooks kept; installing again updates the bridge in place,
//! so Codex's trust keys, which name the position, stay the same).
//!
//! Timeouts nest so the console's answer always arrives first:
//! agent hook timeout > bridge deadline > approval timeout. Each step adds
//! [`MARGIN_SECS`]; with the default 120 s approval timeout the bridge waits
//! 135 s and the agent 150 s. An agent that kills its hook runs the tool
//! (both fail open), so the bridge must answer — with a deny — before that.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Value, json};

use super::{AgentKind, HookEvent};

/// Seconds between the approval timeout, the bridge's deadline and the
/// agent's hook timeout.
pub const MARGIN_SECS: u64 = 15;

/// What Codex shows while the hook runs.
const CODEX_STATUS: &str = "Waiting for the Tether console";

/// The bridge's deadline for a console whose approval timeout is `approval_secs`.
pub fn deadline_secs(approval_secs: u64) -> u64 {
    approval_secs.saturating_add(MARGIN_SECS)
}

/// The agent's hook timeout for a bridge with `deadline_secs`.
pub fn agent_timeout_secs(deadline_secs: u64) -> u64 {
    deadline_secs.saturating_add(MARGIN_SECS)
}

/// Where the agent reads the hooks: Claude Code the project's
/// `.claude/settings.json` or the user's `~/.claude/settings.json`; Codex
/// `$CODEX_HOME/hooks.json` (`~/.codex` when unset).
///
/// # Errors
/// `--project` for Codex, which reads hooks only from its home.
pub fn settings_path(kind: AgentKind, project: Option<&Path>) -> anyhow::Result<PathBuf> {
    let home = || PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let path = match (kind, project) {
        (AgentKind::ClaudeCode, Some(dir)) => dir.join(".claude").join("settings.json"),
        (AgentKind::ClaudeCode, None) => home().join(".claude").join("settings.json"),
        (AgentKind::Codex, Some(_)) => anyhow::bail!(
            "Codex reads hooks from $CODEX_HOME/hooks.json (default ~/.codex/hooks.json), not from a project; leave --project out"
        ),
        (AgentKind::Codex, None) => match std::env::var_os("CODEX_HOME") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("hooks.json"),
            _ => home().join(".codex").join("hooks.json"),
        },
    };
    // Codex names its trust entries after the absolute path.
    Ok(std::path::absolute(&path)?)
}

/// `s` quoted for `sh` when it needs it.
fn shell_quoted(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The words of a command line we wrote (plain words and single quotes).
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if c.is_whitespace() && !quoted => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// Whether `command` runs this bridge (any path to a `tether`, any flags).
pub fn is_bridge(command: &str, kind: AgentKind) -> bool {
    let words = words(command);
    words.len() >= 3
        && Path::new(&words[0]).file_name().is_some_and(|n| n == "tether")
        && words[1] == "hook"
        && words[2] == kind.name()
}

/// How an agent should start this executable: `tether` when the `tether`
/// on `PATH` is this very file, else this executable's absolute path (a
/// development build, or another install, stays the one that was chosen).
/// The MCP installer uses it too.
///
/// # Errors
/// The running executable cannot be found.
pub fn program() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding the running tether executable")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let on_path = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("tether"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .find(|candidate| candidate.is_file())
        .and_then(|found| found.canonicalize().ok());
    Ok(if on_path.as_deref() == Some(exe.as_path()) {
        PathBuf::from("tether")
    } else {
        exe
    })
}

/// How the agent starts the bridge: [`program`], and `--socket` with the
/// console's socket as an absolute path (the default one when `socket` is
/// `None`), so the bridge finds the console whatever environment the agent
/// gives its hooks.
///
/// # Errors
/// The running executable cannot be found.
pub fn command_line(kind: AgentKind, socket: Option<&Path>, deadline_secs: u64) -> anyhow::Result<String> {
    let program = shell_quoted(&program()?.to_string_lossy());
    let socket = installed_socket(socket)?;
    Ok(format!(
        "{program} hook {} --deadline {deadline_secs} --socket {}",
        kind.name(),
        shell_quoted(&socket.to_string_lossy())
    ))
}

/// The socket an installer writes into the command it installs: the one
/// given, or the default, as an absolute path. The MCP installer uses it too.
///
/// # Errors
/// The current directory cannot be read (for a relative `socket`).
pub fn installed_socket(socket: Option<&Path>) -> anyhow::Result<PathBuf> {
    let socket = socket.map_or_else(crate::agents::link::socket::default_path, Path::to_path_buf);
    Ok(std::path::absolute(socket)?)
}

/// One hook handler as the agent's settings hold it.
fn handler(kind: AgentKind, command: &str, timeout_secs: u64) -> Value {
    match kind {
        AgentKind::ClaudeCode => json!({"type": "command", "command": command, "timeout": timeout_secs}),
        AgentKind::Codex => {
            json!({"type": "command", "command": command, "timeout": timeout_secs, "statusMessage": CODEX_STATUS})
        }
    }
}

/// The settings at `path` with the bridge registered for every event in
/// [`HookEvent::ALL`]: an existing bridge entry is updated in place,
/// otherwise a group is appended (Claude Code matching every tool with
/// `*`; Codex with no matcher, which matches every tool).
///
/// # Errors
/// A settings file that exists but is not a JSON object with object hooks.
pub fn merged_settings(kind: AgentKind, path: &Path, command: &str, timeout_secs: u64) -> anyhow::Result<Value> {
    let mut settings = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<Value>(&text)
            .map_err(|e| anyhow::anyhow!("{} is not valid JSON ({e}); nothing was changed", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(e.into()),
    };
    let Some(root) = settings.as_object_mut() else {
        anyhow::bail!("{} is not a JSON object; nothing was changed", path.display());
    };
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        anyhow::bail!("\"hooks\" in {} is not an object; nothing was changed", path.display());
    };
    let ours = handler(kind, command, timeout_secs);
    for event in HookEvent::ALL {
        let entries = hooks.entry(event.name()).or_insert_with(|| json!([]));
        let Some(entries) = entries.as_array_mut() else {
            anyhow::bail!(
                "\"hooks.{}\" in {} is not an array; nothing was changed",
                event.name(),
                path.display()
            );
        };
        let existing = entries
            .iter_mut()
            .filter_map(|group| group.get_mut("hooks").and_then(Value::as_array_mut))
            .flatten()
            .find(|h| h["command"].as_str().is_some_and(|c| is_bridge(c, kind)));
        match existing {
            Some(found) => *found = ours.clone(),
            None => entries.push(match kind {
                AgentKind::ClaudeCode => json!({"matcher": "*", "hooks": [ours.clone()]}),
                AgentKind::Codex => json!({"hooks": [ours.clone()]}),
            }),
        }
    }
    Ok(settings)
}

/// The settings as the installer writes them: pretty JSON and a newline.
///
/// # Errors
/// Serialisation failures.
pub fn settings_text(settings: &Value) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(settings)? + "\n")
}

/// Writes settings text, creating the directory if needed.
///
/// # Errors
/// I/O failures.
pub fn write_text(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_path_is_still_recognised_as_the_bridge() {
        let command = format!("{} hook codex --deadline 5", shell_quoted("/opt/my tools/tether"));
        assert_eq!(command, "'/opt/my tools/tether' hook codex --deadline 5");
        assert!(is_bridge(&command, AgentKind::Codex));
        assert!(!is_bridge(&command, AgentKind::ClaudeCode));
        assert!(!is_bridge("my-linter hook codex", AgentKind::Codex));
    }
}
