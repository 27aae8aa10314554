//! Starter policies (`tether policy init claude-code|codex|mcp`): each rule
//! with a description and examples, checked by the same loader as any
//! policy file. The agents' shell rules are one list, given each agent's
//! shell tool names.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The agents and servers a starter exists for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Starter {
    ClaudeCode,
    Codex,
    Mcp,
}

/// The shell rules every coding agent's starter ends with.
const SHELL: &str = include_str!("starters/shell.json");

impl Starter {
    /// The starter as a policy file's text.
    pub fn text(self) -> String {
        let (head, shell_tools) = match self {
            Starter::ClaudeCode => (include_str!("starters/claude-code.json"), Some("Bash")),
            // Codex's hooks name its shell tool Bash; the link and the
            // gateway see the tool's own name.
            Starter::Codex => (
                include_str!("starters/codex.json"),
                Some("{Bash,exec_command,shell,local_shell}"),
            ),
            Starter::Mcp => (include_str!("starters/mcp.json"), None),
        };
        let Some(tool) = shell_tools else {
            return head.to_owned();
        };
        // Both files are this crate's own and tested to parse.
        let (Ok(mut policy), Ok(Value::Array(shell))) = (
            serde_json::from_str::<Value>(head),
            serde_json::from_str::<Value>(SHELL),
        ) else {
            return head.to_owned();
        };
        let mut shell = shell;
        for rule in &mut shell {
            rule["match"]["tool"] = Value::String(tool.to_owned());
        }
        if let Some(rules) = policy.get_mut("rules").and_then(Value::as_array_mut) {
            rules.extend(shell);
        }
        let mut text = serde_json::to_string_pretty(&policy).unwrap_or_else(|_| head.to_owned());
        text.push('\n');
        text
    }

    /// The name as the command line writes it.
    pub fn name(self) -> &'static str {
        match self {
            Starter::ClaudeCode => "claude-code",
            Starter::Codex => "codex",
            Starter::Mcp => "mcp",
        }
    }
}

/// Where `tether serve` looks for a policy when none is given:
/// `$XDG_CONFIG_HOME/tether/policy.json`, else `~/.config/tether/policy.json`.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty() && Path::new(d).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("tether").join("policy.json"))
}
