//! Tests of the parent module.

use std::sync::Arc;

use tether_tools::{AgentPipelineScope, ToolCall, ToolExecution};

use super::closing::why_dropped;
use super::*;
use crate::session::events::PromptReply;

fn waiting(scope: Option<AgentPipelineScope>, cancellation: &CancellationToken) -> ToolExecution {
    ToolExecution::new(&ToolCall::new("c1", "poke", "{}"), scope, cancellation.clone())
}

#[test]
fn a_prompt_closed_unanswered_says_why() {
    let connection = CancellationToken::new();
    let session = AgentPipelineScope::builder()
        .label("agent0")
        .session(Arc::new(AgentConnection {
            closed: connection.clone(),
        }))
        .build_root();
    let batch = connection.child_token();
    let call = waiting(Some(session.child()), &batch);
    assert_eq!(
        why_dropped(&call),
        "the call stopped waiting (the answerer was replaced)"
    );
    batch.cancel();
    assert_eq!(why_dropped(&call), "its batch was cancelled");
    connection.cancel();
    assert_eq!(
        why_dropped(&call),
        "agent agent0 disconnected",
        "seen from a child scope too"
    );
    let replayed = CancellationToken::new();
    replayed.cancel();
    assert_eq!(why_dropped(&waiting(None, &replayed)), "its batch was cancelled");
}

#[test]
fn a_timeout_is_said_in_seconds_or_milliseconds() {
    assert_eq!(span(Duration::from_secs(60)), "60 s");
    assert_eq!(span(Duration::from_millis(250)), "250 ms");
    assert_eq!(span(Duration::from_millis(1500)), "1500 ms");
}

/// A notify command's `approval/closed` says what the journal says: an
/// approval of edited arguments is not a plain approval.
#[test]
fn an_edited_approval_closes_as_approved_with_edits() {
    let edited = PromptReply::ApproveEdited {
        arguments: serde_json::json!({"command": "ls"}),
    };
    assert_eq!(outcome_word(&edited), "approved with edits");
    assert_eq!(outcome_word(&PromptReply::Approve), "approved");
}

mod two_person {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use crate::session::events::{AppEvent, AppEventSender, PromptReply, Refused};
    use crate::session::replay::{CallReport, Session};

    fn document(name: &str, text: &Value) -> crate::files::source::Document {
        crate::files::source::Document::parse(name.into(), text.to_string()).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// A session whose policy asks every `poke`, `approvals` needed.
    fn session(approvals: u8) -> Session {
        let scenario = crate::files::scenario::Scenario::from_document(&document(
            "s.json",
            &json!({
                "tools": [{"name": "poke", "body": {"return": 7}}],
                "batches": [{"calls": [{"id": "c1", "name": "poke", "arguments": "{}"}]}]
            }),
        ))
        .unwrap_or_else(|e| panic!("{e:?}"));
        let policy = crate::files::policy::Policy::from_document(&document(
            "p.json",
            &json!({"rules": [{"id": "two", "stage": "pre-execute", "match": {"tool": "poke"},
                "action": {"type": "ask", "approvals": approvals}}]}),
        ))
        .unwrap_or_else(|e| panic!("{e:?}"));
        Session::new(scenario, Some(&policy)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Runs the one call with the console's answerer; `answer` is given
    /// each prompt as it arrives (its number, from 0) and answers it.
    async fn run(
        session: &Session,
        always: crate::session::always::AlwaysRules,
        answer: impl Fn(usize, &crate::session::events::ApprovalPrompt) + Send + 'static,
    ) -> (CallReport, Vec<String>) {
        run_within(session, always, std::time::Duration::from_secs(30), answer).await
    }

    async fn run_within(
        session: &Session,
        always: crate::session::always::AlwaysRules,
        timeout: std::time::Duration,
        answer: impl Fn(usize, &crate::session::events::ApprovalPrompt) + Send + 'static,
    ) -> (CallReport, Vec<String>) {
        let (events, mut receiver) = AppEventSender::new();
        let answerer = session.registry.set_approval_answerer(super::ConsoleAnswerer {
            events,
            timeout,
            always,
            log: session.log.clone(),
            registry: session.registry.clone(),
            notify: None,
            waiting: super::Waiting::default(),
            escalation: Default::default(),
        });
        let said = Arc::new(std::sync::Mutex::new(Vec::new()));
        let heard = Arc::clone(&said);
        let listener = tokio::spawn(async move {
            let mut asked = 0;
            while let Some(batch) = receiver.recv_many().await {
                for event in batch {
                    match event {
                        AppEvent::ApprovalRequested(prompt) => {
                            let line = prompt.reply.approvers().line().unwrap_or_default();
                            heard.lock().unwrap_or_else(|e| e.into_inner()).push(line);
                            answer(asked, &prompt);
                            asked += 1;
                        }
                        AppEvent::ApprovalAnswered { by, answer, .. } => {
                            heard
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push(format!("{answer} by {by}"));
                        }
                        _ => {}
                    }
                }
            }
        });
        let report = session.run_batch(0, None).await.remove(0);
        // Every event the answerer sent is heard once it is gone.
        drop(answerer);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), listener).await;
        let said = said.lock().unwrap_or_else(|e| e.into_inner()).clone();
        (report, said)
    }

    fn by(name: &str) -> Arc<str> {
        Arc::from(name)
    }

    #[tokio::test]
    async fn a_call_needing_two_approvals_runs_only_after_two_distinct_answerers_approve() {
        let session = session(2);
        let (report, said) = run(&session, Default::default(), |asked, prompt| {
            let slot = &prompt.reply;
            match asked {
                0 => assert_eq!(slot.answer(PromptReply::Approve, &by("main")), Ok(())),
                _ => {
                    // The same answerer again, a rule, an edit: none is taken,
                    // and the call still waits for another answerer.
                    assert_eq!(
                        slot.answer(PromptReply::Approve, &by("main")),
                        Err(Refused::ApprovedAlready { needed: 2 })
                    );
                    assert_eq!(
                        slot.answer_in_group(PromptReply::Approve, &by("main"), 3),
                        Err(Refused::ApprovedAlready { needed: 2 })
                    );
                    let edited = PromptReply::ApproveEdited {
                        arguments: serde_json::json!({}),
                    };
                    assert_eq!(
                        slot.answer(edited, &by("web:phone")),
                        Err(Refused::OnlyPlainAnswers { needed: 2 })
                    );
                    assert_eq!(slot.answer(PromptReply::Approve, &by("web:phone")), Ok(()));
                }
            }
        })
        .await;
        assert_eq!(report.outcome.code(), None, "{:?}", report.outcome);
        assert_eq!(report.outcome.value(), &json!(7));
        assert_eq!(
            said,
            [
                "0 of 2 approvals: 2 distinct answerers must approve",
                "approved (1 of 2 approvals; asked again of another answerer) by main",
                "1 of 2 approvals: human@main",
                "approved by web:phone",
            ]
        );
        let decision = &report.decision;
        assert_eq!(decision.approvers, ["human@main", "human@web:phone"]);
        assert_eq!(decision.approvals_needed, Some(2));
        assert_eq!(
            (decision.decided_by.as_str(), decision.answer.as_deref()),
            ("human@web:phone", Some("approved"))
        );
    }

    #[tokio::test]
    async fn any_rejection_rejects_a_call_that_needs_several_approvals() {
        let session = session(3);
        let (report, _) = run(&session, Default::default(), |asked, prompt| {
            let reply = match asked {
                0 => PromptReply::Approve,
                _ => PromptReply::Reject {
                    reason: Some("not on a Friday".to_owned()),
                },
            };
            // The approver may also change their mind: a rejection counts.
            assert_eq!(prompt.reply.answer(reply, &by("main")), Ok(()));
        })
        .await;
        assert_eq!(
            report.outcome.code(),
            Some(tether_tools::ToolFailureCode::Denied),
            "{:?}",
            report.outcome
        );
        assert!(
            report
                .outcome
                .failure()
                .is_some_and(|f| f.message.contains("not on a Friday"))
        );
        let decision = &report.decision;
        assert_eq!(decision.approvers, ["human@main"]);
        assert_eq!(decision.answer.as_deref(), Some("rejected"));
        assert_eq!(decision.reason.as_deref(), Some("not on a Friday"));
    }

    /// An always-rule made from another call (or a wider one) never stands
    /// in for the people a two-person rule needs.
    #[tokio::test]
    async fn no_always_rule_answers_a_call_that_needs_two_approvals() {
        let session = session(2);
        let always = crate::session::always::AlwaysRules::default();
        let rule = crate::session::always::AlwaysRule {
            tool: "poke".into(),
            scope_id: None,
            scope_label: "global".into(),
            session_id: None,
            fit: crate::session::always::Fit::WholeTool,
            agent_type: None,
            anchor: Some(Arc::from("two")),
            agent: None,
            cwd: None,
        };
        always.lock().unwrap_or_else(|e| e.into_inner()).push(rule);
        let (report, said) = run(&session, always, |asked, prompt| {
            let who = ["main", "attach 2 (pts/5)"][asked.min(1)];
            assert_eq!(prompt.reply.answer(PromptReply::Approve, &by(who)), Ok(()));
        })
        .await;
        assert_eq!(said.len(), 4, "both people were asked: {said:?}");
        assert_eq!(report.decision.always_rule, None);
        assert_eq!(report.decision.approvers, ["human@main", "human@attach 2 (pts/5)"]);
    }

    /// A scripted `--answer approve` is one answerer at most: a call that
    /// needs two is not approved, and says why.
    #[tokio::test]
    async fn a_scripted_approval_alone_never_passes_a_two_person_rule() {
        let session = session(2);
        let _answerer = session.install_scripted_answerer(crate::files::scenario::NamedAnswer::Approve);
        let report = session.run_batch(0, None).await.remove(0);
        assert_eq!(report.outcome.code(), Some(tether_tools::ToolFailureCode::Unavailable));
        let message = report.outcome.failure().map(|f| f.message.clone()).unwrap_or_default();
        assert!(
            message.contains("needs 2 approvals") && message.contains("scripted answer counts as one at most"),
            "{message}"
        );
        assert_eq!(report.decision.decided_by, "no-answerer");
        assert_eq!(report.decision.answer.as_deref(), Some("1 of 2 approvals"));
        let one = self::session(1);
        let _answerer = one.install_scripted_answerer(crate::files::scenario::NamedAnswer::Approve);
        assert_eq!(
            one.run_batch(0, None).await.remove(0).outcome.code(),
            None,
            "one approval is the script's"
        );
    }

    /// One approval of two, then nobody: UNAVAILABLE when the time runs
    /// out, saying how many approved — never approved, never "rejected".
    #[tokio::test]
    async fn one_approval_of_two_then_the_deadline_is_unavailable() {
        let session = session(2);
        let (report, _) = run_within(
            &session,
            Default::default(),
            std::time::Duration::from_millis(300),
            |asked, prompt| {
                if asked == 0 {
                    assert_eq!(prompt.reply.answer(PromptReply::Approve, &by("main")), Ok(()));
                }
            },
        )
        .await;
        assert_eq!(report.outcome.code(), Some(tether_tools::ToolFailureCode::Unavailable));
        let message = report.outcome.failure().map(|f| f.message.clone()).unwrap_or_default();
        assert_eq!(
            message,
            "approval timed out: 1 of 2 approvals within 300 ms; no other answerer approved"
        );
        let decision = &report.decision;
        assert_eq!(decision.decided_by, "timeout");
        assert_eq!(decision.answer.as_deref(), Some("1 of 2 approvals"));
        assert_eq!(decision.approvers, ["human@main"]);
    }
}
