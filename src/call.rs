//! The calls a model declares (SPEC §7).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One call as the model declared it (SPEC §7): the raw argument text is kept
/// exactly as sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for this call.
    pub call_id: String,
    /// The tool name the model asked for.
    pub name: String,
    /// The raw argument text.
    pub arguments: String,
    /// The call this one was made on behalf of, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
    /// Free context from the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_context: Option<Value>,
}

impl ToolCall {
    /// A call with no parent and no context.
    pub fn new(call_id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            parent_call_id: None,
            invocation_context: None,
        }
    }
}
