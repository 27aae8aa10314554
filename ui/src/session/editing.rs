//! Edit before approving (issue 34): whether a request's arguments may be
//! edited, and the check every edit must pass before the console sends it.

use std::sync::Arc;

use serde_json::Value;
use tether_tools::{ToolExecution, ToolRegistry};
use tokio_util::sync::CancellationToken;

/// Checks edited arguments as the engine's argument check will (SPEC §7
/// step 5, the tool's schema): `Err` holds the message, each problem's JSON
/// path first.
pub type ArgumentCheck = Arc<dyn Fn(&serde_json::Value) -> Result<(), String> + Send + Sync>;

/// Whether a request's arguments may be edited before approving.
#[derive(Clone)]
pub enum Editing {
    /// Its front door carries edited arguments; edits are checked by this.
    Checked(ArgumentCheck),
    /// Its front door cannot carry them (why, for the human).
    Unsupported(String),
}

impl Editing {
    /// Editable, every edit accepted by the check `check`.
    pub fn checked(check: impl Fn(&serde_json::Value) -> Result<(), String> + Send + Sync + 'static) -> Self {
        Self::Checked(Arc::new(check))
    }
}

impl std::fmt::Debug for Editing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Checked(_) => f.write_str("Editing::Checked"),
            Self::Unsupported(why) => f.debug_tuple("Editing::Unsupported").field(why).finish(),
        }
    }
}

/// Whether the human may edit this call's arguments, and the check an edit
/// must pass: the engine's own (SPEC §7 step 5) against the tool the call
/// resolved to, and what its front door needs (see [`editing_with`]).
pub fn of(registry: &ToolRegistry, execution: &ToolExecution) -> Editing {
    let view = registry.seal(execution.scope());
    let (call_id, name) = (execution.call_id().to_owned(), execution.name().to_owned());
    let scope = execution.scope().cloned();
    let schema = move |arguments: &Value| {
        let call = tether_tools::ToolCall::new(&call_id, &name, arguments.to_string());
        let candidate = ToolExecution::new(&call, scope.clone(), CancellationToken::new());
        view.check_arguments(&candidate)
    };
    editing_with(
        execution.metadata(),
        execution.invocation_context(),
        execution.arguments(),
        schema,
    )
}

/// [`of`], given the call's tool metadata, invocation context and
/// arguments, and its schema check. A hook's PermissionRequest answer
/// cannot hand edited arguments back to the agent (Codex 0.171.0 refuses
/// `updatedInput` there; docs/hooks.md), so such a call is not editable,
/// rather than approved as the model wrote it behind the human's back.
fn editing_with(
    metadata: &Value,
    context: Option<&Value>,
    arguments: &Value,
    schema: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static,
) -> Editing {
    let hook = metadata.get("hook") == Some(&Value::Bool(true));
    let event = context.and_then(|c| c.get("hook_event")).and_then(Value::as_str);
    if hook && event == Some("PermissionRequest") {
        return Editing::Unsupported(PERMISSION_REQUEST_CANNOT_EDIT.to_owned());
    }
    // Codex takes edited input only as a string `command`: anything else
    // fails the call ("hook returned updatedInput without string field
    // `command`", tried on 0.171.0: nothing runs). A Codex call without one
    // is not editable, and an edit of one must keep it, so the human learns
    // it in the editor rather than from a failed call.
    let codex = hook && metadata.get("agent").and_then(Value::as_str) == Some("codex");
    if codex && !arguments.get("command").is_some_and(Value::is_string) {
        return Editing::Unsupported(CODEX_NEEDS_A_COMMAND.to_owned());
    }
    Editing::checked(move |arguments| {
        if codex && !arguments.get("command").is_some_and(Value::is_string) {
            return Err("at /command: Codex runs an edited command only when `command` is a string".to_owned());
        }
        schema(arguments)
    })
}

/// Why `e` does not edit a Codex call whose input is not a shell command.
pub const CODEX_NEEDS_A_COMMAND: &str =
    "Codex runs edited input only for a shell command (a string `command`): approve or reject this call as it is";

/// Why `e` does not edit a call asked at an agent's PermissionRequest hook.
pub const PERMISSION_REQUEST_CANNOT_EDIT: &str = "an agent's PermissionRequest hook cannot run edited arguments \
     (Codex refuses updatedInput there): approve or reject the call as the model wrote it";

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_permission_request_is_not_editable_and_a_codex_edit_keeps_a_string_command() {
        let hook = |agent: &str| json!({"agent": agent, "hook": true});
        let asked = json!({"hook_event": "PermissionRequest"});
        let ls = json!({"command": "ls"});
        let editing = editing_with(&hook("claude-code"), Some(&asked), &ls, |_| Ok(()));
        assert!(matches!(editing, Editing::Unsupported(why) if why == PERMISSION_REQUEST_CANNOT_EDIT));
        let Editing::Checked(check) = editing_with(&hook("codex"), Some(&json!({"cwd": "/p"})), &ls, |_| Ok(())) else {
            panic!("a Codex PreToolUse call is editable");
        };
        assert_eq!(check(&json!({"command": "ls -l"})), Ok(()));
        assert!(check(&json!({"cmd": "ls"})).unwrap_err().starts_with("at /command"));
        let patch = json!({"patch": "*** Begin Patch"});
        let editing = editing_with(&hook("codex"), None, &patch, |_| Ok(()));
        assert!(matches!(editing, Editing::Unsupported(why) if why == CODEX_NEEDS_A_COMMAND));
        // Anything else keeps only its schema.
        let Editing::Checked(check) = editing_with(&json!({}), None, &ls, |v| match v["n"].is_u64() {
            true => Ok(()),
            false => Err("at /n: not a number".to_owned()),
        }) else {
            panic!("a link call is editable");
        };
        assert_eq!(check(&json!({"n": 1})), Ok(()));
        assert_eq!(check(&json!({"cmd": "ls"})), Err("at /n: not a number".to_owned()));
    }
}
