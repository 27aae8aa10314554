//! `hook/tool_use`: one tool call of a coding agent (Claude Code, Codex),
//! forwarded by `tether hook`. PreToolUse and PermissionRequest (the agent's
//! own permission dialog) run a one-call batch in the agent session's scope
//! (the tool registered on first sight, permissive schema, exclusive, a body
//! that returns at once: the agent runs the real tool); PostToolUse runs
//! only post-execute policy on the agent's result. Headless, each decision
//! is printed as a line, as agents' outcomes are. The agent session's
//! scope, tools and remembered approvals are in `session`, the refusal of a
//! name Tether cannot match in `refuse`, the printed lines in `lines`.

mod lines;
mod refuse;
mod session;

use std::num::NonZeroUsize;

use serde_json::{Value, json};
use tether_tools::{ToolCall, ToolExecutionOutcome};
use tokio_util::sync::CancellationToken;

use self::lines::{now_ms, print_decision, subagent_of, with_subagent};
use self::refuse::{refuse_unmatchable, unmatchable};
use self::session::{approved_at_pre, session_scope};
use super::batch::run_reported;
use super::protocol::{APPLICATION_ERROR, APPROVALS_NEEDED, HookToolUse};
use super::state::Link;
use crate::session::events::AppEvent;
use crate::session::journal::Decision;
use crate::session::provenance::{SCRIPTED, decided_by};

/// Where the hook body's value carries arguments an approver edited, and
/// the field of the reply that hands them to the bridge.
const UPDATED_INPUT: &str = "updated_input";

fn reply(outcome: &ToolExecutionOutcome, decided: String, approvals_needed: Option<u8>) -> Value {
    let mut reply = json!({
        "code": outcome.code().map(|c| c.as_str()),
        "message": outcome.failure().map(|f| f.message.clone()),
        "decided_by": decided,
    });
    if let Some(needed) = approvals_needed {
        reply[APPROVALS_NEEDED] = json!(needed);
    }
    if let Some(input) = outcome.value().get(UPDATED_INPUT).filter(|_| outcome.code().is_none()) {
        reply[UPDATED_INPUT] = input.clone();
    }
    reply
}

/// Handles one forwarded hook; the answer says what decided the call.
pub(super) async fn handle(
    link: &Link,
    params: HookToolUse,
    cancel: &CancellationToken,
) -> Result<Value, (i64, String)> {
    let call_id = params
        .tool_use_id
        .clone()
        .unwrap_or_else(|| format!("{}-{}", params.event, uuid_like()));
    if let Some(why) = unmatchable(&params.tool_name) {
        return Ok(refuse_unmatchable(link, &params, &call_id, why).await);
    }
    let tool = params.tool_name.clone();
    let (scope, project) = session_scope(link, &params, &tool)?;
    let mut call = ToolCall::new(&call_id, &tool, params.tool_input.to_string());
    // Where the agent runs the call: path rules resolve against it. Codex
    // reports a call's `workdir` as the hook's cwd: the session's own cwd
    // stays the project the call is judged against.
    if let Some(cwd) = &params.cwd {
        call.invocation_context = Some(match project.as_deref().filter(|p| p != cwd) {
            Some(project) => json!({ "cwd": project, "workdir": cwd }),
            None => json!({ "cwd": cwd }),
        });
    }
    // Which subagent asked: shown, journaled and matched by `agent_type` rules.
    if let Some(subagent) = subagent_of(&params) {
        subagent.add_to(&mut call.invocation_context);
    }
    // Neither agent runs edited arguments from a PermissionRequest answer
    // (Codex refuses `updatedInput` there): the console must know which
    // event asks, to not offer `e` on it.
    if params.event == "PermissionRequest" {
        let context = call.invocation_context.get_or_insert_with(|| json!({}));
        context["hook_event"] = json!(params.event);
    }
    let view = link.registry.seal(Some(&scope));
    let approved_before = match params.event.as_str() {
        "PermissionRequest" => approved_at_pre(link, &params, None),
        _ => None,
    };
    match (params.event.as_str(), approved_before) {
        ("PermissionRequest", Some(who)) => {
            // The human (or the script) already said yes to this very call
            // at PreToolUse.
            let decided = format!("{who} (at PreToolUse)");
            link.send(AppEvent::Note(format!(
                "{} PermissionRequest for {}: approved at its PreToolUse, not asked again",
                params.agent, params.tool_name
            )));
            if let Some(printer) = &link.outcomes {
                let line = json!({
                    "agent": params.agent, "session_id": params.session_id, "hook": params.event,
                    "call_id": call_id, "name": tool, "code": null, "value": null, "decided_by": decided,
                });
                let _ = printer.send(with_subagent(line, &params));
            }
            if let Some(journal) = &link.journal {
                // The allow is an answer of its own: the agent runs the tool
                // on it, so the journal says so, and who gave it.
                let event = json!({"event": "hook/permission", "ts_ms": now_ms(), "agent": params.agent,
                                   "session_id": params.session_id, "call_id": call_id, "name": params.tool_name,
                                   "behavior": "allow", "decided_by": decided, "answered_by": who,
                                   "stage": "approval"});
                let event = with_subagent(event, &params);
                if let Err(error) = journal.write_event(&event).await {
                    tracing::error!(%error, "journal write failed for a PermissionRequest allow");
                }
            }
            Ok(json!({"code": null, "message": null, "decided_by": decided}))
        }
        ("PreToolUse" | "PermissionRequest", _) => {
            let _id = link
                .in_flight
                .claim(scope.id(), [call_id.as_str()])
                .map_err(|why| (super::protocol::INVALID_PARAMS, why))?;
            let mut label = if params.event == "PreToolUse" {
                format!("{} · {}", params.agent, params.tool_name)
            } else {
                format!("{} · {} · {}", params.agent, params.event, params.tool_name)
            };
            if let Some(subagent) = subagent_of(&params) {
                label = format!("{label} · {}", subagent.label());
            }
            let reported = super::batch::Reported {
                conn: None,
                batch_id: "hook",
                cancel,
                early: None,
            };
            let batch = run_reported(link, &view, vec![call], NonZeroUsize::MIN, || label, reported).await;
            let (batch, decided) = batch;
            let (
                outcome,
                super::batch::Decided {
                    by: decided,
                    approvals_needed,
                },
            ) = batch
                .outcomes
                .into_iter()
                .zip(decided)
                .next()
                .ok_or((APPLICATION_ERROR, "no outcome".to_owned()))?;
            if params.event == "PreToolUse" {
                // Forgets an older approval of the same call either way.
                let approved_by = match decided.as_str() {
                    "human" if outcome.code().is_none() => Some("human"),
                    SCRIPTED if outcome.code().is_none() => Some(SCRIPTED),
                    _ => None,
                };
                approved_at_pre(link, &params, approved_by);
            }
            print_decision(link, &params, &outcome, &decided);
            Ok(reply(&outcome, decided, approvals_needed))
        }
        ("PostToolUse", _) => {
            let result = params.tool_response.clone().unwrap_or(Value::Null);
            // The console shows the reviewed result as a one-row batch, so its
            // detail holds the result and what decided it.
            let ui_batch = link.next_batch.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            link.send(AppEvent::BatchStarted {
                batch: ui_batch,
                label: format!("{} · PostToolUse · {}", params.agent, params.tool_name),
                scope: Some(scope.id()),
                scope_label: scope.label().unwrap_or_default().to_owned(),
                calls: vec![(call.clone(), tether_tools::ToolExecutionMode::Exclusive)].into(),
                progress: None,
                max_parallelism: 1,
            });
            let outcome = link.registry.review_result(call, &view, Ok(result), cancel).await;
            let trail = link.log.take_of(&outcome);
            let decided = decided_by(&outcome, &trail);
            let decision = Decision::of(&outcome, &trail);
            link.send(AppEvent::Outcome {
                batch: ui_batch,
                index: 0,
                outcome: outcome.clone(),
                at: std::time::Instant::now(),
            });
            link.send(AppEvent::Trails {
                batch: ui_batch,
                trails: std::iter::once(trail).collect(),
            });
            link.send(AppEvent::BatchFinished { batch: ui_batch });
            if let Some(journal) = &link.journal {
                let mut event = json!({"event": "hook/post", "agent": params.agent, "session_id": params.session_id,
                                   "call_id": outcome.call_id(), "name": outcome.name(),
                                   "code": outcome.code().map(|c| c.as_str())});
                // The same decision fields as a `tool/result` line.
                if let (Some(line), Ok(Value::Object(fields))) =
                    (event.as_object_mut(), serde_json::to_value(&decision))
                {
                    line.extend(fields);
                }
                let event = with_subagent(event, &params);
                if let Err(error) = journal.write_event(&event).await {
                    tracing::error!(%error, "journal write failed for a PostToolUse review");
                }
            }
            link.send(AppEvent::Note(format!(
                "PostToolUse {} ({}): {}",
                outcome.name(),
                outcome.call_id(),
                outcome.code().map_or("accepted", |c| c.as_str())
            )));
            print_decision(link, &params, &outcome, &decided);
            Ok(reply(&outcome, decided, None))
        }
        (other, _) => Err((
            super::protocol::INVALID_PARAMS,
            format!("unknown hook event {other:?}: expected PreToolUse, PermissionRequest or PostToolUse"),
        )),
    }
}

/// A call id for hooks that give none: unique within the console's life.
fn uuid_like() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!("{:08x}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}
