//! Tool definitions and registration options (SPEC §2).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::error::BoxError;
use crate::execution::ToolExecution;

/// The async body of a tool: parsed, validated arguments in, a JSON value or an
/// error out. Implemented for every `Fn(Value, ToolContext) -> impl Future`.
pub trait ToolBody: Send + Sync + 'static {
    /// Runs the tool. `context.cancellation()` fires when the dispatch is cancelled.
    fn invoke(&self, arguments: Value, context: ToolContext) -> BoxFuture<'static, Result<Value, BoxError>>;
}

impl<F, Fut> ToolBody for F
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, BoxError>> + Send + 'static,
{
    fn invoke(&self, arguments: Value, context: ToolContext) -> BoxFuture<'static, Result<Value, BoxError>> {
        Box::pin(self(arguments, context))
    }
}

/// What a tool body gets besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    pub(crate) execution: ToolExecution,
    pub(crate) cancellation: CancellationToken,
}

impl ToolContext {
    /// The prepared execution this body runs for.
    pub fn execution(&self) -> &ToolExecution {
        &self.execution
    }

    /// The dispatch token: the caller's, or one an execute wrapper put in its
    /// place (for example with a deadline). A body should stop when it fires.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }
}

/// A tool as registered: name, description, parameter schema and body (SPEC §2).
#[derive(Clone)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    pub(crate) body: Arc<dyn ToolBody>,
}

impl Tool {
    /// A tool. The name and schema are checked by [`crate::ToolRegistry::register`].
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        body: impl ToolBody,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            body: Arc::new(body),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("parameters", &self.parameters)
            .finish_non_exhaustive()
    }
}

/// Decides whether one call's parsed arguments may run alongside other calls.
pub type ConcurrencyPredicate = Arc<dyn Fn(&Map<String, Value>) -> bool + Send + Sync>;

/// Execution metadata the model never sees (SPEC §2).
#[derive(Clone, Default)]
pub struct ToolRegistrationOptions {
    /// Returns `true` when a call with these arguments is safe to run in
    /// parallel. `None` means every call is exclusive.
    pub is_concurrency_safe: Option<ConcurrencyPredicate>,
    /// Free metadata that policies and the console may read.
    pub metadata: Value,
}

impl ToolRegistrationOptions {
    /// Options whose predicate always says `true`.
    pub fn always_parallel() -> Self {
        Self::default().with_concurrency(|_| true)
    }

    /// Sets the concurrency predicate.
    #[must_use]
    pub fn with_concurrency(mut self, predicate: impl Fn(&Map<String, Value>) -> bool + Send + Sync + 'static) -> Self {
        self.is_concurrency_safe = Some(Arc::new(predicate));
        self
    }

    /// Sets the free metadata.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }
}

impl fmt::Debug for ToolRegistrationOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistrationOptions")
            .field("is_concurrency_safe", &self.is_concurrency_safe.is_some())
            .field("metadata", &self.metadata)
            .finish()
    }
}
