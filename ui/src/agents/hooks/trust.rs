//! Codex's hook trust, computed as Codex 0.171.0's `/hooks` review does.
//! Codex silently skips a hook whose entry in `config.toml` is missing or
//! stale:
//!
//! ```toml
//! [hooks.state."<abs path of hooks.json>:<event_label>:<group>:<handler>"]
//! trusted_hash = "sha256:<hex>"
//! ```
//!
//! The hash is sha256 over the canonical JSON (keys sorted at every level,
//! no whitespace, UTF-8 unescaped) of one handler's normalised identity:
//! `{"event_name", "matcher" (when set and the event uses it), "hooks":
//! [{"type": "command", "command", "timeout" (default 600, at least 1),
//! "async" (default false), "statusMessage" (when set)}]}` — checked against
//! `codex app-server`'s `hooks/list` (`currentHash`).

use std::path::Path;

use anyhow::Context;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Codex's hook events in its discovery order, with their trust labels.
const EVENTS: [(&str, &str); 8] = [
    ("PreToolUse", "pre_tool_use"),
    ("PermissionRequest", "permission_request"),
    ("PostToolUse", "post_tool_use"),
    ("PreCompact", "pre_compact"),
    ("PostCompact", "post_compact"),
    ("SessionStart", "session_start"),
    ("UserPromptSubmit", "user_prompt_submit"),
    ("Stop", "stop"),
];

/// Events whose matcher Codex ignores (and leaves out of the hash).
const NO_MATCHER: [&str; 2] = ["UserPromptSubmit", "Stop"];

/// One hook's trust entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustEntry {
    /// `<hooks.json>:<event_label>:<group>:<handler>`.
    pub key: String,
    /// `sha256:<hex>`.
    pub hash: String,
    /// The canonical JSON the hash covers.
    pub identity: String,
}

/// Canonical JSON: keys sorted at every level, no whitespace.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The identity Codex hashes for one command handler of `event`.
fn identity(event: &str, label: &str, matcher: Option<&Value>, handler: &Value) -> Value {
    let timeout = handler["timeout"].as_u64().unwrap_or(600).max(1);
    let mut hook = json!({
        "type": "command",
        "command": handler["command"],
        "timeout": timeout,
        "async": handler["async"].as_bool().unwrap_or(false),
    });
    if let Some(status) = handler.get("statusMessage").filter(|s| !s.is_null()) {
        hook["statusMessage"] = status.clone();
    }
    let mut identity = json!({"event_name": label, "hooks": [hook]});
    if let Some(matcher) = matcher.filter(|m| !m.is_null() && !NO_MATCHER.contains(&event)) {
        identity["matcher"] = matcher.clone();
    }
    identity
}

/// The trust entries of the command handlers in `hooks` (a hooks.json
/// document read from `path`) that `wanted` accepts.
pub fn entries(path: &Path, hooks: &Value, wanted: impl Fn(&str) -> bool) -> Vec<TrustEntry> {
    let mut found = Vec::new();
    for (event, label) in EVENTS {
        let groups = hooks["hooks"][event].as_array().map(Vec::as_slice).unwrap_or_default();
        for (g, group) in groups.iter().enumerate() {
            let handlers = group["hooks"].as_array().map(Vec::as_slice).unwrap_or_default();
            for (h, handler) in handlers.iter().enumerate() {
                let command = handler["command"].as_str().unwrap_or_default();
                if handler["type"] != "command" || !wanted(command) {
                    continue;
                }
                let mut text = String::new();
                canonical(&identity(event, label, group.get("matcher"), handler), &mut text);
                let digest = Sha256::digest(text.as_bytes());
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                found.push(TrustEntry {
                    key: format!("{}:{label}:{g}:{h}", path.display()),
                    hash: format!("sha256:{hex}"),
                    identity: text,
                });
            }
        }
    }
    found
}

/// `config` (the text of Codex's `config.toml`) with `trusted_hash` set for
/// every entry; everything else, comments and layout included, is kept.
///
/// # Errors
/// `config` is not TOML, or its `hooks` / `hooks.state` is not a table.
pub fn trusted_config(config: &str, entries: &[TrustEntry]) -> anyhow::Result<String> {
    let mut doc: toml_edit::DocumentMut = config.parse().context("config.toml is not valid TOML")?;
    let implicit = || {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    };
    let hooks = doc
        .entry("hooks")
        .or_insert_with(implicit)
        .as_table_mut()
        .context("`hooks` in config.toml is not a table")?;
    let state = hooks
        .entry("state")
        .or_insert_with(implicit)
        .as_table_mut()
        .context("`hooks.state` in config.toml is not a table")?;
    for entry in entries {
        let item = state
            .entry(&entry.key)
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
        let table = item
            .as_table_like_mut()
            .with_context(|| format!("`hooks.state.\"{}\"` in config.toml is not a table", entry.key))?;
        table.insert("trusted_hash", toml_edit::value(entry.hash.as_str()));
    }
    Ok(doc.to_string())
}

/// The TOML [`trusted_config`] adds, for showing before it is written.
pub fn shown(entries: &[TrustEntry]) -> String {
    entries
        .iter()
        .map(|e| format!("[hooks.state.{}]\ntrusted_hash = {}\n", json!(e.key), json!(e.hash)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked examples checked against `codex app-server` `hooks/list`.
    #[test]
    fn hashes_match_what_codex_lists() {
        let hooks = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 /x/hook.py é", "timeout": 30}]},
            {"hooks": [{"type": "command", "command": "python3 /work/scratch/agents/hook.py /work/scratch/agents/cases/codex/smoke"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo two", "statusMessage": "checking"}]},
        ]}});
        let found = entries(Path::new("/h/hooks.json"), &hooks, |_| true);
        let hashes: Vec<&str> = found.iter().map(|e| e.hash.as_str()).collect();
        assert_eq!(
            hashes,
            [
                "sha256:53cad98cc3b71e87f2b03f77c2d7c5ee781769ebe9621312ecfd2847440d9a88",
                "sha256:8544a86b83b81a402933ba10ef9b72fd4639c1a122723f2e03ca9caf79d15a76",
                "sha256:be6f6f0afd6ed3172d713ffc454d8d861b674cf8bcac8a5b9c39126188c5b675",
            ]
        );
        assert_eq!(found[0].key, "/h/hooks.json:pre_tool_use:0:0");
        assert_eq!(
            found[0].identity,
            r#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"python3 /x/hook.py é","timeout":30,"type":"command"}],"matcher":"Bash"}"#
        );
    }
}
