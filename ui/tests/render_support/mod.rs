//! The scene the render tests draw: the bundled demo's console state, a
//! batch in flight, prompts, all at fixed instants from one start.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tether_console::files::inputs;
use tether_console::session::events::ReplySlot;
use tether_console::session::provenance::{CallKey, TrailEntry};
use tether_console::session::replay::Session;
use tether_console::tui::app::{ANSWER_GUARD, App, AppEvent, ApprovalPrompt, HeaderInfo, ScopeEntry, Stage};
use tether_console::tui::view;
use tether_tools::{ToolCall, ToolExecutionMode, ToolExecutionOutcome, ToolFailureCode};
use tokio::sync::oneshot;

pub const SIZES: [(u16, u16); 4] = [(80, 24), (120, 40), (160, 48), (200, 50)];

pub struct Scene {
    pub app: App,
    pub start: Instant,
    pub scope: Option<u64>,
    pub _session: Session,
    pub _replies: Vec<oneshot::Receiver<tether_console::session::events::Answered>>,
    /// The working directory the next prompts' calls run in.
    pub cwd: Option<String>,
    /// The subagent that makes the next prompts' and batches' calls.
    pub subagent: Option<tether_console::subagent::Subagent>,
    /// The commands of a compound the policy marks as not covered.
    pub not_covered: Vec<usize>,
    /// Why the next prompts' calls cannot be edited (their front door
    /// cannot carry edited arguments); `None`: they can.
    pub not_editable: Option<String>,
    /// One execution per call id, as a batch prepares one per call.
    executions: std::cell::RefCell<std::collections::HashMap<String, tether_tools::ToolExecution>>,
}

pub fn scene() -> Scene {
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
        attach: None,
    };
    let mut app = App::new(session.registry.clone(), ScopeEntry::tree(&scopes), info, start);
    // Calls in flight show the trail the decision log has for them.
    app.decisions = Some(session.log.clone());
    Scene {
        app,
        start,
        scope,
        _session: session,
        _replies: Vec::new(),
        cwd: None,
        subagent: None,
        not_covered: Vec::new(),
        not_editable: None,
        executions: Default::default(),
    }
}

impl Scene {
    pub fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    pub fn execution(&self, call_id: &str) -> tether_tools::ToolExecution {
        let scope = self
            ._session
            .scopes
            .values()
            .find(|s| Some(s.id()) == self.scope)
            .cloned();
        self.executions
            .borrow_mut()
            .entry(call_id.to_owned())
            .or_insert_with(|| {
                tether_tools::ToolExecution::new(&ToolCall::new(call_id, "t", "{}"), scope, Default::default())
            })
            .clone()
    }

    pub fn key(&self, call_id: &str) -> CallKey {
        CallKey::of(&self.execution(call_id))
    }

    pub fn with_batch(mut self) -> Self {
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
        // Calls made by an agent that said where it works carry its cwd.
        let calls: Vec<_> = calls
            .into_iter()
            .map(|(mut call, mode)| {
                call.invocation_context = self.cwd.as_ref().map(|cwd| serde_json::json!({ "cwd": cwd }));
                if let Some(subagent) = &self.subagent {
                    subagent.add_to(&mut call.invocation_context);
                }
                (call, mode)
            })
            .collect();
        self.app.tick(self.at(0));
        self.app.update(AppEvent::BatchStarted {
            batch: 0,
            label: "Reads, then writes".into(),
            scope: self.scope,
            scope_label: "assistant".into(),
            calls: calls.into(),
            progress: None,
            max_parallelism: 4,
        });
        for (i, id) in ["call_1", "call_2", "call_3"].iter().enumerate() {
            self.app.update(AppEvent::Declared { batch: 0, upto: i + 1 });
            self.app.update(AppEvent::Stage {
                execution: self.execution(id),
                stage: Stage::PreExecute,
                at: self.at(10),
            });
            self._session.log.record_for(
                self.key(id),
                TrailEntry::PreRule {
                    id: "reads-are-fine".into(),
                    action: "allow",
                },
            );
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

    pub fn finish_batch(mut self) -> Self {
        let outcome =
            ToolExecutionOutcome::from_parts("call_3", "read_note", Ok(serde_json::json!("buy milk; call Ana")));
        self.app.update(AppEvent::Outcome {
            batch: 0,
            index: 2,
            outcome,
            at: self.at(80),
        });
        self._session.log.record_for(
            self.key("call_4"),
            TrailEntry::PreRule {
                id: "ask-before-writing".into(),
                action: "ask",
            },
        );
        self._session.log.record_for(
            self.key("call_4"),
            TrailEntry::Human {
                approved: false,
                reason: Some("not now".into()),
                by: "main".into(),
                waited: std::time::Duration::ZERO,
            },
        );
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

    pub fn prompt(&mut self, call_id: &str, tool: &str, arguments: &str, reason: Option<&str>, left_ms: u64) {
        self.prompt_in("assistant", call_id, tool, arguments, reason, left_ms);
    }

    /// A prompt for a call made in the scope labelled `scope_label` (an
    /// agent's session label).
    pub fn prompt_in(
        &mut self,
        scope_label: &str,
        call_id: &str,
        tool: &str,
        arguments: &str,
        reason: Option<&str>,
        left_ms: u64,
    ) {
        let (reply, receiver) = ReplySlot::channel();
        self._replies.push(receiver);
        self.app.update(AppEvent::ApprovalRequested(Box::new(ApprovalPrompt {
            id: self._replies.len() as u64,
            key: self.key(call_id),
            tool: tool.into(),
            call_id: call_id.into(),
            scope_label: scope_label.into(),
            scope_id: self.scope,
            owner: Some("you".into()),
            agent: Some("quickstart-1".into()),
            reason: reason.map(str::to_owned),
            arguments: arguments.into(),
            validation: Ok(()),
            guard_veto: None,
            command_at: None,
            cwd: self.cwd.clone(),
            subagent: self.subagent.clone(),
            commands: tether_console::session::events::command_lines(
                tool,
                &serde_json::from_str(arguments).unwrap_or_default(),
                None,
                &self.not_covered,
            ),
            deadline: self.app.now + Duration::from_millis(left_ms),
            // Asked long enough ago for its highlight to be over.
            editing: match &self.not_editable {
                Some(why) => tether_console::session::events::Editing::Unsupported(why.clone()),
                None => tether_console::session::events::Editing::checked(|_| Ok(())),
            },
            asked_at: self.app.now - ANSWER_GUARD,
            anchor: None,
            passed_over: Vec::new(),
            agent_name: Some("quickstart".into()),
            reply,
        })));
    }
}

pub fn render(app: &App, (width, height): (u16, u16)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::draw(app, frame)).unwrap();
    terminal.backend().to_string()
}
