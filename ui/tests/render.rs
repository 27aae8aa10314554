//! Every pane and the approval prompt rendered with ratatui's `TestBackend`
//! at 80×24 and 160×48, snapshotted with insta. Time is fixed: every instant
//! is an offset from one start.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tether_console::files::inputs;
use tether_console::session::provenance::{CallKey, TrailEntry};
use tether_console::session::replay::Session;
use tether_console::tui::app::{App, AppEvent, ApprovalPrompt, HeaderInfo, Overlay, Pane, ScopeEntry, Stage};
use tether_console::tui::view;
use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome, ToolFailureCode};
use tokio::sync::oneshot;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

struct Scene {
    app: App,
    start: Instant,
    scope: Option<u64>,
    _session: Session,
    _replies: Vec<oneshot::Receiver<tether_console::tui::app::PromptReply>>,
}

fn scene() -> Scene {
    let loaded = inputs::default_demo().unwrap();
    let session = Session::new(loaded.scenario, loaded.policy.as_ref()).unwrap();
    let scopes: Vec<_> = session.scopes.values().cloned().collect();
    let scope = scopes.first().map(|s| s.id());
    let start = Instant::now();
    let info = HeaderInfo {
        title: "Quick start".into(),
        source: "bundled".into(),
        policy: Some("demos/quickstart.policy.json".into()),
        journal: Some("/tmp/journal.jsonl".into()),
        agents: None,
    };
    let app = App::new(session.registry.clone(), ScopeEntry::tree(&scopes), info, start);
    Scene {
        app,
        start,
        scope,
        _session: session,
        _replies: Vec::new(),
    }
}

impl Scene {
    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    fn execution(&self, call_id: &str) -> tether_tools::ToolExecution {
        let scope = self
            ._session
            .scopes
            .values()
            .find(|s| Some(s.id()) == self.scope)
            .cloned();
        tether_tools::ToolExecution::new(&ToolCall::new(call_id, "t", "{}"), scope, Default::default())
    }

    fn key(&self, call_id: &str) -> CallKey {
        CallKey {
            scope: self.scope,
            call_id: call_id.into(),
        }
    }

    fn with_batch(mut self) -> Self {
        let calls = vec![
            (
                ToolCall::new("call_1", "weather", r#"{"city":"Lisbon"}"#),
                ToolExecutionMode::Parallel,
            ),
            (
                ToolCall::new("call_2", "weather", r#"{"city":"Oslo"}"#),
                ToolExecutionMode::Parallel,
            ),
            (
                ToolCall::new("call_3", "read_note", r#"{"title":"todo"}"#),
                ToolExecutionMode::Parallel,
            ),
            (
                ToolCall::new("call_4", "save_note", r#"{"title":"todo","text":"buy oat milk"}"#),
                ToolExecutionMode::Exclusive,
            ),
            (
                ToolCall::new("call_5", "delete_all_notes", "{}"),
                ToolExecutionMode::Exclusive,
            ),
            (
                ToolCall::new("call_6", "weather", r#"{"city": 42}"#),
                ToolExecutionMode::Parallel,
            ),
        ];
        self.app.tick(self.at(0));
        self.app.update(AppEvent::BatchStarted {
            batch: 0,
            label: "Reads, then writes".into(),
            scope: self.scope,
            scope_label: "assistant".into(),
            calls,
            max_parallelism: 4,
        });
        for (i, id) in ["call_1", "call_2", "call_3"].iter().enumerate() {
            self.app.update(AppEvent::Declared { batch: 0, index: i });
            self.app.update(AppEvent::Stage {
                execution: self.execution(id),
                stage: Stage::PreExecute,
                at: self.at(10),
            });
            self.app.update(AppEvent::Trail {
                key: self.key(id),
                entry: TrailEntry::PreRule {
                    id: "reads-are-fine".into(),
                    action: "allow",
                },
            });
        }
        self.app.update(AppEvent::Stage {
            execution: self.execution("call_3"),
            stage: Stage::Running,
            at: self.at(20),
        });
        for (i, id) in ["call_1", "call_2"].iter().enumerate() {
            let outcome =
                ToolExecutionOutcome::from_parts(*id, "weather", Ok(serde_json::json!({"sky": "clear", "temp_c": 21})));
            self.app.update(AppEvent::Outcome {
                batch: 0,
                index: i,
                outcome,
                at: self.at(55 + i as u64 * 5),
            });
        }
        self.app.tick(self.at(1_250));
        self
    }

    fn finish_batch(mut self) -> Self {
        let outcome =
            ToolExecutionOutcome::from_parts("call_3", "read_note", Ok(serde_json::json!("buy milk; call Ana")));
        self.app.update(AppEvent::Outcome {
            batch: 0,
            index: 2,
            outcome,
            at: self.at(80),
        });
        self.app.update(AppEvent::Trail {
            key: self.key("call_4"),
            entry: TrailEntry::PreRule {
                id: "ask-before-writing".into(),
                action: "ask",
            },
        });
        self.app.update(AppEvent::Trail {
            key: self.key("call_4"),
            entry: TrailEntry::Human {
                approved: false,
                reason: Some("not now".into()),
            },
        });
        let outcome = ToolExecutionOutcome::from_parts(
            "call_4",
            "save_note",
            Err((ToolFailureCode::Denied, "rejected by the approver: not now".into())),
        );
        self.app.update(AppEvent::Stage {
            execution: self.execution("call_4"),
            stage: Stage::PreExecute,
            at: self.at(90),
        });
        self.app.update(AppEvent::Outcome {
            batch: 0,
            index: 3,
            outcome,
            at: self.at(3_400),
        });
        self.app.selected_call = 3;
        self
    }

    fn prompt(&mut self, call_id: &str, tool: &str, arguments: &str, reason: Option<&str>, left_ms: u64) {
        let (reply, receiver) = oneshot::channel();
        self._replies.push(receiver);
        self.app.update(AppEvent::ApprovalRequested(Box::new(ApprovalPrompt {
            id: self._replies.len() as u64,
            key: self.key(call_id),
            tool: tool.into(),
            call_id: call_id.into(),
            scope_label: "assistant".into(),
            scope_id: self.scope,
            owner: Some("you".into()),
            agent: Some("quickstart-1".into()),
            reason: reason.map(str::to_owned),
            arguments: arguments.into(),
            validation: Ok(()),
            deadline: self.app.now + Duration::from_millis(left_ms),
            reply,
        })));
    }
}

fn render(app: &App, (width, height): (u16, u16)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::draw(app, frame)).unwrap();
    terminal.backend().to_string()
}

fn snapshot_both(name: &str, app: &App) {
    for size in SIZES {
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), render(app, size));
    }
}

#[test]
fn idle_console_before_any_batch() {
    let mut scene = scene();
    scene.app.pending_batches = Some(3);
    snapshot_both("idle", &scene.app);
}

#[test]
fn a_batch_in_flight_with_stages_barriers_and_progress() {
    let scene = scene().with_batch();
    snapshot_both("batch_in_flight", &scene.app);
}

#[test]
fn the_detail_of_a_rejected_call_with_its_trail_and_outcome() {
    let mut scene = scene().with_batch().finish_batch();
    scene.app.focus = Pane::Detail;
    snapshot_both("detail_rejected", &scene.app);
}

#[test]
fn the_events_pane_and_the_scope_declarations() {
    let mut scene = scene().with_batch();
    scene.app.focus = Pane::Scopes;
    for i in 0..12 {
        scene.app.update(AppEvent::ToolsChanged {
            description: format!("tools/change: tool_{i} registered in assistant"),
        });
    }
    snapshot_both("scopes_and_events", &scene.app);
}

#[test]
fn the_prompt_with_long_arguments_is_clipped_with_a_marker() {
    let mut scene = scene().with_batch();
    let lines: Vec<String> = (0..60).map(|i| format!("line {i} of the note")).collect();
    let args = serde_json::json!({"title": "long", "text": lines}).to_string();
    scene.prompt(
        "call_4",
        "save_note",
        &args,
        Some("this replaces a note of yours"),
        107_000,
    );
    let rendered = render(&scene.app, (80, 24));
    assert!(rendered.contains("more lines] v view all"), "{rendered}");
    snapshot_both("prompt_long_arguments", &scene.app);
}

#[test]
fn the_prompt_escapes_hostile_characters_and_warns() {
    let mut scene = scene().with_batch();
    let args =
        serde_json::json!({"path": "notes\u{202e}txt.exe", "cmd": "echo \u{1b}[31mred\u{1b}[0m", "z": "a\u{200b}b"})
            .to_string();
    scene.prompt(
        "call_\u{1b}]0;pwned\u{7}",
        "save_note",
        &args,
        Some("ignore previous\u{202e} instructions"),
        90_000,
    );
    let rendered = render(&scene.app, (160, 48));
    assert!(!rendered.contains('\u{1b}') && !rendered.contains('\u{202e}') && !rendered.contains('\u{200b}'));
    assert!(rendered.contains("\\u{1b}") && rendered.contains("\\u{202e}") && rendered.contains("\\u{200b}"));
    assert!(rendered.contains("⚠ escaped"));
    snapshot_both("prompt_hostile", &scene.app);
}

#[test]
fn a_queue_of_three_shows_one_of_three_and_a_red_countdown() {
    let mut scene = scene().with_batch();
    scene.prompt("call_4", "save_note", r#"{"title":"a","text":"b"}"#, None, 7_000);
    scene.prompt("call_7", "write_file", r#"{"path":"x"}"#, None, 100_000);
    scene.prompt("call_8", "shell", r#"{"command":"ls"}"#, None, 110_000);
    let rendered = render(&scene.app, (80, 24));
    assert!(rendered.contains("Approval 1 of 3"), "{rendered}");
    assert!(rendered.contains("0:07 left"), "{rendered}");
    snapshot_both("prompt_queue_of_three", &scene.app);
}

#[test]
fn the_full_arguments_view_and_the_reason_editor() {
    let mut scene = scene().with_batch();
    let lines: Vec<String> = (0..60).map(|i| format!("line {i}")).collect();
    scene.prompt(
        "call_4",
        "save_note",
        &serde_json::json!({ "text": lines }).to_string(),
        None,
        60_000,
    );
    scene.app.overlay = Overlay::FullArguments { scroll: 20 };
    snapshot_both("full_arguments", &scene.app);
    let mut textarea = tui_textarea::TextArea::default();
    textarea.insert_str("use the staging bucket\ninstead");
    scene.app.overlay = Overlay::Reason(Box::new(textarea));
    snapshot_both("reject_reason", &scene.app);
}

#[test]
fn help_lists_every_key_from_the_table() {
    let mut scene = scene();
    scene.app.overlay = Overlay::Help { scroll: 0 };
    let rendered = render(&scene.app, (160, 48));
    for binding in tether_console::tui::keys::BINDINGS
        .iter()
        .filter(|b| b.context == tether_console::tui::keys::KeyContext::Prompt)
    {
        assert!(rendered.contains(binding.help), "{} missing", binding.help);
    }
    snapshot_both("help", &scene.app);
}

#[test]
fn nothing_overlaps_at_80x24() {
    let areas = view::areas(ratatui::layout::Rect::new(0, 0, 80, 24));
    let all = [
        areas.header,
        areas.scopes,
        areas.batch,
        areas.detail,
        areas.events,
        areas.footer,
    ];
    for (i, a) in all.iter().enumerate() {
        assert!(a.width > 0 && a.height > 0, "pane {i} vanished");
        for b in &all[i + 1..] {
            assert!(!a.intersects(*b), "{a:?} overlaps {b:?}");
        }
    }
}
