//! How events change the console: [`App::update`], and what follows when
//! the head of the approval queue changes.

use super::{ANSWER_GUARD, Alert, App, AppEvent, BatchView, Overlay, ScopeEntry, plural};

impl App {
    /// Applies one event.
    pub fn update(&mut self, event: AppEvent) {
        match event {
            AppEvent::BatchStarted {
                batch,
                label,
                scope,
                scope_label,
                calls,
                progress,
                max_parallelism,
            } => {
                self.note(format!(
                    "batch {} started: {} ({}, scope {scope_label})",
                    batch + 1,
                    label,
                    plural(calls.len(), "call")
                ));
                let mut view = match progress {
                    // As many slots as calls, or the sink's reports would
                    // land on the wrong rows: then the events' own.
                    Some(progress) if progress.len() == calls.len() => {
                        BatchView::with_progress(label, scope_label, max_parallelism, calls, progress, self.now)
                    }
                    _ => BatchView::new(label, scope_label, max_parallelism, calls, self.now),
                };
                view.scope = scope;
                self.batches.insert(batch, view);
                self.loaded = None;
                self.shown_batch = batch;
                self.selected_call = 0;
                self.detail_scroll = 0;
            }
            AppEvent::Declared { batch, upto } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    view.declare_upto(upto);
                }
            }
            AppEvent::Started { batch, index, at } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    view.record_start(index, at);
                }
            }
            AppEvent::Stage { execution, stage, at } => {
                if let Some((batch, index)) = self.batches.find_execution(&execution) {
                    if let Some(view) = self.batches.get_mut(batch) {
                        view.declare_execution(index, execution.id());
                        // Timed from the first stage reported (a human's
                        // prompt or the body), as earlier stages are instant.
                        view.record_stage(index, stage, at);
                    }
                }
            }
            AppEvent::Progress { batch } => {
                if let Some(view) = self.batches.get(batch) {
                    view.slots().seen();
                }
            }
            AppEvent::Outcome {
                batch,
                index,
                outcome,
                at,
            } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    view.record_outcome(index, outcome, at);
                }
            }
            AppEvent::Trails { batch, trails } => {
                if let Some(view) = self.batches.get_mut(batch) {
                    view.set_trails(trails);
                }
            }
            AppEvent::BatchFinished { batch } => {
                let now = self.now;
                if let Some(view) = self.batches.get(batch) {
                    let summary = view.summary(batch);
                    let failed = if summary.failed == 0 {
                        "none failed".to_owned()
                    } else {
                        format!("{} failed", summary.failed)
                    };
                    self.note(format!(
                        "batch {} finished: {} ({}, {failed})",
                        batch + 1,
                        summary.label,
                        plural(summary.calls as usize, "call")
                    ));
                }
                // The batch ends no earlier than its last call, so its total is
                // never shorter than a row's time.
                self.batches.finished(batch, |view| view.finish(now));
            }
            AppEvent::BatchJournaled { batch, span } => self.batches.journaled(batch, span),
            AppEvent::ApprovalRequested(prompt) => {
                self.note(format!(
                    "approval requested: {} ({}) in {}",
                    crate::sanitize::escape(&prompt.tool),
                    crate::sanitize::escape(&prompt.call_id),
                    crate::sanitize::escape(&prompt.scope_label)
                ));
                self.alerts.push(Alert {
                    tool: prompt.tool.clone(),
                    scope: prompt.scope_label.clone(),
                });
                // Which batch it waits in, found once (the batch's row was
                // declared by its stage just before): what `Y` and `N` group by.
                if let Some(batch) = self.batches.batch_of(prompt.scope_id, prompt.key.0) {
                    self.prompt_batches.insert(prompt.id, batch);
                }
                self.prompts.push(*prompt);
                self.sync_head("");
            }
            AppEvent::ApprovalReminder { id } => {
                let found = self.prompts.iter().find(|p| p.id == id);
                if let Some((tool, call, scope)) =
                    found.map(|p| (p.tool.clone(), p.call_id.clone(), p.scope_label.clone()))
                {
                    self.note(format!(
                        "reminder: {} ({}) in {} still waits for an answer",
                        crate::sanitize::escape(&tool),
                        crate::sanitize::escape(&call),
                        crate::sanitize::escape(&scope)
                    ));
                    self.alerts.push(Alert { tool, scope });
                }
            }
            AppEvent::ApprovalClosed { id, reason } => {
                if let Some(prompt) = self.prompts.close(id) {
                    let batch = self
                        .batches
                        .find_call(prompt.scope_id, &prompt.call_id)
                        .map_or_else(String::new, |(batch, _)| format!(", batch {}", batch + 1));
                    self.note(format!(
                        "approval of {} ({}{batch}) closed unanswered: {reason}",
                        crate::sanitize::escape(&prompt.tool),
                        crate::sanitize::escape(&prompt.call_id)
                    ));
                    self.sync_head(&format!(
                        "{} ({}) closed unanswered ({reason})",
                        crate::sanitize::escape(&prompt.tool),
                        crate::sanitize::escape(&prompt.call_id)
                    ));
                }
            }
            AppEvent::ApprovalAnswered { id, by, answer } => {
                if let Some(prompt) = self.prompts.close(id) {
                    let what = format!(
                        "{} ({}) {} by {}",
                        crate::sanitize::escape(&prompt.tool),
                        crate::sanitize::escape(&prompt.call_id),
                        crate::sanitize::escape(&answer),
                        crate::sanitize::escape(&by)
                    );
                    self.note(what.clone());
                    self.sync_head(&what);
                }
            }
            AppEvent::ToolsChanged { description } => {
                self.note(description);
                self.refresh_declarations();
                self.held_dirty = true;
            }
            AppEvent::Note(text) => self.note(text),
            AppEvent::Reviewed {
                reviewer,
                tool,
                call_id,
                verdict,
                reason,
                elapsed,
            } => self.reviewed(&reviewer, &tool, &call_id, verdict, &reason, elapsed),
            AppEvent::PolicyReloaded { path, rules, header } => {
                self.info.policy = Some(header);
                self.note(format!("policy reloaded from {path}: {rules} rules"));
            }
            AppEvent::PolicyRejected { message } => self.note(format!("policy not reloaded: {message}")),
            AppEvent::AgentsChanged { connected } => self.info.agents = Some(connected),
            AppEvent::AttachChanged(status) => self.info.attach = Some(status),
            AppEvent::ScopesChanged(scopes) => {
                let selected = self.selected_scope().cloned();
                self.scopes = ScopeEntry::tree(&scopes);
                self.selected_scope = self
                    .scopes
                    .iter()
                    .position(|e| e.scope.is_some() && e.scope == selected)
                    .unwrap_or(0);
                self.refresh_declarations();
                self.held_dirty = true;
            }
        }
    }

    /// Called whenever the queue changed: when its head is no longer the
    /// request an open editor, picker or full view was opened for, that
    /// overlay closes with a notice saying `why` (what happened to the
    /// request) and what was not sent, so nothing typed for one call can
    /// answer another. A new head is highlighted, and answer keys wait
    /// [`ANSWER_GUARD`].
    pub(super) fn sync_head(&mut self, why: &str) {
        let prompts = &self.prompts;
        self.prompt_batches.retain(|id, _| prompts.get(*id).is_some());
        let head = self.prompts.current().map(|p| (p.id, p.asked_at));
        if head.map(|(id, _)| id) == self.head.map(|(id, _)| id) {
            return;
        }
        // A request that reached an empty queue is new from when it was
        // asked; one that follows another, from now (the other just left).
        let after_another = self.head.is_some();
        self.head = head.map(|(id, asked_at)| {
            (
                id,
                if after_another {
                    self.now
                } else {
                    asked_at.min(self.now)
                },
            )
        });
        let head = head.map(|(id, _)| id);
        let Some(bound) = self.overlay_prompt else { return };
        if Some(bound) == head {
            return;
        }
        self.overlay_prompt = None;
        // A batch's reason editor goes with its head (the batch is asked again).
        self.group_reason = None;
        // Whoever was typing text goes on for a moment: those keys are not commands.
        let typing = self.typing_text() || matches!(self.overlay, Overlay::Edit(_));
        if typing {
            self.typed_for_closed = Some(self.now);
        }
        let lost = match std::mem::take(&mut self.overlay) {
            Overlay::Reason(editor) if editor.lines().iter().any(|l| !l.trim().is_empty()) => {
                Some("your reason was not sent")
            }
            Overlay::Reason(_) => Some("the reason editor was closed"),
            Overlay::Always { .. } => Some("no always-rule was added"),
            Overlay::Edit(_) => Some("your edit was not sent"),
            Overlay::FullArguments(_) => None,
            other => {
                self.overlay = other;
                None
            }
        };
        if let Some(lost) = lost {
            let why = if why.is_empty() {
                "the request left the queue"
            } else {
                why
            };
            if typing {
                self.note(format!(
                    "{why}; {lost} (keys typed on for it are ignored until you pause)"
                ));
            } else {
                self.note(format!("{why}; {lost}"));
            }
        }
    }

    /// Whether the request at the head of the queue arrived too recently
    /// for an answer key to be meant for it.
    pub fn prompt_is_new(&self) -> bool {
        self.head
            .is_some_and(|(_, since)| self.now.saturating_duration_since(since) < ANSWER_GUARD)
    }
}
