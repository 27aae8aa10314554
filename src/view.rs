//! Declarations, sealed views and concurrency classification (SPEC §4–6).

use std::fmt;
use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::call::ToolCall;
use crate::callback;
use crate::error::json_type_name;
use crate::execution::ToolExecution;
use crate::scope::AgentPipelineScope;
use crate::tool::{ToolBody, ToolRegistrationOptions};

/// One registration as the registry holds it. Immutable once registered.
pub(crate) struct RegisteredTool {
    pub(crate) id: u64,
    pub(crate) name: Arc<str>,
    pub(crate) description: Arc<str>,
    pub(crate) parameters: Arc<Value>,
    pub(crate) validator: jsonschema::Validator,
    pub(crate) body: Arc<dyn ToolBody>,
    pub(crate) options: ToolRegistrationOptions,
    /// The registration's metadata (taken out of `options`), shared with
    /// every execution of the tool, not copied per call; `None` when null.
    pub(crate) metadata: Option<Arc<Value>>,
    pub(crate) scope: Option<AgentPipelineScope>,
}

impl RegisteredTool {
    /// SPEC §7 step 5: a JSON object that validates against the schema
    /// compiled at registration; the error names every failing instance path.
    pub(crate) fn check_arguments(&self, execution: &ToolExecution) -> Result<(), String> {
        if !execution.arguments_parsed() {
            let detail = serde_json::from_str::<Value>(execution.raw_arguments())
                .err()
                .map_or_else(String::new, |e| format!(": {e}"));
            return Err(format!("arguments are not valid JSON{detail}"));
        }
        let arguments = execution.arguments();
        if !arguments.is_object() {
            return Err(format!(
                "arguments must be a JSON object, found {}",
                json_type_name(arguments)
            ));
        }
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        let problems: Vec<String> = self
            .validator
            .iter_errors(arguments)
            .map(|e| {
                let path = e.instance_path().as_str();
                let path = if path.is_empty() { "/" } else { path };
                format!("at {path}: {e}")
            })
            .collect();
        Err(format!("arguments do not match the schema: {}", problems.join("; ")))
    }

    fn snapshot(&self) -> ToolSchemaSnapshot {
        ToolSchemaSnapshot {
            name: Arc::clone(&self.name),
            description: Arc::clone(&self.description),
            parameters: Arc::clone(&self.parameters),
        }
    }
}

/// What the model sees of one tool (SPEC §4): name, description and parameter
/// schema. Detached: the registry never changes a snapshot it handed out.
#[derive(Clone, PartialEq, Eq)]
pub struct ToolSchemaSnapshot {
    name: Arc<str>,
    description: Arc<str>,
    parameters: Arc<Value>,
}

impl ToolSchemaSnapshot {
    /// The tool name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The parameter schema (a JSON object).
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }
}

impl fmt::Debug for ToolSchemaSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSchemaSnapshot")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("parameters", &self.parameters)
            .finish()
    }
}

impl Serialize for ToolSchemaSnapshot {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ToolSchemaSnapshot", 3)?;
        s.serialize_field("name", &*self.name)?;
        s.serialize_field("description", &*self.description)?;
        s.serialize_field("parameters", &*self.parameters)?;
        s.end()
    }
}

/// Whether a call may overlap with its neighbours (SPEC §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolExecutionMode {
    /// May run alongside other parallel calls of its group.
    Parallel,
    /// An ordering barrier: runs alone.
    Exclusive,
}

impl ToolExecutionMode {
    /// A short form: `"parallel"` or `"exclusive"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Parallel => "parallel",
            Self::Exclusive => "exclusive",
        }
    }
}

/// What is visible from one scope, frozen for one model step (SPEC §5).
///
/// Calls of that step resolve and classify against the view, never against
/// the live registry. Cheap to clone.
#[derive(Clone)]
pub struct SealedToolCatalogView {
    inner: Arc<ViewInner>,
}

struct ViewInner {
    scope: Option<AgentPipelineScope>,
    /// Sorted by ordinal name order, unique by name.
    tools: Vec<Arc<RegisteredTool>>,
}

impl SealedToolCatalogView {
    /// `tools` must be sorted by name and unique.
    pub(crate) fn new(scope: Option<AgentPipelineScope>, tools: Vec<Arc<RegisteredTool>>) -> Self {
        Self {
            inner: Arc::new(ViewInner { scope, tools }),
        }
    }

    /// The scope this view was sealed from (`None`: global).
    pub fn scope(&self) -> Option<&AgentPipelineScope> {
        self.inner.scope.as_ref()
    }

    /// The declarations of the view, sorted by ordinal name order.
    pub fn declarations(&self) -> Vec<ToolSchemaSnapshot> {
        self.inner.tools.iter().map(|t| t.snapshot()).collect()
    }

    /// The names visible in the view, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.inner.tools.iter().map(|t| &*t.name)
    }

    /// How many tools the view holds.
    pub fn len(&self) -> usize {
        self.inner.tools.len()
    }

    /// Whether the view holds no tool.
    pub fn is_empty(&self) -> bool {
        self.inner.tools.is_empty()
    }

    /// Whether `name` resolves in this view.
    pub fn contains(&self, name: &str) -> bool {
        self.resolve(name).is_some()
    }

    /// The free metadata of the tool `name` resolves to.
    pub fn metadata(&self, name: &str) -> Option<&Value> {
        self.resolve(name)
            .map(|t| t.metadata.as_deref().unwrap_or(&crate::execution::NO_METADATA))
    }

    /// The scope the registration behind `name` was made in: `Some(None)` for
    /// a global tool, `None` when `name` is not visible.
    pub fn origin(&self, name: &str) -> Option<Option<&AgentPipelineScope>> {
        self.resolve(name).map(|t| t.scope.as_ref())
    }

    /// The declaration `name` resolves to.
    pub fn declaration(&self, name: &str) -> Option<ToolSchemaSnapshot> {
        self.resolve(name).map(|t| t.snapshot())
    }

    pub(crate) fn resolve(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        let tools = &self.inner.tools;
        tools
            .binary_search_by(|t| t.name.as_bytes().cmp(name.as_bytes()))
            .ok()
            .map(|i| &tools[i])
    }

    /// Checks an execution's arguments as step 5 of the pipeline will (SPEC
    /// §7), with the same message, against the schema compiled at
    /// registration — for a client that shows the verdict before the call
    /// runs (an approval prompt, say).
    ///
    /// # Errors
    /// The `INVALID_ARGS` message, or that the tool is not visible here.
    pub fn check_arguments(&self, execution: &ToolExecution) -> Result<(), String> {
        match self.resolve(execution.name()) {
            Some(tool) => tool.check_arguments(execution),
            None => Err(format!(
                "unknown tool {:?}: no tool of that name is visible here",
                execution.name()
            )),
        }
    }

    /// Classifies a call against this view (SPEC §6). See [`classify`].
    pub fn classify(&self, call: &ToolCall) -> ToolExecutionMode {
        classify(call, self)
    }
}

impl fmt::Debug for SealedToolCatalogView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealedToolCatalogView")
            .field("scope", &self.scope().map(AgentPipelineScope::id))
            .field("tools", &self.names().collect::<Vec<_>>())
            .finish()
    }
}

/// Classifies a call (SPEC §6): `Parallel` only when the tool is visible in
/// the view, its arguments parse to a JSON object, and its concurrency
/// predicate returns `true`. Everything else, a panicking predicate included,
/// is `Exclusive`.
pub fn classify(call: &ToolCall, view: &SealedToolCatalogView) -> ToolExecutionMode {
    let Some(tool) = view.resolve(&call.name) else {
        return ToolExecutionMode::Exclusive;
    };
    let Some(predicate) = tool.options.is_concurrency_safe.as_ref() else {
        return ToolExecutionMode::Exclusive;
    };
    let Ok(Value::Object(arguments)) = serde_json::from_str::<Value>(&call.arguments) else {
        return ToolExecutionMode::Exclusive;
    };
    match callback::run_sync(|| predicate(&arguments)) {
        Ok(true) => ToolExecutionMode::Parallel,
        Ok(false) => ToolExecutionMode::Exclusive,
        Err(panicked) => {
            tracing::warn!(tool = %call.name, call_id = %call.call_id, %panicked, "concurrency predicate panicked; classified exclusive");
            ToolExecutionMode::Exclusive
        }
    }
}
