//! Tests of the parent module.

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
    let decision = Decision::of(&failed(ToolFailureCode::Denied), &held);
    assert_eq!(decision.decided_by, format!("rule:{HELD_DENIED}"));
    assert_eq!((decision.stage.as_str(), decision.implicit_rule), ("pre-execute", true));
    let asked = [TrailEntry::PreRule {
        id: Arc::from(UNPINNED_ASKS),
        action: "ask",
    }];
    let decision = Decision::of(&failed(ToolFailureCode::Unavailable), &asked);
    assert_eq!(decision.decided_by, "no-answerer");
    assert_eq!(decision.asked_by.as_deref(), Some(UNPINNED_ASKS));
    assert!(decision.implicit_rule);
    let own = [TrailEntry::PreRule {
        id: Arc::from("mine"),
        action: "deny",
    }];
    assert!(!Decision::of(&failed(ToolFailureCode::Denied), &own).implicit_rule);
}

#[test]
fn a_fired_deadline_and_a_schema_each_name_their_stage() {
    let deadline = [TrailEntry::Deadline {
        id: Arc::from("slow"),
        ms: 10,
        fired: true,
    }];
    let decision = Decision::of(&failed(ToolFailureCode::Aborted), &deadline);
    assert_eq!(
        (
            decision.decided_by.as_str(),
            decision.stage.as_str(),
            decision.rule.as_deref()
        ),
        ("rule:slow", "execute", Some("slow"))
    );
    let decision = Decision::of(&failed(ToolFailureCode::InvalidArgs), &[]);
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
        anchor: None,
        agent: None,
        cwd: None,
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
        let decision = Decision::of(&outcome, &trail);
        assert_eq!(decision.decided_by, "human@main", "{answer}");
        assert_eq!(decision.waited_ms, Some(31_250), "{answer}: {decision:?}");
    }
    // An always-rule that answered on its own kept the call from waiting.
    let decision = Decision::of(&ok, &[TrailEntry::AlwaysRule { rule }]);
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

#[test]
fn a_two_person_decision_lists_every_approver_and_counts_a_partial_approval() {
    let human = |by: &str, approved| TrailEntry::Human {
        approved,
        reason: None,
        by: Arc::from(by),
        waited: Duration::from_millis(5),
    };
    let needs = TrailEntry::NeedsApprovals { of: 2 };
    let ok = ToolExecutionOutcome::from_parts("c", "t", Ok(Value::Null));
    let both = [needs.clone(), human("main", true), human("web:phone", true)];
    let decision = Decision::of(&ok, &both);
    assert_eq!(decision.approvers, ["human@main", "human@web:phone"]);
    assert_eq!(decision.answer.as_deref(), Some("approved"));
    assert_eq!(decision.deciders(), "human@main + human@web:phone");
    let timed_out = TrailEntry::ApprovalTimedOut {
        waited: Duration::from_secs(5),
    };
    let one = [needs, human("main", true), timed_out];
    let decision = Decision::of(&failed(ToolFailureCode::Unavailable), &one);
    assert_eq!(decision.decided_by, "timeout");
    assert_eq!(
        decision.waited_ms,
        Some(5_000),
        "the whole wait, not the first approver's"
    );
    assert_eq!(decision.answer.as_deref(), Some("1 of 2 approvals"));
    assert_eq!(decision.deciders(), "timeout");
    // A call that needs one approval lists nobody: `answered_by` says it.
    let single = Decision::of(&ok, &[human("main", true)]);
    assert!(single.approvers.is_empty() && single.approvals_needed.is_none());
    let line = serde_json::to_value(&single).unwrap_or_default();
    assert!(line.get("approvers").is_none(), "{line}");
}

#[test]
fn a_timed_out_call_records_how_long_it_waited() {
    let trail = [
        TrailEntry::PreRule {
            id: Arc::from("quick"),
            action: "ask",
        },
        TrailEntry::ApprovalTimedOut {
            waited: Duration::from_millis(5_012),
        },
    ];
    let decision = Decision::of(&failed(ToolFailureCode::Unavailable), &trail);
    assert_eq!(
        (decision.decided_by.as_str(), decision.stage.as_str()),
        ("timeout", "approval")
    );
    assert_eq!(decision.asked_by.as_deref(), Some("quick"));
    assert_eq!(decision.waited_ms, Some(5_012));
}
