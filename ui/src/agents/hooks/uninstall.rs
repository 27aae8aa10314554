//! `tether hook uninstall`: the bridge taken out of an agent's settings.
//! `hook install --write` keeps a record (in the state directory) of each
//! file it changes as it was before; while a file is still exactly as the
//! installer wrote it, uninstalling puts the original back byte for byte (a
//! file that did not exist is removed again). A file changed since, or one
//! without a record, has the bridge's handlers removed and the rest kept.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentKind, install};

/// A file before the first install.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Original {
    /// There was no file.
    Absent,
    /// Its exact text.
    Text(String),
    /// Not known: it already held the bridge, or changed between installs.
    Unknown,
}

/// One file the installer changed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileRecord {
    pub original: Original,
    /// The file as the installer last wrote it.
    pub written: String,
}

impl FileRecord {
    /// The record after writing `written` over `current`, given the record
    /// kept so far; `holds_bridge` says whether `current` already runs it.
    pub fn after_write(
        before: Option<&FileRecord>,
        current: Option<&str>,
        written: String,
        holds_bridge: bool,
    ) -> Self {
        let original = match (before, current) {
            (Some(before), Some(text)) if text == before.written => before.original.clone(),
            (Some(_), _) => Original::Unknown,
            (None, _) if holds_bridge => Original::Unknown,
            (None, None) => Original::Absent,
            (None, Some(text)) => Original::Text(text.to_owned()),
        };
        Self { original, written }
    }

    /// What to put back when the file now reads `current`: `Some(None)`
    /// removes the file, `None` when the original is not known or the file
    /// changed since.
    pub fn restore(&self, current: Option<&str>) -> Option<Option<&str>> {
        if current != Some(self.written.as_str()) {
            return None;
        }
        match &self.original {
            Original::Absent => Some(None),
            Original::Text(text) => Some(Some(text)),
            Original::Unknown => None,
        }
    }
}

/// What `hook install --write` keeps per settings file.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Record {
    /// The agent's settings (`settings.json`, Codex's `hooks.json`).
    pub settings: Option<FileRecord>,
    /// Codex's `config.toml`, when `--trust` wrote it.
    pub config: Option<FileRecord>,
}

/// Where the record for `settings` is kept.
pub fn record_path(settings: &Path) -> PathBuf {
    let safe: String = settings
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' })
        .collect();
    crate::agents::mcp::pins::state_dir()
        .join("hook-install")
        .join(format!("{safe}.json"))
}

/// A file's text, `None` when there is no file.
///
/// # Errors
/// The file exists but cannot be read.
pub fn read_optional(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// The record kept for `settings`, if any.
///
/// # Errors
/// A record that cannot be read.
pub fn load(settings: &Path) -> anyhow::Result<Option<Record>> {
    let path = record_path(settings);
    read_optional(&path)?
        .map(|text| serde_json::from_str(&text).with_context(|| format!("reading {}", path.display())))
        .transpose()
}

/// Keeps the record for `settings` (directory 0700, file 0600).
///
/// # Errors
/// I/O failures.
pub fn save(settings: &Path, record: &Record) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let path = record_path(settings);
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(serde_json::to_string_pretty(record)?.as_bytes())?;
    Ok(())
}

/// Forgets the record for `settings`.
///
/// # Errors
/// It exists and cannot be removed.
pub fn forget(settings: &Path) -> anyhow::Result<()> {
    let path = record_path(settings);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Whether the settings text registers the bridge of `kind` anywhere.
pub fn holds_bridge(kind: AgentKind, text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|settings| {
        settings["hooks"].as_object().is_some_and(|events| {
            events
                .values()
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(|group| group["hooks"].as_array())
                .flatten()
                .any(|h| h["command"].as_str().is_some_and(|c| install::is_bridge(c, kind)))
        })
    })
}

/// The settings without the bridge's handlers: a group left with no
/// handler goes, then an event left with no group, then `hooks` left empty.
/// `None` when there was no bridge to remove.
///
/// # Errors
/// Text that is not a JSON object.
pub fn without_bridge(kind: AgentKind, path: &Path, text: &str) -> anyhow::Result<Option<Value>> {
    let mut settings: Value = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("{} is not valid JSON ({e}); nothing was changed", path.display()))?;
    let Some(events) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Ok(None);
    };
    let mut removed = false;
    for groups in events.values_mut().filter_map(Value::as_array_mut) {
        groups.retain_mut(|group| {
            let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = handlers.len();
            handlers.retain(|h| !h["command"].as_str().is_some_and(|c| install::is_bridge(c, kind)));
            removed |= handlers.len() < before;
            !(handlers.is_empty() && before > 0)
        });
    }
    if !removed {
        return Ok(None);
    }
    events.retain(|_, groups| !groups.as_array().is_some_and(Vec::is_empty));
    if events.is_empty()
        && let Some(root) = settings.as_object_mut()
    {
        root.remove("hooks");
    }
    Ok(Some(settings))
}

/// Puts `text` back at `path`, or removes the file for `None`.
///
/// # Errors
/// I/O failures.
pub fn put_back(path: &Path, text: Option<&str>) -> anyhow::Result<()> {
    match text {
        Some(text) => std::fs::write(path, text).with_context(|| format!("writing {}", path.display())),
        None => match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("removing {}", path.display()))
            }
            _ => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_the_bridge_keeps_other_hooks_and_drops_what_it_emptied() {
        let text = r#"{"model": "opus", "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]},
                           {"matcher": "*", "hooks": [{"type": "command", "command": "tether hook claude-code --deadline 135"}]}],
            "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/x/tether hook claude-code"}]}]}}"#;
        let out = without_bridge(AgentKind::ClaudeCode, Path::new("s.json"), text)
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            serde_json::json!({"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]}]}})
        );
        assert!(
            without_bridge(AgentKind::Codex, Path::new("s.json"), text)
                .unwrap()
                .is_none()
        );
    }
}
