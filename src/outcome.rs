//! Outcomes and failure codes (SPEC §9).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::execution::{ExecutionId, ToolExecution};

/// Stable, machine-readable failure codes (SPEC §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ToolFailureCode {
    /// The name resolves to no visible tool.
    UnknownTool,
    /// The arguments are not a valid call object.
    InvalidArgs,
    /// The tool body or an execution stage failed.
    ToolError,
    /// A dispatched call was cancelled.
    Aborted,
    /// Cancelled before the body started: no side effect to compensate.
    AbortedBeforeDispatch,
    /// Pre-execute policy, a guard, or a human rejected the call.
    Denied,
    /// The approval capability the call needed was missing or failed.
    Unavailable,
    /// Post-execute policy blocked the finished result.
    Blocked,
}

impl ToolFailureCode {
    /// Every code, in declaration order.
    pub const ALL: [ToolFailureCode; 8] = [
        Self::UnknownTool,
        Self::InvalidArgs,
        Self::ToolError,
        Self::Aborted,
        Self::AbortedBeforeDispatch,
        Self::Denied,
        Self::Unavailable,
        Self::Blocked,
    ];

    /// The wire form, e.g. `"UNKNOWN_TOOL"`. Stable across versions.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::UnknownTool => "UNKNOWN_TOOL",
            Self::InvalidArgs => "INVALID_ARGS",
            Self::ToolError => "TOOL_ERROR",
            Self::Aborted => "ABORTED",
            Self::AbortedBeforeDispatch => "ABORTED_BEFORE_DISPATCH",
            Self::Denied => "DENIED",
            Self::Unavailable => "UNAVAILABLE",
            Self::Blocked => "BLOCKED",
        }
    }

    /// Parses a wire form.
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for ToolFailureCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a call failed: its code and a message for the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolFailure {
    /// The stable code.
    pub code: ToolFailureCode,
    /// The message the model sees as `{"message": ...}`.
    pub message: String,
}

/// The final outcome of one call (SPEC §9). Detached: it shares nothing
/// mutable with the pipeline. Its call id and name are shared text (the
/// execution's own), so a copy handed to a screen or a log costs the value's
/// copy and two reference counts.
///
/// Two outcomes are equal when the model would read them the same (call id,
/// name, value, failure); the execution they came from is not compared, and
/// not serialized (a deserialized outcome gets an id of its own).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToolExecutionOutcome {
    #[serde(skip, default = "ExecutionId::fresh")]
    execution: ExecutionId,
    call_id: Arc<str>,
    name: Arc<str>,
    value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure: Option<ToolFailure>,
}

impl ToolExecutionOutcome {
    /// A successful outcome carrying the value returned to the model.
    pub fn success(execution: &ToolExecution, value: Value) -> Self {
        Self::build(
            execution.id(),
            execution.shared_call_id(),
            execution.shared_name(),
            Ok(value),
        )
    }

    /// A failed outcome; the model sees `{"message": message}`.
    pub fn failed(execution: &ToolExecution, code: ToolFailureCode, message: impl Into<String>) -> Self {
        Self::build(
            execution.id(),
            execution.shared_call_id(),
            execution.shared_name(),
            Err((code, message.into())),
        )
    }

    /// An outcome built from its parts, for sinks and readers that rebuild
    /// outcomes; it gets an execution id of its own.
    pub fn from_parts(
        call_id: impl AsRef<str>,
        name: impl AsRef<str>,
        result: Result<Value, (ToolFailureCode, String)>,
    ) -> Self {
        Self::build(
            ExecutionId::fresh(),
            call_id.as_ref().into(),
            name.as_ref().into(),
            result,
        )
    }

    fn build(
        execution: ExecutionId,
        call_id: Arc<str>,
        name: Arc<str>,
        result: Result<Value, (ToolFailureCode, String)>,
    ) -> Self {
        let (value, failure) = match result {
            Ok(value) => (value, None),
            Err((code, message)) => (json!({ "message": message }), Some(ToolFailure { code, message })),
        };
        Self {
            execution,
            call_id,
            name,
            value,
            failure,
        }
    }

    /// The execution this outcome ends ([`ToolExecution::id`]).
    pub fn execution_id(&self) -> ExecutionId {
        self.execution
    }

    /// The call id this outcome answers.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call id this outcome answers, shared (a reference count, no copy).
    pub fn shared_call_id(&self) -> Arc<str> {
        Arc::clone(&self.call_id)
    }

    /// The tool name the model asked for.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The JSON returned to the model (`{"message": ...}` on failure).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The JSON returned to the model, taken (no copy): for a caller that
    /// hands the outcome on and keeps nothing else of it.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The failure, if the call failed.
    pub fn failure(&self) -> Option<&ToolFailure> {
        self.failure.as_ref()
    }

    /// The failure code, if the call failed.
    pub fn code(&self) -> Option<ToolFailureCode> {
        self.failure.as_ref().map(|f| f.code)
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.failure.is_some()
    }

    /// The result as handed back to the model, tied to its call id.
    pub fn to_function_result(&self) -> ToolFunctionResult {
        ToolFunctionResult {
            call_id: self.call_id.to_string(),
            name: self.name.to_string(),
            content: self.value.clone(),
            is_error: self.is_error(),
        }
    }
}

impl PartialEq for ToolExecutionOutcome {
    fn eq(&self, other: &Self) -> bool {
        self.call_id == other.call_id
            && self.name == other.name
            && self.value == other.value
            && self.failure == other.failure
    }
}

/// A result as a model API expects it: the call id, the content and an error flag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolFunctionResult {
    /// The call id this result answers.
    pub call_id: String,
    /// The tool name.
    pub name: String,
    /// The content for the model.
    pub content: Value,
    /// Whether the call failed.
    pub is_error: bool,
}
