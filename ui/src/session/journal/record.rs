//! The console's journal records beyond the engine's `tool/call` and
//! `tool/result`: the header each run starts with, and what decided each
//! call, written on its `tool/result` line (docs/journal.md lists every
//! field). Everything added is optional when read, so a journal written
//! before these records replays as it did.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tether_tools::ToolFailureCode;

use super::Decision;

/// The `event` of the header record.
pub const JOURNAL_HEADER: &str = "journal/header";

/// The journal format the console writes: 2 adds the header and the
/// decision fields to format 1 (the engine's records alone).
pub const FORMAT: u32 = 2;

/// The first record of every run (and of every file a rotation starts):
/// which console wrote what follows, under which policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalHeader {
    /// Always [`JOURNAL_HEADER`].
    pub event: String,
    /// Milliseconds since the Unix epoch, when the record was written.
    pub ts_ms: u64,
    /// [`FORMAT`].
    pub format: u32,
    /// The `tether` version that wrote the journal.
    pub console_version: String,
    /// The policy file as given on the command line, made absolute; `null`
    /// when none was given (Tether's implicit rules only).
    pub policy_path: Option<String>,
    /// The sha256 of the policy file's bytes when the journal was opened
    /// (lowercase hex); `null` without a file or when it could not be read.
    pub policy_sha256: Option<String>,
    /// How long a call waits for a human before it fails `UNAVAILABLE`.
    pub approval_timeout_ms: u64,
}

impl JournalHeader {
    /// The header of a run under the policy file `policy` (if any), reading
    /// the file now for its hash.
    pub fn new(policy: Option<&Path>, approval_timeout: Duration) -> Self {
        let path = policy.map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_owned()));
        let sha256 = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .map(|bytes| hex(&Sha256::digest(&bytes)));
        Self {
            event: JOURNAL_HEADER.to_owned(),
            ts_ms: 0,
            format: FORMAT,
            console_version: env!("CARGO_PKG_VERSION").to_owned(),
            policy_path: path.map(|p| p.display().to_string()),
            policy_sha256: sha256,
            approval_timeout_ms: u64::try_from(approval_timeout.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// The header in words: `policy /p/ask.json (sha256 1a2b3c4d…), approval
    /// timeout 120 s`.
    pub fn describe(&self) -> String {
        let policy = self.describe_policy();
        let timeout = match self.approval_timeout_ms {
            ms if ms % 1_000 == 0 => format!("{} s", ms / 1_000),
            ms => format!("{ms} ms"),
        };
        format!("{policy}, approval timeout {timeout}, tether {}", self.console_version)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl JournalHeader {
    /// The policy alone: `policy /p/ask.json (sha256 1a2b3c4d…)`, or `no
    /// policy file`.
    pub fn describe_policy(&self) -> String {
        match (&self.policy_path, &self.policy_sha256) {
            (Some(path), Some(sha)) => format!("policy {path} (sha256 {}…)", &sha[..sha.len().min(12)]),
            (Some(path), None) => format!("policy {path} (unreadable then)"),
            (None, _) => "no policy file".to_owned(),
        }
    }
}

/// The `event` of a policy reload that took.
pub const POLICY_RELOAD: &str = "policy/reload";
/// The `event` of a policy reload that failed (the old policy stays).
pub const POLICY_RELOAD_FAILED: &str = "policy/reload-failed";

/// Who reloaded the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReloadedBy {
    /// A key at a console: the key as its key table shows it (`p`).
    Key(&'static str),
    /// The keep key at the approve-always dialog (as its key table shows
    /// it, `s`): the rule was kept in the policy file, which was read again.
    KeptRule(&'static str),
    /// SIGHUP to a headless `tether serve`.
    Signal,
}

impl ReloadedBy {
    /// As the record's `by` says it: `key p`, `s (kept an always-rule)`, `SIGHUP`.
    pub fn name(self) -> String {
        match self {
            ReloadedBy::Key(key) => format!("key {key}"),
            ReloadedBy::KeptRule(key) => format!("{key} (kept an always-rule)"),
            ReloadedBy::Signal => "SIGHUP".to_owned(),
        }
    }
}

/// A `policy/reload` or `policy/reload-failed` record as a replay reads it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyReload {
    /// [`POLICY_RELOAD`] or [`POLICY_RELOAD_FAILED`].
    pub event: String,
    /// Milliseconds since the Unix epoch.
    pub ts_ms: u64,
    /// The policy file, absolute.
    pub policy_path: String,
    /// The sha256 of the bytes now in force (a reload that took).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_sha256: Option<String>,
    /// How many rules the file holds (a reload that took).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<usize>,
    /// Who reloaded: [`ReloadedBy::name`].
    pub by: String,
    /// Why the reload failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PolicyReload {
    /// The record in words: `policy reloaded by key p: /p/ask.json (sha256
    /// 1a2b3c4d…), 3 rules`, or why it was not.
    pub fn describe(&self) -> String {
        match (&self.error, &self.policy_sha256) {
            (Some(error), _) => format!(
                "policy reload by {} failed, the policy before stayed in force: {error}",
                self.by
            ),
            (None, sha) => format!(
                "policy reloaded by {}: {} (sha256 {}…), {} rules",
                self.by,
                self.policy_path,
                sha.as_deref().map_or("unreadable", |s| &s[..s.len().min(12)]),
                self.rules.unwrap_or_default()
            ),
        }
    }
}

/// The `event` of a tool's declaration.
pub const TOOL_DECLARED: &str = "tool/declared";

/// A tool's declaration as the calls of one scope saw it, written before
/// its first call there (and again when it changed): what a replay checks
/// the recorded calls against.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeclaredLine {
    /// Always [`TOOL_DECLARED`].
    #[serde(skip_deserializing, default = "declared_event")]
    pub event: &'static str,
    /// Milliseconds since the Unix epoch.
    pub ts_ms: u64,
    /// The scope the calls ran in; left out for the global scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<tether_tools::journal::JournalScope>,
    /// The tool.
    pub name: String,
    /// Its description.
    #[serde(default)]
    pub description: String,
    /// Its parameter schema.
    pub parameters: Value,
    /// Its concurrency rule (`"always"`, `"never"`, `{"pointer", "equals"}`);
    /// `null` when the console no longer knew it.
    #[serde(default)]
    pub concurrency: Option<Value>,
}

fn declared_event() -> &'static str {
    TOOL_DECLARED
}

/// One `tool/result` line as the console writes it: the engine's fields,
/// then the decision's.
#[derive(Serialize)]
pub(super) struct ResultLine<'a> {
    pub event: &'static str,
    pub ts_ms: u64,
    pub batch: u64,
    pub index: usize,
    pub call_id: &'a str,
    pub name: &'a str,
    pub code: Option<ToolFailureCode>,
    pub value: &'a Value,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The policy in force when the call's batch began.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_sha256: Option<&'a str>,
}

/// One `tool/call` line as the console writes it: the engine's
/// [`tether_tools::journal::CallRecord`], field for field, written from
/// the declared call without copying it.
#[derive(Serialize)]
pub(super) struct CallLine<'a> {
    pub event: &'static str,
    pub ts_ms: u64,
    pub batch: u64,
    pub index: usize,
    pub total: usize,
    pub mode: tether_tools::ToolExecutionMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeLine<'a>>,
    pub call_id: &'a str,
    pub name: &'a str,
    pub arguments: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invocation_context: Option<&'a Value>,
}

/// [`tether_tools::journal::JournalScope`], borrowed.
#[derive(Serialize)]
pub(super) struct ScopeLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<&'a str>,
}
