//! The agent session a hook call belongs to: its scope (made on first
//! sight), each tool registered on first use, and the approvals given at
//! PreToolUse that its PermissionRequest is not asked again for.

use serde_json::{Value, json};
use tether_tools::{AgentPipelineScope, Tool, ToolContext, ToolRegistrationOptions};

use super::super::protocol::{APPLICATION_ERROR, HookToolUse};
use super::super::state::{HookSession, Link};
use super::UPDATED_INPUT;
use crate::session::events::AppEvent;

pub(super) fn session_scope(
    link: &Link,
    params: &HookToolUse,
    tool: &str,
) -> Result<(AgentPipelineScope, Option<String>), (i64, String)> {
    let key = format!("{}/{}", params.agent, params.session_id);
    let mut sessions = link
        .hook_sessions
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let created = !sessions.contains_key(&key);
    if created {
        let short: String = params.session_id.chars().take(8).collect();
        let scope = AgentPipelineScope::builder()
            .parent(&link.root)
            .label(format!("{} {short}", params.agent))
            .session_id(&params.session_id)
            .build()
            .map_err(|e| (APPLICATION_ERROR, e.to_string()))?;
        sessions.insert(
            key.clone(),
            HookSession {
                scope,
                tools: Default::default(),
                approved: Default::default(),
                project: params.transcript_path.as_deref().and_then(recorded_cwd),
            },
        );
    }
    let session = sessions
        .get_mut(&key)
        .ok_or((APPLICATION_ERROR, "the hook session vanished".to_owned()))?;
    let scope = session.scope.clone();
    let project = session.project.clone();
    if !session.tools.contains_key(tool) {
        // The agent runs the real tool. An approval with edits reaches the
        // body with the approver's arguments: they go back to the bridge,
        // which hands them to the agent (`updatedInput`).
        let body = |args: Value, ctx: ToolContext| async move {
            let edited = ctx.execution().edited_from().is_some();
            Ok::<Value, tether_tools::BoxError>(if edited {
                json!({ UPDATED_INPUT: args })
            } else {
                Value::Null
            })
        };
        let metadata = json!({"agent": params.agent, "hook": true, "original_name": params.tool_name});
        let tool_def = Tool::new(
            tool,
            format!("{} tool {}", params.agent, params.tool_name),
            json!({"type": "object"}),
            body,
        );
        let registration = link
            .registry
            .register(
                tool_def,
                Some(&scope),
                ToolRegistrationOptions::default().with_metadata(metadata),
            )
            .map_err(|e| (APPLICATION_ERROR, e.to_string()))?;
        session.tools.insert(tool.to_owned(), registration);
    }
    drop(sessions);
    if created {
        link.scopes_changed(Some(&scope), None);
        link.send(AppEvent::Note(format!(
            "{} session {} seen through its hook{}",
            params.agent,
            params.session_id,
            params.cwd.as_deref().map(|c| format!(" in {c}")).unwrap_or_default()
        )));
    }
    Ok((scope, project))
}

/// The longest first line of a transcript read for the session's cwd (Codex
/// puts its instructions in it: tens of KiB).
const FIRST_LINE_MAX: u64 = 1 << 20;

/// The working directory the agent recorded for its session in the first
/// line of its transcript (Codex 0.171.0: `{"type": "session_meta",
/// "payload": {"cwd": …}}`); `None` for any other transcript or none.
fn recorded_cwd(transcript: &str) -> Option<String> {
    use std::io::{BufRead as _, Read as _};
    let file = std::fs::File::open(transcript).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(file.take(FIRST_LINE_MAX))
        .read_line(&mut line)
        .ok()?;
    let first: Value = serde_json::from_str(&line).ok()?;
    (first["type"] == "session_meta")
        .then(|| first["payload"]["cwd"].as_str())
        .flatten()
        .filter(|cwd| std::path::Path::new(cwd).is_absolute())
        .map(str::to_owned)
}

/// Human approvals kept per session for a PermissionRequest to come.
const APPROVALS_KEPT: usize = 32;

/// One call as both its PreToolUse and its PermissionRequest name it: Codex
/// gives the PermissionRequest no `tool_use_id` and adds a `description`,
/// so the turn, the tool and the command (or the whole input) identify it.
fn asked_key(params: &HookToolUse) -> String {
    let input = params.tool_input.get("command").unwrap_or(&params.tool_input);
    format!(
        "{}\u{0}{}\u{0}{input}",
        params.turn_id.as_deref().unwrap_or_default(),
        params.tool_name
    )
}

/// Who approved this call at PreToolUse (`human`, `script`), if anyone did,
/// forgetting it; with `remember`, that this one did.
pub(super) fn approved_at_pre(
    link: &Link,
    params: &HookToolUse,
    remember: Option<&'static str>,
) -> Option<&'static str> {
    let session = format!("{}/{}", params.agent, params.session_id);
    let key = asked_key(params);
    let mut sessions = link
        .hook_sessions
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let session = sessions.get_mut(&session)?;
    let found = session
        .approved
        .iter()
        .position(|(k, _)| *k == key)
        .and_then(|at| session.approved.remove(at))
        .map(|(_, who)| who);
    if let Some(who) = remember {
        if session.approved.len() >= APPROVALS_KEPT {
            session.approved.pop_front();
        }
        session.approved.push_back((key, who));
    }
    found
}
