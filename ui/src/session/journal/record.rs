//! The console's journal records beyond the engine's `tool/call` and
//! `tool/result`: the header each run starts with, and what decided each
//! call, written on its `tool/result` line (docs/journal.md lists every
//! field). Everything added is optional when read, so a journal written
//! before these records replays as it did.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tether_tools::{ToolExecutionOutcome, ToolFailureCode};

use crate::files::policy::{HELD_DENIED, UNPINNED_ASKS};
use crate::session::provenance::{ReviewVerdict, TrailEntry, reviewer_decider};

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

/// Who decided a call and how, as its `tool/result` line records it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The decider: `rule:<id>`, `guard:<id>`, `always-rule: <rule>`,
    /// `human@<console>`, `script`, `timeout`, `no-answerer`, `schema`,
    /// `registry`, `body`, `policy` or `cancelled`.
    pub decided_by: String,
    /// The stage that decided: `pre-execute`, `approval`, `guard`,
    /// `execute`, `post-execute`, `arguments`, `registry` or `batch`.
    pub stage: String,
    /// The id of the policy rule that decided (pre-execute, guard, execute
    /// deadline, post-execute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The id of the pre-execute rule that asked for a human.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// Whether `rule` or `asked_by` is one of Tether's implicit MCP rules
    /// rather than a rule of the policy file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub implicit_rule: bool,
    /// The always-rule that answered the approval (or that the human added
    /// while answering it), in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_rule: Option<String>,
    /// The console whose human answered (`main`, `attach 2 (pts/5)`;
    /// `script` for a scripted answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// The human's answer, `approved` or `rejected`, even when a later stage
    /// decided the outcome (a guard vetoing an approved call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The arguments the human approved in place of the model's (`answer`
    /// is then `approved with edits`); the `tool/call` line keeps the
    /// model's, so the journal holds both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_arguments: Option<Value>,
    /// The reason the human typed when rejecting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long the call waited for its approval, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    /// The reviewer a `review` rule sent the call to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// What it made of the call: `allow`, `deny`, `ask` (the human was
    /// asked) or `failed` (the human was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// The reviewer's reason, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_reason: Option<String>,
    /// How long the review took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_ms: Option<u64>,
    /// How many calls of its batch the human's one answer was for, when
    /// they were answered at once (`Y` / `N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_of: Option<usize>,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Decision {
    /// What decided `outcome`, from its trail. A call that timed out waits
    /// `approval_timeout`, which the trail does not hold.
    pub fn of(outcome: &ToolExecutionOutcome, trail: &[TrailEntry], approval_timeout: Option<Duration>) -> Self {
        let mut decision = Decision::default();
        let mut human = None;
        let mut always = None;
        let mut routed = None;
        let mut reviewed = None;
        for entry in trail {
            match entry {
                TrailEntry::PreRule { id, action: "ask" } => decision.asked_by = Some(id.to_string()),
                TrailEntry::PreRule { id, action: "review" } => routed = Some(id.to_string()),
                TrailEntry::Reviewed {
                    reviewer,
                    verdict,
                    reason,
                    elapsed,
                } => {
                    decision.reviewer = Some(reviewer.to_string());
                    decision.review = Some(verdict.as_str().to_owned());
                    decision.review_reason = Some(reason.clone());
                    decision.review_ms = Some(millis(*elapsed));
                    reviewed = Some((reviewer_decider(reviewer), *verdict));
                }
                TrailEntry::Human {
                    approved,
                    reason,
                    by,
                    waited,
                } => {
                    decision.answered_by = Some(by.to_string());
                    decision.answer = Some(if *approved { "approved" } else { "rejected" }.to_owned());
                    decision.reason.clone_from(reason);
                    decision.waited_ms = Some(millis(*waited));
                    human = Some(crate::session::provenance::answered_at(by));
                }
                TrailEntry::AnsweredInGroup { of } => decision.group_of = Some(*of),
                TrailEntry::Edited { to, .. } => {
                    decision.answer = Some("approved with edits".to_owned());
                    decision.edited_arguments = Some(Value::clone(to));
                }
                TrailEntry::AlwaysRule { rule } => {
                    decision.always_rule = Some(rule.describe());
                    decision.answer = Some("approved".to_owned());
                    // A rule the human added while answering: the wait was the human's.
                    decision.waited_ms.get_or_insert(0);
                    always = Some(format!("always-rule: {}", rule.short()));
                }
                _ => {}
            }
        }
        let find = |pick: &dyn Fn(&TrailEntry) -> Option<String>| trail.iter().find_map(pick);
        let pre = |wanted: &'static str| {
            find(&move |e| match e {
                TrailEntry::PreRule { id, action } if *action == wanted => Some(id.to_string()),
                _ => None,
            })
        };
        let post = |wanted: &'static str| {
            find(&move |e| match e {
                TrailEntry::PostRule { id, action } if *action == wanted => Some(id.to_string()),
                _ => None,
            })
        };
        let answered = human.or(always);
        // A reviewer that sent the call on: the rule that routed it asked.
        if matches!(reviewed, Some((_, ReviewVerdict::Ask | ReviewVerdict::Failed))) {
            decision.asked_by.clone_from(&routed);
        }
        let reviewer = |wanted: ReviewVerdict| {
            reviewed
                .clone()
                .filter(|(_, verdict)| *verdict == wanted)
                .map(|(by, _)| (by, "review".to_owned(), routed.clone()))
        };
        let by_rule = |stage: &str, id: String| (format!("rule:{id}"), stage.to_owned(), Some(id));
        let plain = |by: &str, stage: &str| (by.to_owned(), stage.to_owned(), None);
        let (decided_by, stage, rule) = match outcome.code() {
            None => match (post("replace"), answered, pre("allow")) {
                (Some(id), _, _) => by_rule("post-execute", id),
                (None, Some(by), _) => (by, "approval".to_owned(), None),
                (None, None, allowed) => match (reviewer(ReviewVerdict::Allow), allowed) {
                    (Some(by), _) => by,
                    (None, Some(id)) => by_rule("pre-execute", id),
                    (None, None) => plain("body", "execute"),
                },
            },
            Some(ToolFailureCode::Denied) => {
                let guard = find(&|e| match e {
                    TrailEntry::GuardVeto { id, .. } => Some(id.to_string()),
                    _ => None,
                });
                match (pre("deny"), guard, reviewer(ReviewVerdict::Deny), answered) {
                    (Some(id), ..) => by_rule("pre-execute", id),
                    (None, Some(id), ..) => (format!("guard:{id}"), "guard".to_owned(), Some(id)),
                    (None, None, Some(by), _) => by,
                    (None, None, None, Some(by)) => (by, "approval".to_owned(), None),
                    (None, None, None, None) => plain("policy", "pre-execute"),
                }
            }
            Some(ToolFailureCode::Unavailable) if trail.contains(&TrailEntry::ApprovalTimedOut) => {
                decision.waited_ms = approval_timeout.map(millis);
                plain("timeout", "approval")
            }
            Some(ToolFailureCode::Unavailable) => plain("no-answerer", "approval"),
            Some(ToolFailureCode::InvalidArgs) => plain("schema", "arguments"),
            Some(ToolFailureCode::UnknownTool) => plain("registry", "registry"),
            Some(ToolFailureCode::ToolError) => plain("body", "execute"),
            Some(ToolFailureCode::Blocked) => match post("block") {
                Some(id) => by_rule("post-execute", id),
                None => plain("policy", "post-execute"),
            },
            Some(ToolFailureCode::Aborted) => match find(&|e| match e {
                TrailEntry::Deadline { id, fired: true, .. } => Some(id.to_string()),
                _ => None,
            }) {
                Some(id) => by_rule("execute", id),
                None => plain("cancelled", "execute"),
            },
            Some(ToolFailureCode::AbortedBeforeDispatch) => plain("cancelled", "batch"),
        };
        decision.implicit_rule = [&rule, &decision.asked_by]
            .into_iter()
            .flatten()
            .any(|id| id == HELD_DENIED || id == UNPINNED_ASKS);
        decision.decided_by = decided_by;
        decision.stage = stage;
        decision.rule = rule;
        decision
    }

    /// The decision a `tool/result` line recorded, read from the fields it
    /// holds beyond the engine's; `None` for a journal written before
    /// decisions were recorded.
    pub fn recorded(fields: &Map<String, Value>) -> Option<Self> {
        fields.get("decided_by")?;
        serde_json::from_value(Value::Object(fields.clone())).ok()
    }

    /// Whether `filter` names this decider: the whole of it (`rule:ask-all`)
    /// or its kind (`human`, `rule`, `guard`, `always-rule`), case-insensitively.
    pub fn decider_matches(decided_by: &str, filter: &str) -> bool {
        let decider = decided_by.to_ascii_lowercase();
        let filter = filter.to_ascii_lowercase();
        decider == filter
            || decider
                .strip_prefix(&filter)
                .is_some_and(|rest| rest.starts_with(['@', ':']))
    }
}

/// The `event` of a policy reload that took.
pub const POLICY_RELOAD: &str = "policy/reload";
/// The `event` of a policy reload that failed (the old policy stays).
pub const POLICY_RELOAD_FAILED: &str = "policy/reload-failed";

/// Who reloaded the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReloadedBy {
    /// The `R` key at a console.
    Key,
    /// `s` at the approve-always dialog: the rule was kept in the policy
    /// file, which was read again.
    KeptRule,
    /// SIGHUP to a headless `tether serve`.
    Signal,
}

impl ReloadedBy {
    /// As the record's `by` says it: `key R`, `s (kept an always-rule)`, `SIGHUP`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReloadedBy::Key => "key R",
            ReloadedBy::KeptRule => "s (kept an always-rule)",
            ReloadedBy::Signal => "SIGHUP",
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
    /// Who reloaded: [`ReloadedBy::as_str`].
    pub by: String,
    /// Why the reload failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PolicyReload {
    /// The record in words: `policy reloaded by key R: /p/ask.json (sha256
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn failed(code: ToolFailureCode) -> ToolExecutionOutcome {
        ToolExecutionOutcome::from_parts("c", "t", Err((code, "no".to_owned())))
    }

    #[test]
    fn an_implicit_mcp_rule_is_named_and_marked_implicit() {
        let held = [TrailEntry::PreRule {
            id: Arc::from(HELD_DENIED),
            action: "deny",
        }];
        let decision = Decision::of(&failed(ToolFailureCode::Denied), &held, None);
        assert_eq!(decision.decided_by, format!("rule:{HELD_DENIED}"));
        assert_eq!((decision.stage.as_str(), decision.implicit_rule), ("pre-execute", true));
        let asked = [TrailEntry::PreRule {
            id: Arc::from(UNPINNED_ASKS),
            action: "ask",
        }];
        let decision = Decision::of(&failed(ToolFailureCode::Unavailable), &asked, None);
        assert_eq!(decision.decided_by, "no-answerer");
        assert_eq!(decision.asked_by.as_deref(), Some(UNPINNED_ASKS));
        assert!(decision.implicit_rule);
        let own = [TrailEntry::PreRule {
            id: Arc::from("mine"),
            action: "deny",
        }];
        assert!(!Decision::of(&failed(ToolFailureCode::Denied), &own, None).implicit_rule);
    }

    #[test]
    fn a_fired_deadline_and_a_schema_each_name_their_stage() {
        let deadline = [TrailEntry::Deadline {
            id: Arc::from("slow"),
            ms: 10,
            fired: true,
        }];
        let decision = Decision::of(&failed(ToolFailureCode::Aborted), &deadline, None);
        assert_eq!(
            (
                decision.decided_by.as_str(),
                decision.stage.as_str(),
                decision.rule.as_deref()
            ),
            ("rule:slow", "execute", Some("slow"))
        );
        let decision = Decision::of(&failed(ToolFailureCode::InvalidArgs), &[], None);
        assert_eq!(
            (decision.decided_by.as_str(), decision.stage.as_str()),
            ("schema", "arguments")
        );
    }

    #[test]
    fn every_human_decided_record_carries_the_real_wait() {
        let waited = Duration::from_millis(31_250);
        let human = |approved| TrailEntry::Human {
            approved,
            reason: None,
            by: Arc::from("main"),
            waited,
        };
        let rule = Arc::new(crate::session::always::AlwaysRule {
            tool: "Bash".into(),
            scope_id: Some(1),
            scope_label: "lab".into(),
            session_id: None,
            fit: crate::session::always::Fit::WholeTool,
            agent_type: None,
        });
        let ok = ToolExecutionOutcome::from_parts("c", "t", Ok(Value::Null));
        let answers: [(&str, ToolExecutionOutcome, Vec<TrailEntry>); 3] = [
            ("approve", ok.clone(), vec![human(true)]),
            ("reject", failed(ToolFailureCode::Denied), vec![human(false)]),
            (
                "approve always",
                ok.clone(),
                vec![
                    human(true),
                    TrailEntry::AlwaysRule {
                        rule: Arc::clone(&rule),
                    },
                ],
            ),
        ];
        for (answer, outcome, trail) in answers {
            let decision = Decision::of(&outcome, &trail, None);
            assert_eq!(decision.decided_by, "human@main", "{answer}");
            assert_eq!(decision.waited_ms, Some(31_250), "{answer}: {decision:?}");
        }
        // An always-rule that answered on its own kept the call from waiting.
        let decision = Decision::of(&ok, &[TrailEntry::AlwaysRule { rule }], None);
        assert_eq!(decision.waited_ms, Some(0));
    }

    #[test]
    fn a_decider_filter_names_the_whole_decider_or_its_kind() {
        assert!(Decision::decider_matches("human@main", "human"));
        assert!(Decision::decider_matches("human@attach 2 (pts/5)", "human"));
        assert!(Decision::decider_matches("rule:ask-all", "rule"));
        assert!(Decision::decider_matches("rule:ask-all", "rule:ask-all"));
        assert!(Decision::decider_matches("always-rule: git status …", "always-rule"));
        assert!(!Decision::decider_matches("always-rule: git status …", "rule"));
        assert!(!Decision::decider_matches("rule:ask-all", "rule:ask"));
        assert!(!Decision::decider_matches("script", "human"));
    }
}
