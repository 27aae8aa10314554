//! # tether-tools
//!
//! A tool registry that resolves, per scope, the tool declarations a model may
//! see, and pushes every model-requested call through an ordered four-stage
//! pipeline: pre-execute policy, monotonic guards, an execute waterfall around
//! the tool body, post-execute policy, then result notification.
//!
//! The contract is `SPEC.md`; section numbers in the docs refer to it.
//!
//! ```
//! use serde_json::json;
//! use tether_tools::{
//!     AgentPipelineScope, ListenerOrder, Tool, ToolCall, ToolPreDecision, ToolRegistry,
//!     ToolRegistrationOptions,
//! };
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = ToolRegistry::new();
//! let scope = AgentPipelineScope::builder().owner("alice").build().unwrap();
//!
//! let echo = Tool::new(
//!     "echo",
//!     "Echoes its text",
//!     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
//!     |args: serde_json::Value, _ctx| async move { Ok(args["text"].clone()) },
//! );
//! let _tool = registry.register(echo, Some(&scope), ToolRegistrationOptions::default()).unwrap();
//!
//! // A pre-execute listener that denies shouting and defers everything else.
//! let _policy = registry.register_pre_execute(None, ListenerOrder::Append, |execution: tether_tools::ToolExecution, next: tether_tools::PreExecuteNext| async move {
//!     if execution.arguments()["text"].as_str().is_some_and(|t| t.ends_with('!')) {
//!         return Ok(ToolPreDecision::Deny("no shouting".into()));
//!     }
//!     next.run().await
//! });
//!
//! let view = registry.seal(Some(&scope));
//! let cancel = CancellationToken::new();
//! let ok = registry.execute(ToolCall::new("c1", "echo", r#"{"text":"hi"}"#), &view, &cancel).await;
//! assert_eq!(ok.value(), &json!("hi"));
//! let denied = registry.execute(ToolCall::new("c2", "echo", r#"{"text":"hi!"}"#), &view, &cancel).await;
//! assert_eq!(denied.code().map(|c| c.as_str()), Some("DENIED"));
//! assert_eq!(denied.value(), &json!({"message": "no shouting"}));
//! # });
//! ```
#![warn(missing_docs)]

pub mod batch;
mod call;
mod callback;
mod error;
mod events;
mod execution;
pub mod journal;
mod outcome;
pub mod pipeline;
mod registration;
mod registry;
mod scope;
mod sync;
mod tool;
mod view;

pub use batch::{
    BatchOutcome, DeclaredCall, ReadyOutcome, SinkError, SinkFuture, SinkStage, StartedCall, ToolBatchSink,
};
pub use call::ToolCall;
pub use error::{BoxError, RegistrationError, ScopeError};
pub use events::{CoreEvents, ToolsChangeEvent, ToolsChangeKind};
pub use execution::{ExecutionId, ToolExecution};
pub use outcome::{ToolExecutionOutcome, ToolFailure, ToolFailureCode, ToolFunctionResult};
pub use pipeline::ListenerOrder;
pub use pipeline::approval::{ApprovalAnswer, ApprovalAnswerer, ApprovalRequest, ChannelAnswerer, PendingApproval};
pub use pipeline::execute::{ExecuteError, ExecuteListener, ExecuteNext, ToolDispatch, timeout_wrapper};
pub use pipeline::guard::ToolGuard;
pub use pipeline::post_execute::{ExecutedResult, PostExecuteListener, PostExecuteNext, ToolPostDecision};
pub use pipeline::pre_execute::{PreExecuteListener, PreExecuteNext, ToolPreDecision};
pub use pipeline::result::ResultListener;
pub use registration::Registration;
pub use registry::{ToolRegistry, is_valid_tool_name};
pub use scope::{AgentPipelineScope, ScopeBuilder};
pub use tool::{ConcurrencyPredicate, Tool, ToolBody, ToolContext, ToolRegistrationOptions};
pub use view::{SealedToolCatalogView, ToolExecutionMode, ToolSchemaSnapshot, classify};

use tokio_util::sync::CancellationToken;

/// Re-exported so callers name the same token type the engine uses.
pub use tokio_util::sync::CancellationToken as Cancellation;

impl ToolRegistry {
    /// Runs one call through the pipeline against a sealed view (SPEC §7) and
    /// returns its outcome. Never fails: every failure is an outcome with a code.
    pub async fn execute(
        &self,
        call: ToolCall,
        view: &SealedToolCatalogView,
        cancellation: &CancellationToken,
    ) -> ToolExecutionOutcome {
        pipeline::run_call(self.host(), ExecutionId::fresh(), &call, view, cancellation, None, None).await
    }

    /// Runs only post-execute policy and result notification (SPEC §7 steps
    /// 7–8) on a result produced outside the pipeline — by an agent that runs
    /// its own tools and reports back (for example a coding agent's
    /// PostToolUse hook). `Err(message)` is a body failure. The name must
    /// resolve in the view (else `UNKNOWN_TOOL`, and no listener runs but
    /// result notification).
    pub async fn review_result(
        &self,
        call: ToolCall,
        view: &SealedToolCatalogView,
        result: Result<serde_json::Value, String>,
        cancellation: &CancellationToken,
    ) -> ToolExecutionOutcome {
        pipeline::review_result(self.host(), ExecutionId::fresh(), &call, view, cancellation, result).await
    }
}
