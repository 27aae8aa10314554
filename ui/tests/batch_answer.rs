//! Answering a batch at once (issue 34, item 3), keys in and answers out:
//! `Y` lists the waiting calls of the batch on screen and `Enter` approves
//! them; `N` takes one reason, `Ctrl+S` lists them, `Enter` rejects them
//! all. The list is fixed when shown: a call that starts waiting later is
//! not covered, and one that left the queue meanwhile is not answered again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod app_support;

use std::time::Instant;

use app_support::{key, request};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tether_console::session::events::Answered;
use tether_console::session::provenance::CallKey;
use tether_console::tui::app::{
    ANSWER_GUARD, App, AppEvent, GroupOf, GroupVerdict, HeaderInfo, Overlay, PromptReply, ScopeEntry, Stage,
};
use tether_tools::{ToolCall, ToolExecution, ToolExecutionMode, ToolRegistry};
use tokio::sync::oneshot;

fn shift(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT)
}

/// A console showing `batches`, each of `calls` calls of `write`.
struct Screen {
    app: App,
    executions: Vec<Vec<ToolExecution>>,
}

fn screen(batches: usize, calls: usize) -> Screen {
    let mut app = App::new(
        ToolRegistry::new(),
        vec![ScopeEntry::global()],
        HeaderInfo::default(),
        Instant::now(),
    );
    let mut executions = Vec::new();
    for batch in 0..batches {
        let list: Vec<(ToolCall, ToolExecutionMode)> = (0..calls)
            .map(|i| {
                (
                    ToolCall::new(format!("b{batch}c{i}"), "write", format!(r#"{{"path": "f{i}"}}"#)),
                    ToolExecutionMode::Parallel,
                )
            })
            .collect();
        executions.push(
            list.iter()
                .map(|(call, _)| ToolExecution::new(call, None, Default::default()))
                .collect(),
        );
        app.update(AppEvent::BatchStarted {
            batch,
            label: format!("step {batch}"),
            scope: None,
            scope_label: "global".into(),
            calls: list.into(),
            progress: None,
            max_parallelism: 4,
        });
    }
    Screen { app, executions }
}

impl Screen {
    /// Call `call` of `batch` starts waiting for a human (as the answerer
    /// says it: its stage, then the request).
    fn ask(&mut self, batch: usize, call: usize) -> oneshot::Receiver<Answered> {
        let execution = self.executions[batch][call].clone();
        let now = self.app.now;
        self.app.update(AppEvent::Stage {
            execution: execution.clone(),
            stage: Stage::AwaitingApproval,
            at: now,
        });
        let id = (batch * 100 + call + 1) as u64;
        let (mut prompt, receiver) = request(id, "write", execution.raw_arguments(), now);
        prompt.key = CallKey::of(&execution);
        prompt.call_id = execution.call_id().into();
        prompt.scope_label = "global".into();
        prompt.reason = Some("writes are asked".into());
        self.app.update(AppEvent::ApprovalRequested(Box::new(prompt)));
        self.app.tick(now + ANSWER_GUARD);
        receiver
    }
}

fn answered(receiver: &mut oneshot::Receiver<Answered>) -> Option<Answered> {
    receiver.try_recv().ok()
}

#[test]
fn y_lists_the_batchs_waiting_calls_and_enter_approves_exactly_those() {
    let mut screen = screen(2, 4);
    let mut first: Vec<_> = (0..3).map(|i| screen.ask(0, i)).collect();
    let mut other_batch = screen.ask(1, 0);
    screen.app.handle_key(shift('Y'));
    match &screen.app.overlay {
        Overlay::Group(group) => {
            assert_eq!((&group.of, group.ids.len()), (&GroupOf::Batch(0), 3), "{group:?}");
            assert_eq!(group.verdict, GroupVerdict::Approve);
        }
        other => panic!("no list: {other:?}"),
    }
    assert!(first.iter_mut().all(|r| answered(r).is_none()), "nothing before Enter");
    // A call of the same batch that starts waiting now is not on the list.
    let mut later = screen.ask(0, 3);
    screen.app.handle_key(key(KeyCode::Enter));
    for receiver in &mut first {
        let answer = answered(receiver).expect("each listed call is answered");
        assert_eq!((answer.reply, answer.group), (PromptReply::Approve, Some(3)));
    }
    assert!(
        answered(&mut later).is_none(),
        "a call that arrived later is not covered"
    );
    assert!(answered(&mut other_batch).is_none(), "another batch is not covered");
    assert_eq!(screen.app.prompts.len(), 2);
    assert!(matches!(screen.app.overlay, Overlay::None));
}

#[test]
fn n_takes_one_reason_and_ctrl_s_then_enter_rejects_every_listed_call_with_it() {
    let mut screen = screen(1, 3);
    let mut calls: Vec<_> = (0..3).map(|i| screen.ask(0, i)).collect();
    screen.app.handle_key(shift('N'));
    assert!(matches!(screen.app.overlay, Overlay::Reason(_)));
    for c in "not today".chars() {
        screen.app.handle_key(key(KeyCode::Char(c)));
    }
    screen
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    match &screen.app.overlay {
        Overlay::Group(group) => assert_eq!(
            group.verdict,
            GroupVerdict::Reject {
                reason: Some("not today".into())
            }
        ),
        other => panic!("no list after Ctrl+S: {other:?}"),
    }
    assert!(calls.iter_mut().all(|r| answered(r).is_none()), "nothing before Enter");
    screen.app.handle_key(key(KeyCode::Enter));
    for receiver in &mut calls {
        let answer = answered(receiver).unwrap();
        assert_eq!(
            (answer.reply, answer.group),
            (
                PromptReply::Reject {
                    reason: Some("not today".into())
                },
                Some(3)
            )
        );
    }
    assert!(screen.app.prompts.is_empty());
}

#[test]
fn a_listed_call_that_left_the_queue_meanwhile_is_not_answered_again() {
    let mut screen = screen(1, 3);
    let mut calls: Vec<_> = (0..3).map(|i| screen.ask(0, i)).collect();
    screen.app.handle_key(shift('Y'));
    // Another console answers the second call while the list is shown.
    let other: std::sync::Arc<str> = "attach 2 (pts/4)".into();
    let second = screen.app.prompts.get(2).unwrap().clone();
    second
        .reply
        .answer(PromptReply::Reject { reason: None }, &other)
        .unwrap();
    screen.app.update(AppEvent::ApprovalAnswered {
        id: 2,
        by: other,
        answer: "rejected".into(),
    });
    screen.app.handle_key(key(KeyCode::Enter));
    let replies: Vec<_> = calls.iter_mut().map(|r| answered(r).unwrap()).collect();
    assert_eq!(
        replies[1].reply,
        PromptReply::Reject { reason: None },
        "its first answer stands"
    );
    assert_eq!(replies[1].group, None);
    for i in [0, 2] {
        assert_eq!((&replies[i].reply, replies[i].group), (&PromptReply::Approve, Some(2)));
    }
    let notes: Vec<String> = screen.app.events.iter().map(|e| e.text.to_string()).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("2 calls of batch 1 approved by you (main) at once")),
        "{notes:#?}"
    );
}

#[test]
fn with_no_other_call_of_its_batch_waiting_y_and_n_say_so_and_answer_nothing() {
    let mut screen = screen(2, 1);
    let mut only = screen.ask(0, 0);
    let mut other_batch = screen.ask(1, 0);
    for c in ['Y', 'N'] {
        screen.app.handle_key(shift(c));
        assert!(matches!(screen.app.overlay, Overlay::None), "{c}");
    }
    assert!(answered(&mut only).is_none() && answered(&mut other_batch).is_none());
    let notes: Vec<String> = screen.app.events.iter().map(|e| e.text.to_string()).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("only this call of its agent session (or batch) is waiting")),
        "{notes:#?}"
    );
}
