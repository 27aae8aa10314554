use std::time::{Duration, Instant};

use super::*;
use crate::session::events::{Answered, ApprovalPrompt, ReplySlot};
use crate::session::provenance::CallKey;

fn prompt(id: u64, agent: &str, arguments: &str) -> (ApprovalPrompt, tokio::sync::oneshot::Receiver<Answered>) {
    let (reply, answer) = ReplySlot::channel();
    let prompt = ApprovalPrompt {
        id,
        key: CallKey::from(tether_tools::ExecutionId::fresh()),
        tool: "write".into(),
        call_id: format!("c{id}"),
        scope_label: "agent".into(),
        scope_id: None,
        owner: None,
        agent: Some(agent.into()),
        reason: None,
        arguments: arguments.into(),
        validation: Ok(()),
        guard_veto: None,
        command_at: None,
        cwd: None,
        subagent: None,
        commands: Vec::new(),
        anchor: None,
        passed_over: Vec::new(),
        agent_name: None,
        deadline: Instant::now() + Duration::from_secs(60),
        editing: crate::session::events::Editing::checked(|_| Ok(())),
        asked_at: Instant::now(),
        reply,
    };
    (prompt, answer)
}

async fn paired() -> (Arc<Web>, Device) {
    let (events, _) = AppEventSender::new();
    let web = Web::new("http://127.0.0.1:1".into(), false, None, events).unwrap_or_else(|e| panic!("{e}"));
    let link = web.devices.new_link().unwrap_or_default();
    let (device, _) = web.devices.pair(&link, "phone").await.unwrap_or_else(|e| panic!("{e}"));
    (web, device)
}

fn requested(web: &Web, prompt: &ApprovalPrompt) {
    web.told(&AppEvent::ApprovalRequested(Box::new(prompt.clone())));
}

#[tokio::test]
async fn an_answer_is_taken_once_and_named_after_the_device() {
    let (web, device) = paired().await;
    let (p, answer) = prompt(1, "a", "{}");
    requested(&web, &p);
    let field = web.field(&web.waiting()[0], &device);
    assert_eq!(
        web.answer(&device, std::slice::from_ref(&field), &Verdict::Approve),
        Ok(1)
    );
    let answered = answer.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answered.reply, PromptReply::Approve);
    assert_eq!(&*answered.by, "web:phone");
    assert_eq!(
        web.answer(&device, &[field], &Verdict::Approve),
        Err(Refusal::Replayed),
        "the same POST again"
    );
}

#[tokio::test]
async fn a_page_left_open_after_the_terminal_answered_is_told_who_did() {
    let (web, device) = paired().await;
    let (p, _answer) = prompt(2, "a", "{}");
    requested(&web, &p);
    let field = web.field(&web.waiting()[0], &device);
    assert_eq!(p.reply.answer(PromptReply::Approve, &Arc::from("main")), Ok(()));
    let refused = Refusal::NoLongerWaiting("answered by main".into());
    assert_eq!(
        web.answer(&device, std::slice::from_ref(&field), &Verdict::Approve),
        Err(refused)
    );
    web.told(&AppEvent::ApprovalAnswered {
        id: 2,
        by: "main".into(),
        answer: "approved".into(),
    });
    assert_eq!(
        web.answer(&device, &[field], &Verdict::Approve),
        Err(Refusal::NoLongerWaiting("approved by main".into()))
    );
}

#[tokio::test]
async fn an_answer_bound_to_other_arguments_another_device_or_a_revoked_one_is_refused() {
    let (web, device) = paired().await;
    let (p, _answer) = prompt(3, "a", "{\"path\": \"a\"}");
    requested(&web, &p);
    let mut other = web.waiting()[0].clone();
    other.digest = binding::digest("{\"path\": \"b\"}");
    let forged = web.field(&other, &device);
    assert_eq!(web.answer(&device, &[forged], &Verdict::Approve), Err(Refusal::Changed));
    let mut late = web.waiting()[0].clone();
    late.deadline_ms += 1;
    let moved = web.field(&late, &device);
    assert_eq!(web.answer(&device, &[moved], &Verdict::Approve), Err(Refusal::Changed));
    let field = web.field(&web.waiting()[0], &device);
    let link = web.devices.new_link().unwrap_or_default();
    let (tablet, _) = web
        .devices
        .pair(&link, "tablet")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        web.answer(&tablet, std::slice::from_ref(&field), &Verdict::Approve),
        Err(Refusal::NotOurs),
        "shown to the phone"
    );
    assert!(web.revoke("phone", "test"));
    assert_eq!(
        web.answer(&device, &[field], &Verdict::Approve),
        Err(Refusal::NotPaired)
    );
}

#[tokio::test]
async fn an_expired_call_is_not_answered() {
    let (web, device) = paired().await;
    let (mut p, _answer) = prompt(4, "a", "{}");
    p.deadline = Instant::now();
    requested(&web, &p);
    let field = web.field(&web.waiting()[0], &device);
    assert_eq!(web.answer(&device, &[field], &Verdict::Approve), Err(Refusal::Expired));
}

#[tokio::test]
async fn a_group_answer_answers_each_call_shown_through_its_own_slot() {
    let (web, device) = paired().await;
    let (p5, a5) = prompt(5, "a", "{}");
    let (p6, a6) = prompt(6, "a", "{}");
    requested(&web, &p5);
    requested(&web, &p6);
    let fields: Vec<String> = web.waiting().iter().map(|s| web.field(s, &device)).collect();
    let verdict = Verdict::Reject {
        reason: Some("not now".into()),
    };
    assert_eq!(web.answer(&device, &fields, &verdict), Ok(2));
    for answer in [a5, a6] {
        let answered = answer.await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(answered.group, Some(2));
        assert_eq!(
            answered.reply,
            PromptReply::Reject {
                reason: Some("not now".into())
            }
        );
    }
}

#[test]
fn the_page_escapes_what_a_model_wrote_as_the_terminal_does_then_for_html() {
    assert_eq!(
        page::shown("<b>\u{202e}\u{1b}[2J&\"'"),
        "&lt;b&gt;\\u{202e}\\u{1b}[2J&amp;&quot;&#39;"
    );
}
