//! The answers each agent honours, as observed with Claude Code 2.1.197 and
//! Codex 0.171.0 (the cases are in `ui/tests/hooks_real_agents.rs`):
//!
//! | | Claude Code | Codex |
//! |---|---|---|
//! | PreToolUse allow | `permissionDecision: "allow"` | `{}` (`allow` without `updatedInput` is "unsupported" and fails open) |
//! | PreToolUse allow, edited | `permissionDecision: "allow"` + `updatedInput` (the tool runs the edited input) | the same |
//! | PermissionRequest allow, edited | not offered (`e` says why); an edit that gets here is denied | the same (`updatedInput` there is "unsupported") |
//! | PreToolUse deny | `permissionDecision: "deny"` + reason | the same, the reason non-empty (an empty one fails open) |
//! | PermissionRequest | `decision.behavior` allow / deny + `message` | the same |
//! | PostToolUse withhold | `updatedToolOutput` in the shape of the received `tool_response` (`decision: "block"` still shows the model the output) | `{"decision": "block", "reason"}` (replaces the output) |
//! | input we cannot read | exit 2, the reason on stderr (both agents block on it) | the same |

use serde_json::{Value, json};

use super::{Bridge, Fallback, HookEvent, replace};
use crate::agents::link::protocol::APPROVALS_NEEDED;

/// What the console's answer means, whoever asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run the tool (pre) or let the model see the result (post); says what decided.
    Allow(String),
    /// Run the tool on the approver's edited input, not the model's
    /// (approved with edits, issue 34); says what decided.
    AllowEdited(String, Value),
    /// Refuse the tool (pre) or withhold its result (post), with the reason.
    Deny(String),
    /// The console could not decide; why, in words for the model.
    Undecided(String),
}

impl Verdict {
    /// The console's `hook/tool_use` reply for `event`.
    pub fn from_reply(event: HookEvent, reply: &Value) -> Self {
        let message = reply["message"].as_str().unwrap_or_default().to_owned();
        let decided = reply["decided_by"].as_str().unwrap_or("tether");
        match (event, reply["code"].as_str()) {
            (HookEvent::PreToolUse | HookEvent::PermissionRequest, None) if reply["updated_input"].is_object() => {
                Verdict::AllowEdited(decided.to_owned(), reply["updated_input"].clone())
            }
            (_, None) => Verdict::Allow(decided.to_owned()),
            (HookEvent::PostToolUse, Some("BLOCKED")) => Verdict::Deny(message),
            (HookEvent::PreToolUse | HookEvent::PermissionRequest, Some("DENIED")) => Verdict::Deny(message),
            // A call its rule gives to several people is never handed to the
            // agent's own dialog, where one person would run it.
            (HookEvent::PreToolUse | HookEvent::PermissionRequest, Some(code))
                if reply[APPROVALS_NEEDED].as_u64().is_some_and(|n| n > 1) =>
            {
                Verdict::Deny(format!(
                    "Tether could not decide ({code}: {message}); the rule needs {} approvals, \
                     so the agent's own one-person prompt is not offered",
                    reply[APPROVALS_NEEDED]
                ))
            }
            (_, Some(code)) => Verdict::Undecided(format!("Tether could not decide ({code}: {message})")),
        }
    }
}

/// What the bridge prints and the status it exits with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub stdout: Option<Value>,
    pub stderr: Option<String>,
    pub exit: u8,
}

impl Answer {
    fn json(value: Value) -> Self {
        Self {
            stdout: Some(value),
            stderr: None,
            exit: 0,
        }
    }

    /// No decision: for events the bridge does not judge.
    pub fn nothing() -> Self {
        Self::json(json!({}))
    }

    /// Input the bridge cannot read: exit status 2 with the reason on
    /// stderr is a block for every event of both agents, and needs no
    /// knowledge of which event it was.
    pub fn unreadable(why: &str) -> Self {
        Self {
            stdout: None,
            stderr: Some(format!("Tether refused the call: {why}")),
            exit: 2,
        }
    }
}

/// A deny reason both agents accept: Codex ignores a deny without one.
fn non_empty(reason: String) -> String {
    if reason.trim().is_empty() {
        "denied by Tether".to_owned()
    } else {
        reason
    }
}

fn pre(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }})
}

/// Why an edited approval is refused where the agent cannot run it.
const CANNOT_RUN_EDITS: &str = "Tether's approver edited the arguments, and a PermissionRequest answer cannot carry \
     edited arguments: refused rather than run as the model wrote them";

fn pre_edited(by: &str, input: Value) -> Value {
    let mut answer = pre("allow", &format!("allowed by Tether ({by}, with edits)"));
    answer["hookSpecificOutput"]["updatedInput"] = input;
    answer
}

fn permission(allow: Option<&str>) -> Value {
    let decision = match allow {
        None => json!({"behavior": "allow"}),
        Some(message) => json!({"behavior": "deny", "message": message}),
    };
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
}

/// The agent's answer for `verdict` on `event`; `input` is the hook input
/// (a withheld Claude Code result is rebuilt from its `tool_response`).
pub fn render(bridge: Bridge, event: HookEvent, input: &Value, verdict: Verdict) -> Answer {
    let verdict = match (verdict, bridge.fallback()) {
        (Verdict::Undecided(why), Fallback::Deny) => Verdict::Deny(why),
        (verdict, _) => verdict,
    };
    let claude = matches!(bridge, Bridge::ClaudeCode(_));
    let value = match (event, verdict) {
        (HookEvent::PreToolUse, Verdict::Allow(by)) if claude => pre("allow", &format!("allowed by Tether ({by})")),
        (HookEvent::PreToolUse, Verdict::Allow(_)) => json!({}),
        (HookEvent::PreToolUse, Verdict::AllowEdited(by, input)) => pre_edited(&by, input),
        // The console does not offer edits here; one that arrives anyway is
        // refused, never run as the model wrote it.
        (HookEvent::PermissionRequest, Verdict::AllowEdited(..)) => permission(Some(CANNOT_RUN_EDITS)),
        (HookEvent::PostToolUse, Verdict::AllowEdited(..)) => json!({}),
        (HookEvent::PreToolUse, Verdict::Deny(reason)) => pre("deny", &non_empty(reason)),
        // Only Claude Code gets here: Codex's fallback is always deny.
        (HookEvent::PreToolUse, Verdict::Undecided(why)) => pre("ask", &why),
        (HookEvent::PermissionRequest, Verdict::Allow(_)) => permission(None),
        (HookEvent::PermissionRequest, Verdict::Deny(reason)) => permission(Some(&non_empty(reason))),
        // No decision: Claude Code shows its own dialog.
        (HookEvent::PermissionRequest, Verdict::Undecided(_)) => json!({}),
        (HookEvent::PostToolUse, Verdict::Allow(_) | Verdict::Undecided(_)) => json!({}),
        (HookEvent::PostToolUse, Verdict::Deny(reason)) if claude => {
            let tool = input["tool_name"].as_str().unwrap_or_default();
            replace::claude_code(tool, input.get("tool_response"), &non_empty(reason))
        }
        (HookEvent::PostToolUse, Verdict::Deny(reason)) => json!({"decision": "block", "reason": non_empty(reason)}),
    };
    Answer::json(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_never_gets_allow_or_ask_and_never_an_empty_reason() {
        let input = json!({"tool_name": "Bash"});
        let allow = render(
            Bridge::Codex,
            HookEvent::PreToolUse,
            &input,
            Verdict::Allow("body".into()),
        );
        assert_eq!(allow.stdout, Some(json!({})));
        let undecided = render(
            Bridge::Codex,
            HookEvent::PreToolUse,
            &input,
            Verdict::Undecided("down".into()),
        );
        assert_eq!(undecided.stdout, Some(pre("deny", "down")));
        let empty = render(
            Bridge::Codex,
            HookEvent::PreToolUse,
            &input,
            Verdict::Deny(String::new()),
        );
        assert_eq!(empty.stdout, Some(pre("deny", "denied by Tether")));
    }

    #[test]
    fn claude_code_falls_back_to_deny_unless_told_to_ask() {
        let input = json!({"tool_name": "Bash"});
        let why = || Verdict::Undecided("down".into());
        let deny = render(Bridge::ClaudeCode(Fallback::Deny), HookEvent::PreToolUse, &input, why());
        assert_eq!(deny.stdout, Some(pre("deny", "down")));
        let ask = render(Bridge::ClaudeCode(Fallback::Ask), HookEvent::PreToolUse, &input, why());
        assert_eq!(ask.stdout, Some(pre("ask", "down")));
    }

    #[test]
    fn a_call_that_needs_two_approvals_is_never_handed_to_the_agents_own_prompt() {
        let input = json!({"tool_name": "Bash"});
        let unanswered = json!({"code": "UNAVAILABLE", "message": "approval timed out: 1 of 2 approvals",
                                "decided_by": "timeout", "approvals_needed": 2});
        for event in [HookEvent::PreToolUse, HookEvent::PermissionRequest] {
            let verdict = Verdict::from_reply(event, &unanswered);
            assert!(
                matches!(&verdict, Verdict::Deny(why) if why.contains("needs 2 approvals")),
                "{verdict:?}"
            );
            let answer = render(Bridge::ClaudeCode(Fallback::Ask), event, &input, verdict);
            let out = answer.stdout.unwrap_or_default().to_string();
            assert!(!out.contains("\"ask\""), "{out}");
        }
        // One approval needed: the user's fallback stands.
        let single = json!({"code": "UNAVAILABLE", "message": "nobody", "decided_by": "timeout"});
        let verdict = Verdict::from_reply(HookEvent::PreToolUse, &single);
        assert!(matches!(verdict, Verdict::Undecided(_)), "{verdict:?}");
    }

    #[test]
    fn an_edited_approval_is_updated_input_at_pre_tool_use_and_refused_at_permission_request() {
        let input = json!({"tool_name": "Bash"});
        let reply = json!({"code": null, "decided_by": "human", "updated_input": {"command": "ls"}});
        for bridge in [Bridge::ClaudeCode(Fallback::Deny), Bridge::Codex] {
            let pre_verdict = Verdict::from_reply(HookEvent::PreToolUse, &reply);
            let answer = render(bridge, HookEvent::PreToolUse, &input, pre_verdict);
            let mut expected = pre("allow", "allowed by Tether (human, with edits)");
            expected["hookSpecificOutput"]["updatedInput"] = json!({"command": "ls"});
            assert_eq!(answer.stdout, Some(expected), "{bridge:?}");
            let verdict = Verdict::from_reply(HookEvent::PermissionRequest, &reply);
            let answer = render(bridge, HookEvent::PermissionRequest, &input, verdict);
            assert_eq!(answer.stdout, Some(permission(Some(CANNOT_RUN_EDITS))), "{bridge:?}");
        }
    }
}
