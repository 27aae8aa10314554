//! The parameters of each method an agent sends: `session/open`,
//! `tools/register` and `tools/unregister`, `batch/execute` and its calls,
//! `hook/tool_use`, `batch/cancel`.

use serde::Deserialize;
use serde_json::Value;

use crate::files::scenario::Concurrency;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenSession {
    pub session_id: String,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    /// The agent's working directory: path rules resolve its calls' relative
    /// paths against it.
    #[serde(default)]
    pub cwd: Option<String>,
    /// `false`: the session is sent no `tool/call`, `tool/result` or
    /// `tools/change` (a client that reads only answers, as the MCP
    /// gateway, spares the console writing them and itself reading them).
    #[serde(default = "yes")]
    pub notifications: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterTool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "crate::files::scenario::object_schema")]
    pub parameters: Value,
    #[serde(default)]
    pub concurrency: Option<Concurrency>,
    #[serde(default)]
    pub metadata: Value,
    /// A child scope of the session (made on first use), e.g. one MCP server.
    #[serde(default)]
    pub scope: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnregisterTool {
    pub name: String,
    #[serde(default)]
    pub scope: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteBatch {
    #[serde(default)]
    pub batch_id: Option<String>,
    pub calls: Vec<CallParams>,
    #[serde(default)]
    pub max_parallelism: Option<usize>,
    /// Run from this child scope of the session (see `tools/register`).
    #[serde(default)]
    pub scope: Option<String>,
    /// Where these calls run, when it is not the session's `cwd` (an MCP
    /// client's root): path rules resolve their relative paths against it.
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallParams {
    pub id: String,
    pub name: String,
    /// The raw argument text exactly as the model sent it.
    pub arguments: String,
    /// The type of the subagent that made the call (`Explore`), when the
    /// agent runs subagents: rules match it (`match.agent_type`), the
    /// screen and the journal show it.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// That subagent run's id.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// A coding agent's tool-use hook, forwarded by `tether hook`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookToolUse {
    /// `claude-code` or `codex`.
    pub agent: String,
    /// `PreToolUse`, `PermissionRequest` or `PostToolUse`.
    pub event: String,
    pub session_id: String,
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub tool_response: Option<Value>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// The agent's transcript of the session (the hook input's
    /// `transcript_path`): where Codex recorded the session's own cwd.
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// Codex's turn: a PermissionRequest comes in the turn of its PreToolUse.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The subagent that made the call (the hook input's `agent_type`);
    /// absent for the main agent.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// That subagent run's id (the hook input's `agent_id`).
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// The field of the `hook/tool_use` reply that says the rule that asked
/// needs more than one answerer, and how many: the console writes it, the
/// bridge reads it and then denies a call the console could not decide
/// rather than hand it to the agent's own one-person dialog.
pub const APPROVALS_NEEDED: &str = "approvals_needed";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CancelBatch {
    pub batch_id: String,
}
