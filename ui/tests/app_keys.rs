//! Keys in, decisions out: the approval queue and the panes, without a terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use tether_console::session::events::Answered;
use tether_console::tui::app::{ANSWER_GUARD, App, AppEvent, Command, HeaderInfo, Overlay, PromptReply, ScopeEntry};
use tether_tools::{ToolCall, ToolExecutionMode, ToolRegistry};
use tokio::sync::oneshot;

mod app_support;
use app_support::{app, key, request};

/// A request reaches the queue, and the human has had time to look at it
/// (answer keys wait `ANSWER_GUARD` after a request reaches the head).
fn prompt(app: &mut App, id: u64, tool: &str, scope: Option<u64>) -> oneshot::Receiver<Answered> {
    let receiver = arrive(app, id, tool, scope);
    app.tick(app.now + ANSWER_GUARD);
    receiver
}

/// A request reaches the queue, now.
fn arrive(app: &mut App, id: u64, tool: &str, scope: Option<u64>) -> oneshot::Receiver<Answered> {
    let (mut prompt, receiver) = request(id, tool, "{}", app.now);
    prompt.scope_label = format!("scope {scope:?}");
    prompt.scope_id = scope;
    app.update(AppEvent::ApprovalRequested(Box::new(prompt)));
    receiver
}

#[test]
fn requests_are_answered_first_in_first_out_and_a_new_one_never_replaces_the_current() {
    let mut app = app();
    let mut first = prompt(&mut app, 1, "write", Some(1));
    assert_eq!(app.prompts.current().unwrap().id, 1);
    let mut second = prompt(&mut app, 2, "shell", Some(1));
    assert_eq!(app.prompts.current().unwrap().id, 1, "the one on screen stays");
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(first.try_recv().unwrap().reply, PromptReply::Approve);
    assert!(second.try_recv().is_err(), "not answered yet");
    app.tick(app.now + ANSWER_GUARD);
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(second.try_recv().unwrap().reply, PromptReply::Reject { reason: None });
    assert!(app.prompts.is_empty());
}

#[test]
fn always_answers_the_pending_requests_it_matches_and_only_those() {
    let mut app = app();
    let mut current = prompt(&mut app, 1, "write", Some(7));
    let mut sibling = prompt(&mut app, 2, "write", Some(7));
    let mut other_tool = prompt(&mut app, 3, "shell", Some(7));
    let mut other_scope = prompt(&mut app, 4, "write", Some(8));
    app.handle_key(key(KeyCode::Char('a')));
    match &app.overlay {
        Overlay::Always {
            choices, selected: 0, ..
        } => assert_eq!(choices.len(), 2, "exact arguments, whole tool"),
        other => panic!("no chooser: {other:?}"),
    }
    assert!(
        current.try_recv().is_err(),
        "nothing is approved before the rule is chosen"
    );
    app.handle_key(key(KeyCode::Enter));
    assert!(matches!(
        current.try_recv().unwrap().reply,
        PromptReply::ApproveAlways { .. }
    ));
    assert!(matches!(
        sibling.try_recv().unwrap().reply,
        PromptReply::ApproveAlways { .. }
    ));
    assert!(other_tool.try_recv().is_err());
    assert!(other_scope.try_recv().is_err());
    assert_eq!(app.prompts.len(), 2);
    assert_eq!(app.prompts.current().unwrap().id, 3, "FIFO order of the rest is kept");
    let rules = app.always.lock().unwrap().clone();
    assert_eq!(rules.len(), 1);
    let args = serde_json::json!({});
    assert!(rules[0].matches("write", Some(7), &args) && !rules[0].matches("write", Some(8), &args));
}

#[test]
fn s_keeps_the_chosen_rule_and_the_rules_view_revokes_one() {
    let mut app = app();
    app.keep_into = Some("policy.json".into());
    let _first = prompt(&mut app, 1, "write", Some(7));
    app.handle_key(key(KeyCode::Char('a')));
    app.handle_key(key(KeyCode::Down));
    let command = app.handle_key(key(KeyCode::Char('s')));
    let Some(Command::KeepRule(rule)) = command else {
        panic!("no keep command: {command:?}")
    };
    assert!(rule.describe().contains("the whole tool"), "{}", rule.describe());
    assert_eq!(app.always.lock().unwrap().len(), 1);
    app.handle_key(KeyEvent::new(KeyCode::Char('R'), KeyModifiers::SHIFT));
    assert!(matches!(app.overlay, Overlay::Rules { selected: 0 }));
    app.handle_key(key(KeyCode::Char('d')));
    assert!(app.always.lock().unwrap().is_empty(), "revoked");
    app.handle_key(key(KeyCode::Esc));
    assert!(matches!(app.overlay, Overlay::None));
    let mut again = prompt(&mut app, 2, "write", Some(7));
    assert!(again.try_recv().is_err(), "asked again once revoked");
    assert_eq!(app.prompts.len(), 1);
}

#[test]
fn a_typed_reason_goes_back_with_the_rejection_and_esc_in_the_editor_goes_back() {
    let mut app = app();
    let mut reply = prompt(&mut app, 1, "write", None);
    app.handle_key(key(KeyCode::Char('n')));
    assert!(matches!(app.overlay, Overlay::Reason(_)));
    for c in "not there".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    // q and y are text here, not commands.
    app.handle_key(key(KeyCode::Char('q')));
    assert!(!app.quit);
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(key(KeyCode::Char('y')));
    app.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    assert_eq!(
        reply.try_recv().unwrap().reply,
        PromptReply::Reject {
            reason: Some("not thereq\ny".into())
        }
    );

    let mut reply = prompt(&mut app, 2, "write", None);
    app.handle_key(key(KeyCode::Char('n')));
    app.handle_key(key(KeyCode::Esc));
    assert!(matches!(app.overlay, Overlay::None));
    assert!(reply.try_recv().is_err(), "Esc in the editor only goes back");
    app.handle_key(key(KeyCode::Char('n')));
    app.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    assert_eq!(
        reply.try_recv().unwrap().reply,
        PromptReply::Reject { reason: None },
        "an empty reason is no reason"
    );
}

#[test]
fn quitting_answers_every_pending_request_unavailable() {
    let mut app = app();
    let mut replies: Vec<_> = (1..=3).map(|i| prompt(&mut app, i, "write", None)).collect();
    assert_eq!(app.handle_key(key(KeyCode::Char('q'))), None, "asks first");
    assert!(app.confirm_quit);
    assert_eq!(app.handle_key(key(KeyCode::Char('q'))), Some(Command::Quit));
    for reply in &mut replies {
        assert!(matches!(
            reply.try_recv().unwrap().reply,
            PromptReply::Unavailable { .. }
        ));
    }
}

#[test]
fn a_request_closed_by_the_answerer_leaves_the_queue() {
    let mut app = app();
    let _a = prompt(&mut app, 1, "write", None);
    let _b = prompt(&mut app, 2, "write", None);
    app.update(AppEvent::ApprovalClosed {
        id: 1,
        reason: "timed out after 120 s".into(),
    });
    assert_eq!(app.prompts.current().unwrap().id, 2);
    let last = &app.events.back().unwrap().text;
    assert_eq!(last, "approval of write (c1) closed unanswered: timed out after 120 s");
}

#[test]
fn a_ten_thousand_call_batch_scrolls_by_page_and_to_the_end() {
    let mut app = app();
    let calls: Vec<_> = (0..10_000)
        .map(|i| {
            (
                ToolCall::new(format!("c{i}"), "t", "{}"),
                if i % 8 == 7 {
                    ToolExecutionMode::Exclusive
                } else {
                    ToolExecutionMode::Parallel
                },
            )
        })
        .collect();
    app.update(AppEvent::BatchStarted {
        batch: 0,
        label: "big".into(),
        scope: None,
        scope_label: "global".into(),
        calls: calls.into(),
        progress: None,
        max_parallelism: 16,
    });
    app.batch_page = 30;
    app.handle_key(key(KeyCode::PageDown));
    assert_eq!(app.selected_call, 30);
    app.handle_key(key(KeyCode::End));
    assert_eq!(app.selected_call, 9_999);
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.selected_call, 9_999);
    app.handle_key(key(KeyCode::Home));
    assert_eq!(app.selected_call, 0);
    let batch = app.current_batch().unwrap();
    assert_eq!(batch.row_at(batch.line_of(8)), Some(8));
    assert_eq!(
        batch.row_at(batch.line_of(7) - 1),
        None,
        "a barrier line stands before the exclusive call"
    );
}

#[test]
fn tab_moves_focus_and_r_asks_for_the_next_batch() {
    let mut app = app();
    let before = app.key_context();
    app.handle_key(key(KeyCode::Tab));
    assert_ne!(app.key_context(), before);
    assert_eq!(app.handle_key(key(KeyCode::Char('r'))), Some(Command::RunNextBatch));
    assert_eq!(app.handle_key(key(KeyCode::Char('?'))), None);
    assert!(matches!(app.overlay, Overlay::Help { .. }));
}

#[test]
fn brackets_reach_earlier_and_later_batches() {
    let mut app = app();
    for batch in 0..3 {
        let calls = vec![(
            ToolCall::new(format!("b{batch}"), "t", "{}"),
            ToolExecutionMode::Exclusive,
        )];
        app.update(AppEvent::BatchStarted {
            batch,
            label: format!("batch {batch}"),
            scope: None,
            scope_label: "global".into(),
            calls: calls.into(),
            progress: None,
            max_parallelism: 1,
        });
    }
    assert_eq!(app.shown_batch, 2, "a new batch is shown");
    app.handle_key(key(KeyCode::Char('[')));
    app.handle_key(key(KeyCode::Char('[')));
    assert_eq!(app.current_batch().unwrap().label, "batch 0");
    app.handle_key(key(KeyCode::Char('[')));
    assert_eq!(app.shown_batch, 0, "no batch before the first");
    app.handle_key(key(KeyCode::Char(']')));
    assert_eq!(app.selected_row().unwrap().call.call_id, "b1");
    assert_eq!(app.handle_key(key(KeyCode::Char('p'))), Some(Command::ReloadPolicy));
}

#[test]
fn a_batch_lasts_at_least_as_long_as_its_calls_and_one_call_is_one_call() {
    let t0 = Instant::now();
    let mut app = App::new(
        ToolRegistry::new(),
        vec![ScopeEntry::global()],
        HeaderInfo::default(),
        t0,
    );
    app.update(AppEvent::BatchStarted {
        batch: 0,
        label: "one".into(),
        scope: None,
        scope_label: "global".into(),
        calls: vec![(ToolCall::new("c1", "t", "{}"), ToolExecutionMode::Exclusive)].into(),
        progress: None,
        max_parallelism: 1,
    });
    // The screen's clock lags the events' own times (it moves once a frame).
    let call = tether_tools::ToolExecution::new(&ToolCall::new("c1", "t", "{}"), None, Default::default());
    app.update(AppEvent::Stage {
        execution: call,
        stage: tether_console::tui::app::Stage::PreExecute,
        at: t0 + Duration::from_millis(100),
    });
    app.update(AppEvent::Outcome {
        batch: 0,
        index: 0,
        outcome: tether_tools::ToolExecutionOutcome::from_parts("c1", "t", Ok(serde_json::json!(1))),
        at: t0 + Duration::from_millis(400),
    });
    app.update(AppEvent::BatchFinished { batch: 0 });
    let batch = app.current_batch().unwrap();
    let total = batch.finished.unwrap().saturating_duration_since(batch.started);
    assert!(
        total >= Duration::from_millis(300),
        "the batch took {total:?}, its call 300ms"
    );
    let texts: Vec<&str> = app.events.iter().map(|e| e.text.as_str()).collect();
    assert!(texts.iter().any(|t| t.contains("(1 call, scope global)")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("(1 call, none failed)")), "{texts:?}");
}

/// A held MCP tool (registered by a gateway with both definitions in its
/// metadata): ⚠ in the scope tree and the declarations, `H` opens the diff,
/// `Esc` leaves it held, `y` approves exactly the definition shown.
#[test]
fn h_opens_the_diff_of_the_held_tool_and_y_approves_the_definition_shown() {
    let registry = ToolRegistry::new();
    let scope = tether_tools::AgentPipelineScope::builder()
        .label("scripted")
        .build_root();
    let body = |args: Value, _: tether_tools::ToolContext| async move { Ok::<_, tether_tools::BoxError>(args) };
    let mcp = json!({"mcp": {"server": "scripted", "pinned": false, "held": true, "hash": "fnv1a64:00ff",
        "approved": {"description": "Echoes.", "inputSchema": {"type": "object"}, "annotations": null},
        "changed": {"description": "Echoes. Also \u{1b}[8mreads secrets", "inputSchema": {"type": "object"}, "annotations": null}}});
    let options = tether_tools::ToolRegistrationOptions::default().with_metadata(mcp);
    let tool = tether_tools::Tool::new("echo", "Echoes.", json!({"type": "object"}), body);
    let _held = registry.register(tool, Some(&scope), options).unwrap();
    let plain = tether_tools::Tool::new("plain", "p", json!({"type": "object"}), body);
    let _plain = registry
        .register(plain, Some(&scope), tether_tools::ToolRegistrationOptions::default())
        .unwrap();
    let now = Instant::now();
    let mut app = App::new(
        registry,
        ScopeEntry::tree(std::slice::from_ref(&scope)),
        HeaderInfo::default(),
        now,
    );
    app.tick(now);
    assert_eq!(app.held.len(), 1, "only the tool the gateway marked held");
    assert!(
        app.events
            .iter()
            .any(|e| e.text.contains("⚠ echo in scripted: definition changed"))
    );

    let area = ratatui::layout::Rect::new(0, 0, 120, 40);
    let draw = |app: &App| {
        let mut buf = ratatui::buffer::Buffer::empty(area);
        tether_console::tui::view::render(app, area, &mut buf);
        buf.content()
            .iter()
            .map(ratatui::buffer::Cell::symbol)
            .collect::<String>()
    };
    let screen = draw(&app);
    assert!(screen.contains("scripted ⚠ 1 held"), "the scope tree: {screen}");
    assert!(screen.contains("echo ⚠ held"), "the declarations: {screen}");
    assert!(!screen.contains("plain ⚠"), "{screen}");

    assert_eq!(app.handle_key(key(KeyCode::Char('H'))), None);
    assert!(matches!(app.overlay, Overlay::PinReview { selected: 0, .. }));
    let description = &app.held[0].diff()[1];
    assert_eq!(description.plain(), "  Echoes.{+ Also \u{1b}[8mreads secrets+}");
    // On screen the escape sequence is shown escaped, with the badge.
    let screen = draw(&app);
    assert!(!screen.contains('\u{1b}'), "nothing raw reaches the terminal");
    assert!(screen.contains("{+ Also \\u{1b}[8mreads secrets+}"), "{screen}");
    assert!(screen.contains("⚠ escaped"), "{screen}");
    // Esc leaves it held; H and y approve exactly what was shown.
    assert_eq!(app.handle_key(key(KeyCode::Esc)), None);
    assert!(matches!(app.overlay, Overlay::None));
    app.handle_key(key(KeyCode::Char('H')));
    let Some(Command::ApproveDefinition(approved)) = app.handle_key(key(KeyCode::Char('y'))) else {
        panic!("y approves")
    };
    assert_eq!(
        (approved.tool.as_str(), approved.hash.as_str()),
        ("echo", "fnv1a64:00ff")
    );
    assert_eq!(approved.scope, scope);
    assert!(matches!(app.overlay, Overlay::None));
}

#[test]
fn a_key_pressed_as_the_next_request_reaches_the_screen_never_answers_it() {
    let mut app = app();
    let mut first = prompt(&mut app, 1, "write", None);
    let mut second = prompt(&mut app, 2, "delete", None);
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(first.try_recv().unwrap().reply, PromptReply::Approve);
    // A double press: the second `y` was meant for the first request too.
    app.handle_key(key(KeyCode::Char('y')));
    app.handle_key(key(KeyCode::Esc));
    assert!(second.try_recv().is_err(), "keys during the highlight answer nothing");
    assert!(app.prompt_is_new());
    assert!(
        app.events.back().unwrap().text.contains("just reached the head"),
        "{:?}",
        app.events.back()
    );
    app.tick(app.now + ANSWER_GUARD);
    assert!(!app.prompt_is_new());
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(second.try_recv().unwrap().reply, PromptReply::Approve);
}

#[test]
fn a_reason_typed_for_a_request_that_timed_out_is_never_sent_with_the_next() {
    let mut app = app();
    let mut first = prompt(&mut app, 1, "write", None);
    let mut second = prompt(&mut app, 2, "delete", None);
    app.handle_key(key(KeyCode::Char('n')));
    for c in "reason meant for A".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    app.update(AppEvent::ApprovalClosed {
        id: 1,
        reason: "no answer in 10 s".into(),
    });
    assert!(matches!(app.overlay, Overlay::None), "the editor closed with its call");
    let notice = &app.events.back().unwrap().text;
    assert!(
        notice.contains("write (c1) closed unanswered") && notice.contains("your reason was not sent"),
        "{notice}"
    );
    app.tick(app.now + ANSWER_GUARD);
    app.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    assert!(
        second.try_recv().is_err(),
        "Ctrl+S of the closed editor answers nothing"
    );
    assert!(first.try_recv().is_err());
    assert_eq!(app.prompts.current().unwrap().id, 2);
}

/// A reason still being typed when its request timed out: the keys that
/// follow were text for the closed editor, and none of them answers the
/// next request however long the typing goes on; a pause, and keys answer.
#[test]
fn the_rest_of_a_reason_typed_after_its_request_timed_out_never_answers_the_next() {
    let mut app = app();
    let _first = prompt(&mut app, 1, "write", None);
    let mut second = prompt(&mut app, 2, "delete", None);
    app.handle_key(key(KeyCode::Char('n')));
    for c in "not now".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    app.update(AppEvent::ApprovalClosed {
        id: 1,
        reason: "no answer in 10 s".into(),
    });
    // A person typing, a key every 150 ms, well past the new request's
    // highlight: `y` and `n` are words' letters here, not answers.
    for c in ", ask me why later; try again".chars() {
        app.tick(app.now + Duration::from_millis(150));
        assert_eq!(app.handle_key(key(KeyCode::Char(c))), None, "{c:?}");
        assert!(second.try_recv().is_err(), "{c:?} answered the next request");
    }
    assert_eq!(app.prompts.current().unwrap().id, 2);
    assert!(matches!(app.overlay, Overlay::None), "no editor opened for it");
    app.tick(app.now + ANSWER_GUARD);
    app.handle_key(key(KeyCode::Char('y')));
    assert_eq!(second.try_recv().unwrap().reply, PromptReply::Approve);
}

#[test]
fn the_always_picker_closes_when_its_request_is_answered_elsewhere() {
    let mut app = app();
    let _first = prompt(&mut app, 1, "write", Some(7));
    let mut second = prompt(&mut app, 2, "write", Some(8));
    app.handle_key(key(KeyCode::Char('a')));
    assert!(matches!(app.overlay, Overlay::Always { .. }));
    app.update(AppEvent::ApprovalAnswered {
        id: 1,
        by: "attach 2 (pts/5)".into(),
        answer: "approved".into(),
    });
    assert!(matches!(app.overlay, Overlay::None));
    assert!(app.events.back().unwrap().text.contains("no always-rule was added"));
    app.tick(app.now + ANSWER_GUARD);
    app.handle_key(key(KeyCode::Enter));
    assert!(second.try_recv().is_err(), "Enter of the closed picker adds no rule");
    assert!(app.always.lock().unwrap().is_empty());
}

#[test]
fn a_second_answer_to_a_request_is_refused_with_the_name_of_the_first() {
    let mut main = app();
    let mut attached = app();
    attached.me = "attach 2 (pts/5)".into();
    let (prompt, mut receiver) = request(9, "write", "{}", main.now);
    for screen in [&mut main, &mut attached] {
        let mut shown = request(9, "write", "{}", screen.now).0;
        // The one request, on both screens: one reply slot.
        shown.key = prompt.key;
        shown.reply = prompt.reply.clone();
        screen.update(AppEvent::ApprovalRequested(Box::new(shown)));
        screen.tick(screen.now + ANSWER_GUARD);
    }
    attached.handle_key(key(KeyCode::Char('y')));
    main.handle_key(key(KeyCode::Esc));
    let answered = receiver.try_recv().unwrap();
    assert_eq!(answered.reply, PromptReply::Approve);
    assert_eq!(&*answered.by, "attach 2 (pts/5)");
    let refused = &main.events.back().unwrap().text;
    assert!(refused.contains("already answered by attach 2 (pts/5)"), "{refused}");
    assert!(main.prompts.is_empty());
}

#[test]
fn q_with_agents_connected_asks_first_and_any_other_key_stays() {
    let mut app = app();
    app.info.agents = Some(1);
    assert_eq!(app.handle_key(key(KeyCode::Char('q'))), None);
    assert!(app.confirm_quit);
    app.handle_key(key(KeyCode::Char('j')));
    assert!(!app.confirm_quit && !app.quit, "another key stays");
    app.handle_key(key(KeyCode::Char('q')));
    assert_eq!(app.handle_key(key(KeyCode::Enter)), Some(Command::Quit), "Enter quits");
    let mut idle = self::app();
    assert_eq!(
        idle.handle_key(key(KeyCode::Char('q'))),
        Some(Command::Quit),
        "nothing to end: no question"
    );
}

#[test]
fn the_quit_question_ignores_y_and_every_other_answer_key() {
    for answer in ['y', 'a', 'n', 's', 'v'] {
        let mut app = app();
        let mut reply = prompt(&mut app, 1, "write", None);
        assert_eq!(app.handle_key(key(KeyCode::Char('q'))), None, "asks first");
        assert!(app.confirm_quit);
        assert_eq!(
            app.handle_key(key(KeyCode::Char(answer))),
            None,
            "{answer} does not quit"
        );
        assert!(!app.quit && !app.confirm_quit, "{answer} stays");
        assert!(
            reply.try_recv().is_err(),
            "{answer} answers nothing: the question took it"
        );
        assert_eq!(app.prompts.current().unwrap().id, 1);
    }
}

#[test]
fn with_no_policy_file_to_keep_into_s_is_not_offered_and_keeps_nothing() {
    let mut app = app();
    assert_eq!(app.keep_into, None, "no policy file in the header");
    let mut reply = prompt(&mut app, 1, "write", None);
    app.handle_key(key(KeyCode::Char('a')));
    assert!(matches!(app.overlay, Overlay::Always { .. }));
    assert_eq!(app.handle_key(key(KeyCode::Char('s'))), None, "no KeepRule command");
    assert!(matches!(app.overlay, Overlay::Always { .. }), "the chooser stays open");
    assert!(reply.try_recv().is_err(), "nothing approved");
    assert!(app.always.lock().unwrap().is_empty(), "no rule added");
    assert!(app.events.back().unwrap().text.contains("no policy file"));

    let mut kept = App::new(
        ToolRegistry::new(),
        vec![ScopeEntry::global()],
        HeaderInfo {
            policy: Some("policy.json (unmatched calls: ask)".into()),
            ..HeaderInfo::default()
        },
        Instant::now(),
    );
    assert_eq!(kept.keep_into.as_deref(), Some("policy.json"));
    let _reply = prompt(&mut kept, 1, "write", None);
    kept.handle_key(key(KeyCode::Char('a')));
    assert!(matches!(
        kept.handle_key(key(KeyCode::Char('s'))),
        Some(Command::KeepRule(_))
    ));
}

#[test]
fn the_bundled_demo_has_no_policy_file_to_keep_a_rule_in() {
    let (events, _receiver) = tether_console::session::events::AppEventSender::new();
    let loaded = tether_console::files::inputs::default_demo().unwrap();
    let (_console, app) =
        tether_console::tui::console::ReplayConsole::new(loaded, None, None, Duration::from_secs(5), events, None)
            .unwrap();
    assert!(app.info.policy.is_some(), "the header names the bundled policy");
    assert_eq!(app.keep_into, None, "but there is no file to write into");
}

/// Ctrl+C while typing (a reason, a search in the full view) is neither
/// typed as text nor swallowed in silence: it says how to quit, and the
/// text stays as it was.
#[test]
fn ctrl_c_while_typing_says_how_to_quit() {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let mut app = app();
    let mut pending = prompt(&mut app, 1, "write", Some(1));
    app.handle_key(key(KeyCode::Char('n')));
    assert!(matches!(app.overlay, Overlay::Reason(_)), "{:?}", app.overlay);
    app.handle_key(key(KeyCode::Char('x')));
    app.handle_key(ctrl_c);
    assert!(!app.quit && !app.confirm_quit);
    assert!(
        app.events.back().unwrap().text.contains("Esc leaves the text, then q"),
        "{:?}",
        app.events.back()
    );
    match &app.overlay {
        Overlay::Reason(textarea) => assert_eq!(textarea.lines(), ["x"]),
        other => panic!("the reason editor closed: {other:?}"),
    }
    app.handle_key(key(KeyCode::Esc));
    app.handle_key(key(KeyCode::Char('v')));
    app.handle_key(key(KeyCode::Char('/')));
    app.handle_key(ctrl_c);
    match &app.overlay {
        Overlay::FullArguments(view) => assert_eq!(view.typing.as_deref(), Some("")),
        other => panic!("the full view closed: {other:?}"),
    }
    assert!(app.events.back().unwrap().text.contains("Esc leaves the text"));
    assert!(pending.try_recv().is_err(), "nothing was answered");
}
