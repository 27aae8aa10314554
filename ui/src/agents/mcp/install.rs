//! `tether mcp install` / `uninstall`: the MCP servers an agent already has
//! configured, each launched through `tether mcp proxy --name <name> --
//! <its command>` (env, cwd and every other field kept). Claude Code: the
//! project's `.mcp.json` or the user's `~/.claude.json` (`mcpServers`);
//! Codex: `[mcp_servers.*]` in `$CODEX_HOME/config.toml`, edited with
//! `toml_edit` so comments and formatting stay. Servers reached by URL are
//! left alone and named, with why. Installing twice changes nothing.
//!
//! Codex asks its own approval for an MCP tool that is not read-only, and
//! under `codex exec` (approval policy `never`) refuses such a call before
//! it reaches the gateway; a wrapped Codex server therefore gets
//! `default_tools_approval_mode = "approve"` (unless the user set one), so
//! the console is the one that decides.
//!
//! Uninstalling restores each server's original `command`, `args` (and, for
//! Codex, `tool_timeout_sec` and `default_tools_approval_mode`) from a
//! record kept in the state directory;
//! when the file is still exactly as the installer wrote it, the original
//! file comes back byte for byte. Without a record the original command is
//! read back from after `--`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::agents::hooks::AgentKind;

/// How the wrapped servers start the gateway.
pub struct Wrap {
    /// `tether` or this executable's absolute path.
    pub program: String,
    /// `--socket`: the console's socket, absolute, so the gateway finds it
    /// whatever environment the agent starts its servers with.
    pub socket: PathBuf,
    /// Codex's `tool_timeout_sec`: long enough for a human to answer.
    pub tool_timeout_secs: u64,
}

/// What an install makes of a config file.
#[derive(Debug, Default)]
pub struct Installed {
    /// The file with every stdio server wrapped (the text as it was when
    /// nothing is wrapped).
    pub text: String,
    /// The names wrapped now and each one's original fields.
    pub wrapped: Map<String, Value>,
    /// Each server left as it is, and why.
    pub left: Vec<(String, &'static str)>,
}

/// Why a server reached by URL is left unwrapped.
pub const REMOTE: &str =
    "remote: its calls are not checked; front it with `tether mcp serve --http` (a config naming its url)";

/// Why a server already wrapped is left alone.
pub const ALREADY: &str = "already runs through `tether mcp proxy`";

/// Why an entry with neither a command nor a URL is left alone.
const NO_COMMAND: &str = "no command to start (not a stdio server Tether can front)";

/// What the installer keeps to undo itself, per config file.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Record {
    /// The file before the first install, while nothing else changed it.
    pub original: Option<String>,
    /// The file as the installer last wrote it.
    pub written: String,
    /// Each wrapped server's fields as they were (absent ones as `null`).
    pub servers: Map<String, Value>,
}

/// The file an agent keeps its MCP servers in.
///
/// # Errors
/// `--project` for Codex, which reads MCP servers only from its home.
pub fn config_path(kind: AgentKind, project: Option<&Path>) -> anyhow::Result<PathBuf> {
    let home = || PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let path = match (kind, project) {
        (AgentKind::ClaudeCode, Some(dir)) => dir.join(".mcp.json"),
        (AgentKind::ClaudeCode, None) => home().join(".claude.json"),
        (AgentKind::Codex, Some(_)) => {
            anyhow::bail!(
                "Codex reads MCP servers from $CODEX_HOME/config.toml, not from a project; leave --project out"
            )
        }
        (AgentKind::Codex, None) => match std::env::var_os("CODEX_HOME") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("config.toml"),
            _ => home().join(".codex").join("config.toml"),
        },
    };
    Ok(std::path::absolute(&path)?)
}

/// Where the record for `config` is kept.
pub fn record_path(config: &Path) -> PathBuf {
    let safe: String = config
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' })
        .collect();
    super::pins::state_dir()
        .join("mcp-install")
        .join(format!("{safe}.json"))
}

/// Whether a server already runs through a Tether gateway.
pub fn is_wrapped(command: &str, args: &[String]) -> bool {
    Path::new(command).file_name().is_some_and(|n| n == "tether")
        && args.get(..2).is_some_and(|a| a == ["mcp", "proxy"])
}

fn proxy_args(wrap: &Wrap, name: &str, command: &str, args: &[String]) -> Vec<String> {
    let mut out = vec!["mcp".to_owned(), "proxy".into(), "--name".into(), name.to_owned()];
    out.extend(["--socket".to_owned(), wrap.socket.display().to_string()]);
    out.push("--".into());
    out.push(command.to_owned());
    out.extend(args.iter().cloned());
    out
}

/// The original command line of a wrapped server: what follows `--`.
fn unwrapped(args: &[String]) -> Option<(String, Vec<String>)> {
    let at = args.iter().position(|a| a == "--")?;
    let (command, rest) = args.get(at + 1..)?.split_first()?;
    Some((command.clone(), rest.to_vec()))
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The file with every stdio server wrapped, and what was left as it was.
///
/// # Errors
/// A file that does not parse, or whose servers are not where they belong.
pub fn install(kind: AgentKind, text: &str, wrap: &Wrap) -> anyhow::Result<Installed> {
    match kind {
        AgentKind::ClaudeCode => install_json(text, wrap),
        AgentKind::Codex => install_toml(text, wrap),
    }
}

/// The file with every wrapped server restored; the names restored.
///
/// # Errors
/// A file that does not parse.
pub fn uninstall(kind: AgentKind, text: &str, originals: &Map<String, Value>) -> anyhow::Result<(String, Vec<String>)> {
    match kind {
        AgentKind::ClaudeCode => uninstall_json(text, originals),
        AgentKind::Codex => uninstall_toml(text, originals),
    }
}

fn parse_json(text: &str) -> anyhow::Result<Value> {
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(text).context("not valid JSON; nothing was changed")
}

fn write_json(value: &Value, like: &str) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(value)?;
    if like.is_empty() || like.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

fn install_json(text: &str, wrap: &Wrap) -> anyhow::Result<Installed> {
    let mut root = parse_json(text)?;
    let mut installed = Installed {
        text: text.to_owned(),
        ..Installed::default()
    };
    let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return Ok(installed);
    };
    for (name, entry) in servers.iter_mut() {
        let Some(entry) = entry.as_object_mut() else {
            installed.left.push((name.clone(), NO_COMMAND));
            continue;
        };
        let Some(command) = entry.get("command").and_then(Value::as_str).map(str::to_owned) else {
            let why = if entry.contains_key("url") { REMOTE } else { NO_COMMAND };
            installed.left.push((name.clone(), why));
            continue;
        };
        let args = strings(entry.get("args"));
        if is_wrapped(&command, &args) {
            installed.left.push((name.clone(), ALREADY));
            continue;
        }
        installed.wrapped.insert(
            name.clone(),
            json!({"command": command, "args": entry.get("args").cloned()}),
        );
        entry.insert("command".into(), json!(wrap.program));
        entry.insert("args".into(), json!(proxy_args(wrap, name, &command, &args)));
    }
    if !installed.wrapped.is_empty() {
        installed.text = write_json(&root, text)?;
    }
    Ok(installed)
}

fn uninstall_json(text: &str, originals: &Map<String, Value>) -> anyhow::Result<(String, Vec<String>)> {
    let mut root = parse_json(text)?;
    let mut restored = Vec::new();
    if let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut) {
        for (name, entry) in servers.iter_mut() {
            let Some(entry) = entry.as_object_mut() else { continue };
            let command = entry.get("command").and_then(Value::as_str).unwrap_or_default();
            let args = strings(entry.get("args"));
            if !is_wrapped(command, &args) {
                continue;
            }
            let Some((command, rest)) = unwrapped(&args) else {
                continue;
            };
            let original_args = originals.get(name).map(|o| o["args"].clone());
            entry.insert("command".into(), json!(command));
            match original_args {
                Some(Value::Null) if rest.is_empty() => {
                    entry.remove("args");
                }
                Some(Value::Array(a)) if strings(Some(&Value::Array(a.clone()))) == rest => {
                    entry.insert("args".into(), Value::Array(a));
                }
                _ => {
                    entry.insert("args".into(), json!(rest));
                }
            }
            restored.push(name.clone());
        }
    }
    if restored.is_empty() {
        return Ok((text.to_owned(), restored));
    }
    Ok((write_json(&root, text)?, restored))
}

fn toml_strings(item: Option<&toml_edit::Item>) -> Vec<String> {
    item.and_then(toml_edit::Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn toml_array(items: &[String]) -> toml_edit::Value {
    toml_edit::Value::Array(items.iter().map(String::as_str).collect())
}

/// Sets `key`, keeping the whitespace and comment around the old value.
fn set(entry: &mut dyn toml_edit::TableLike, key: &str, mut value: toml_edit::Value) {
    if let Some(old) = entry.get(key).and_then(toml_edit::Item::as_value) {
        *value.decor_mut() = old.decor().clone();
    }
    entry.insert(key, toml_edit::Item::Value(value));
}

/// Codex's per-server approval of MCP tool calls (`auto`, `prompt`,
/// `approve`).
const CODEX_APPROVAL: &str = "default_tools_approval_mode";

fn install_toml(text: &str, wrap: &Wrap) -> anyhow::Result<Installed> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .context("config.toml is not valid TOML; nothing was changed")?;
    let mut installed = Installed {
        text: text.to_owned(),
        ..Installed::default()
    };
    let Some(servers) = doc.get_mut("mcp_servers").and_then(toml_edit::Item::as_table_like_mut) else {
        return Ok(installed);
    };
    for (name, entry) in servers.iter_mut() {
        let Some(entry) = entry.as_table_like_mut() else {
            installed.left.push((name.get().to_owned(), NO_COMMAND));
            continue;
        };
        let Some(command) = entry
            .get("command")
            .and_then(toml_edit::Item::as_str)
            .map(str::to_owned)
        else {
            let why = if entry.contains_key("url") { REMOTE } else { NO_COMMAND };
            installed.left.push((name.get().to_owned(), why));
            continue;
        };
        let args = toml_strings(entry.get("args"));
        if is_wrapped(&command, &args) {
            installed.left.push((name.get().to_owned(), ALREADY));
            continue;
        }
        let timeout = entry.get("tool_timeout_sec").map(|t| t.to_string().trim().to_owned());
        let approval = entry.get(CODEX_APPROVAL).map(|a| a.to_string().trim().to_owned());
        installed.wrapped.insert(
            name.get().to_owned(),
            json!({"command": command, "args": entry.get("args").map(|_| args.clone()),
                   "tool_timeout_sec": timeout, CODEX_APPROVAL: approval}),
        );
        if approval.is_none() {
            set(entry, CODEX_APPROVAL, "approve".into());
        }
        set(entry, "command", wrap.program.as_str().into());
        set(
            entry,
            "args",
            toml_array(&proxy_args(wrap, name.get(), &command, &args)),
        );
        let timeout = i64::try_from(wrap.tool_timeout_secs).unwrap_or(i64::MAX);
        set(entry, "tool_timeout_sec", timeout.into());
    }
    if !installed.wrapped.is_empty() {
        installed.text = doc.to_string();
    }
    Ok(installed)
}

fn uninstall_toml(text: &str, originals: &Map<String, Value>) -> anyhow::Result<(String, Vec<String>)> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .context("config.toml is not valid TOML; nothing was changed")?;
    let mut restored = Vec::new();
    if let Some(servers) = doc.get_mut("mcp_servers").and_then(toml_edit::Item::as_table_like_mut) {
        for (name, entry) in servers.iter_mut() {
            let Some(entry) = entry.as_table_like_mut() else {
                continue;
            };
            let command = entry
                .get("command")
                .and_then(toml_edit::Item::as_str)
                .unwrap_or_default();
            let args = toml_strings(entry.get("args"));
            if !is_wrapped(command, &args) {
                continue;
            }
            let Some((command, rest)) = unwrapped(&args) else {
                continue;
            };
            let original = originals.get(name.get()).cloned().unwrap_or(Value::Null);
            set(entry, "command", command.into());
            if original["args"].is_null() && !original.is_null() && rest.is_empty() {
                entry.remove("args");
            } else {
                set(entry, "args", toml_array(&rest));
            }
            match original["tool_timeout_sec"]
                .as_str()
                .and_then(|t| t.parse::<toml_edit::Value>().ok())
            {
                Some(timeout) => set(entry, "tool_timeout_sec", timeout),
                None if !original.is_null() => {
                    entry.remove("tool_timeout_sec");
                }
                None => {}
            }
            if !original.is_null() && original[CODEX_APPROVAL].is_null() {
                entry.remove(CODEX_APPROVAL);
            }
            restored.push(name.get().to_owned());
        }
    }
    if restored.is_empty() {
        return Ok((text.to_owned(), restored));
    }
    Ok((doc.to_string(), restored))
}
