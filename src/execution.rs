//! The immutable prepared execution of one call (SPEC §7).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::call::ToolCall;
use crate::scope::AgentPipelineScope;

/// Identifies one prepared execution (SPEC §7), unique among every
/// execution of the process: calls that share a call id (the model's, which
/// nothing forces to be unique) never share one. A batch gives each of its
/// calls one before it declares them ([`crate::DeclaredCall::execution`]);
/// the execution ([`ToolExecution::id`]) and its outcome
/// ([`crate::ToolExecutionOutcome::execution_id`]) carry it, so a client that
/// keeps state per call (a decision trail) keys it by this, not by call id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExecutionId(u64);

/// The next execution id; shared by every registry of the process.
static NEXT_EXECUTION: AtomicU64 = AtomicU64::new(1);

impl ExecutionId {
    /// A new id, never given out before.
    pub fn fresh() -> Self {
        Self(NEXT_EXECUTION.fetch_add(1, Ordering::Relaxed))
    }

    /// `count` new consecutive ids, never given out before: the first.
    pub(crate) fn reserve(count: usize) -> Self {
        Self(NEXT_EXECUTION.fetch_add(count as u64, Ordering::Relaxed))
    }

    /// The id `offset` places after this one (of a reserved run).
    pub(crate) fn nth(self, offset: usize) -> Self {
        Self(self.0 + offset as u64)
    }

    /// The id as a number, for logs and records.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ExecutionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One call, prepared for the pipeline: everything fixed before dispatch.
/// Cheap to clone and immutable; every listener sees the same values.
#[derive(Clone)]
pub struct ToolExecution {
    inner: Arc<ExecutionInner>,
}

/// What a tool with no metadata (or no tool) answers for it.
pub(crate) static NO_METADATA: Value = Value::Null;

struct ExecutionInner {
    id: ExecutionId,
    // Shared with the outcome, which then copies no text.
    call_id: Arc<str>,
    name: Arc<str>,
    raw_arguments: String,
    arguments: Value,
    arguments_parsed: bool,
    scope: Option<AgentPipelineScope>,
    cancellation: CancellationToken,
    parent_call_id: Option<String>,
    invocation_context: Option<Value>,
    /// The registration's, shared (`None`: no tool, or no metadata).
    metadata: Option<Arc<Value>>,
    /// The model's arguments when an approver replaced them (SPEC §8,
    /// approved with edits); `arguments` are then the replacement.
    edited_from: Option<Value>,
}

impl ToolExecution {
    /// An execution as the pipeline would prepare it, for tests of listeners
    /// and for clients that show calls before they run. It carries no tool
    /// metadata, and an id of its own.
    pub fn new(call: &ToolCall, scope: Option<AgentPipelineScope>, cancellation: CancellationToken) -> Self {
        Self::prepare(ExecutionId::fresh(), call, scope, cancellation, None)
    }

    /// Prepares a call. If the raw text does not parse as JSON, the arguments
    /// are that text as a JSON string, so listeners see what the model sent.
    pub(crate) fn prepare(
        id: ExecutionId,
        call: &ToolCall,
        scope: Option<AgentPipelineScope>,
        cancellation: CancellationToken,
        metadata: Option<Arc<Value>>,
    ) -> Self {
        let (arguments, arguments_parsed) = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(value) => (value, true),
            Err(_) => (Value::String(call.arguments.clone()), false),
        };
        Self {
            inner: Arc::new(ExecutionInner {
                id,
                call_id: call.call_id.as_str().into(),
                name: call.name.as_str().into(),
                raw_arguments: call.arguments.clone(),
                arguments,
                arguments_parsed,
                scope,
                cancellation,
                parent_call_id: call.parent_call_id.clone(),
                invocation_context: call.invocation_context.clone(),
                metadata,
                edited_from: None,
            }),
        }
    }

    /// Which execution this is: unique, also among calls sharing a call id.
    pub fn id(&self) -> ExecutionId {
        self.inner.id
    }

    /// The model's call id.
    pub fn call_id(&self) -> &str {
        &self.inner.call_id
    }

    /// The tool name the model asked for.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The call id, shared: a copy costs a reference count, not the text.
    pub fn shared_call_id(&self) -> Arc<str> {
        Arc::clone(&self.inner.call_id)
    }

    /// The tool name, shared.
    pub fn shared_name(&self) -> Arc<str> {
        Arc::clone(&self.inner.name)
    }

    /// The parsed arguments, or the raw text as a JSON string when it did not parse.
    pub fn arguments(&self) -> &Value {
        &self.inner.arguments
    }

    /// The argument text exactly as the model sent it.
    pub fn raw_arguments(&self) -> &str {
        &self.inner.raw_arguments
    }

    /// Whether the raw text parsed as JSON.
    pub fn arguments_parsed(&self) -> bool {
        self.inner.arguments_parsed
    }

    /// The scope the call runs in (`None`: global).
    pub fn scope(&self) -> Option<&AgentPipelineScope> {
        self.inner.scope.as_ref()
    }

    /// The caller's cancellation token.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancellation
    }

    /// The owner of the call's scope, fixed before dispatch.
    pub fn owner(&self) -> Option<&str> {
        self.inner.scope.as_ref().and_then(AgentPipelineScope::owner)
    }

    /// The session id of the call's scope.
    pub fn session_id(&self) -> Option<&str> {
        self.inner.scope.as_ref().and_then(AgentPipelineScope::session_id)
    }

    /// The call this one was made on behalf of.
    pub fn parent_call_id(&self) -> Option<&str> {
        self.inner.parent_call_id.as_deref()
    }

    /// Free context from the caller.
    pub fn invocation_context(&self) -> Option<&Value> {
        self.inner.invocation_context.as_ref()
    }

    /// The free metadata of the resolved tool's registration (`Null` when the
    /// tool is unknown or has none).
    pub fn metadata(&self) -> &Value {
        self.inner.metadata.as_deref().unwrap_or(&NO_METADATA)
    }

    /// The model's own arguments when an approver replaced them
    /// ([`crate::ApprovalAnswer::ApprovedWithEdits`]): `arguments` are then
    /// the approver's, and this is what the model sent.
    pub fn edited_from(&self) -> Option<&Value> {
        self.inner.edited_from.as_ref()
    }

    /// The same execution (same id, call id, scope, token) with `arguments`
    /// in place of the model's, which [`Self::edited_from`] keeps.
    pub(crate) fn with_edited_arguments(&self, arguments: Value) -> Self {
        let inner = &self.inner;
        Self {
            inner: Arc::new(ExecutionInner {
                id: inner.id,
                call_id: Arc::clone(&inner.call_id),
                name: Arc::clone(&inner.name),
                raw_arguments: arguments.to_string(),
                arguments,
                arguments_parsed: true,
                scope: inner.scope.clone(),
                cancellation: inner.cancellation.clone(),
                parent_call_id: inner.parent_call_id.clone(),
                invocation_context: inner.invocation_context.clone(),
                metadata: inner.metadata.clone(),
                edited_from: Some(inner.edited_from.clone().unwrap_or_else(|| inner.arguments.clone())),
            }),
        }
    }

    /// Whether this execution and `other` are the same prepared execution.
    pub fn ptr_eq(&self, other: &ToolExecution) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for ToolExecution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecution")
            .field("id", &self.inner.id)
            .field("call_id", &self.inner.call_id)
            .field("name", &self.inner.name)
            .field("arguments", &self.inner.arguments)
            .field("scope", &self.inner.scope.as_ref().map(AgentPipelineScope::id))
            .finish_non_exhaustive()
    }
}
