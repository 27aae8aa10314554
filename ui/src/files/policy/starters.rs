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

/// Which starter `tether policy init` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Every call no rule decides is asked; reviewers shown commented out.
    Plain,
    /// Every call no rule decides goes to a model reviewer first.
    WithReviewer,
}

/// The reviewers example every starter carries, as a `$comment` (JSON
/// has no comments; JSON Schema's keyword for one is what editors know).
const REVIEWERS_EXAMPLE: &[&str] = &[
    "Reviewers answer the calls a rule sends them before you are asked (docs/policy.md, \"Reviewers\"): allow, deny, or ask you with their reason; one that fails or times out asks you.",
    "To use one, add \"reviewers\" and route calls to it with \"default\": \"review\" or a rule's action {\"type\": \"review\", \"reviewer\": \"gate\"}; for example:",
    "\"reviewers\": {\"gate\": {\"command\": \"my-reviewer --json\", \"timeout_ms\": 10000}}",
    "\"reviewers\": {\"model\": {\"model\": {\"api\": \"anthropic\", \"model\": \"claude-haiku-4-5\", \"api_key_env\": \"ANTHROPIC_API_KEY\"}, \"timeout_ms\": 20000}}",
];

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

    /// The starter as `tether policy init` writes it: [`Starter::text`]
    /// with a commented `reviewers` example, or (`WithReviewer`) with the
    /// calls no rule decides routed to a model reviewer.
    pub fn file_text(self, variant: Variant) -> String {
        let text = self.text();
        let Ok(Value::Object(mut policy)) = serde_json::from_str::<Value>(&text) else {
            return text;
        };
        match variant {
            Variant::Plain => {
                // Beside `default`, where a reader decides what happens to the rest.
                let comment = Value::from(REVIEWERS_EXAMPLE.to_vec());
                let at = policy.keys().position(|k| k == "default").map_or(0, |i| i + 1);
                policy.shift_insert(at, "$comment".to_owned(), comment);
            }
            Variant::WithReviewer => {
                let (api, model, key) = match self {
                    Starter::Codex => ("openai", "gpt-5-mini", "OPENAI_API_KEY"),
                    Starter::ClaudeCode | Starter::Mcp => ("anthropic", "claude-haiku-4-5", "ANTHROPIC_API_KEY"),
                };
                policy.insert("default".to_owned(), Value::from("review"));
                policy.insert(
                    "reviewers".to_owned(),
                    serde_json::json!({
                        "model": {
                            "model": {"api": api, "model": model, "api_key_env": key},
                            "timeout_ms": 20_000,
                            "instructions": "The agent works on the project in its working directory."
                        }
                    }),
                );
                if let Some(description) = policy.get_mut("description") {
                    let said = description.as_str().unwrap_or_default().to_owned();
                    *description = Value::from(format!(
                        "{said} Calls no rule decides go to a model reviewer first (tether policy init --with-reviewer); it allows, denies or asks you, and asks you whenever it fails."
                    ));
                }
            }
        }
        let mut written = serde_json::to_string_pretty(&policy).unwrap_or(text);
        written.push('\n');
        written
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
