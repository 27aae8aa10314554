//! The tool registry: registration, shadowing, declarations and sealing
//! (SPEC §2, §4, §5, §11), and the home of listeners and the answerer.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use crate::callback;
use crate::error::{RegistrationError, json_type_name};
use crate::events::{ToolsChangeEvent, ToolsChangeKind};
use crate::pipeline::approval::ApprovalAnswerer;
use crate::pipeline::execute::ExecuteListener;
use crate::pipeline::guard::ToolGuard;
use crate::pipeline::post_execute::PostExecuteListener;
use crate::pipeline::pre_execute::PreExecuteListener;
use crate::pipeline::result::ResultListener;
use crate::pipeline::{Host, ListenerOrder, PipelineState, StageListener};
use crate::registration::Registration;
use crate::scope::AgentPipelineScope;
use crate::sync::{Ids, read, write};
use crate::tool::{Tool, ToolRegistrationOptions};
use crate::view::{RegisteredTool, SealedToolCatalogView, ToolSchemaSnapshot};

/// Key of the global layer in the tool table; scope ids start at 1.
const GLOBAL: u64 = 0;

type ChangeListener = Arc<dyn Fn(&ToolsChangeEvent) + Send + Sync>;

/// The tool registry (SPEC §1). Cheap to clone (clones share one registry),
/// `Send + Sync`, and meant to be used from many tasks at once: registering
/// and disposing while batches run is normal. No lock is held across an `.await`.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    pub(crate) inner: Arc<RegistryInner>,
}

#[derive(Default)]
pub(crate) struct RegistryInner {
    ids: Ids,
    tools: RwLock<ToolTable>,
    pipeline: PipelineState,
    change_listeners: RwLock<Vec<(u64, ChangeListener)>>,
}

/// Registrations by scope, then by name; each name holds a stack whose last
/// entry is the visible one (latest registration wins within a scope).
#[derive(Default)]
struct ToolTable {
    layers: HashMap<u64, BTreeMap<Arc<str>, Vec<Arc<RegisteredTool>>>>,
    count: usize,
}

fn layer_key(scope: Option<&AgentPipelineScope>) -> u64 {
    scope.map_or(GLOBAL, AgentPipelineScope::id)
}

/// Whether `name` matches `^[A-Za-z0-9_.-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.inner.ids.next()
    }

    fn weak(&self) -> Weak<RegistryInner> {
        Arc::downgrade(&self.inner)
    }

    /// What the pipeline needs of this registry to run a call.
    pub(crate) fn host(&self) -> Host<'_> {
        Host {
            state: &self.inner.pipeline,
            ids: &self.inner.ids,
        }
    }

    /// Registers a tool in `scope` (`None`: globally visible), SPEC §2.
    ///
    /// The schema is compiled once, here. Emits `tools/change`.
    ///
    /// # Errors
    /// An invalid name, a schema that is not an object or does not compile.
    /// Nothing is registered then.
    pub fn register(
        &self,
        tool: Tool,
        scope: Option<&AgentPipelineScope>,
        options: ToolRegistrationOptions,
    ) -> Result<Registration, RegistrationError> {
        if !is_valid_tool_name(&tool.name) {
            return Err(RegistrationError::InvalidName { name: tool.name });
        }
        if !tool.parameters.is_object() {
            return Err(RegistrationError::SchemaNotObject {
                found: json_type_name(&tool.parameters),
                name: tool.name,
            });
        }
        let validator = jsonschema::validator_for(&tool.parameters).map_err(|e| RegistrationError::InvalidSchema {
            message: e.to_string(),
            name: tool.name.clone(),
        })?;
        let id = self.next_id();
        let mut options = options;
        // Kept once, shared with every execution of the tool.
        let metadata = std::mem::take(&mut options.metadata);
        let name: Arc<str> = Arc::from(tool.name);
        let registered = Arc::new(RegisteredTool {
            id,
            name: Arc::clone(&name),
            description: Arc::from(tool.description),
            parameters: Arc::new(tool.parameters),
            validator,
            body: tool.body,
            metadata: (!metadata.is_null()).then(|| Arc::new(metadata)),
            options,
            scope: scope.cloned(),
        });
        let key = layer_key(scope);
        {
            let mut table = write(&self.inner.tools);
            table
                .layers
                .entry(key)
                .or_default()
                .entry(Arc::clone(&name))
                .or_default()
                .push(registered);
            table.count += 1;
        }
        self.emit_change(ToolsChangeKind::Registered, scope.cloned(), &name);

        let weak = self.weak();
        let scope = scope.cloned();
        Ok(Registration::new(move || {
            if let Some(inner) = weak.upgrade() {
                ToolRegistry { inner }.unregister(key, scope, &name, id);
            }
        }))
    }

    fn unregister(&self, key: u64, scope: Option<AgentPipelineScope>, name: &Arc<str>, id: u64) {
        let removed = {
            let mut table = write(&self.inner.tools);
            let mut removed = false;
            if let Some(layer) = table.layers.get_mut(&key) {
                if let Some(stack) = layer.get_mut(name) {
                    if let Some(pos) = stack.iter().position(|t| t.id == id) {
                        stack.remove(pos);
                        removed = true;
                    }
                    if stack.is_empty() {
                        layer.remove(name);
                    }
                }
                if layer.is_empty() {
                    table.layers.remove(&key);
                }
            }
            if removed {
                table.count -= 1;
            }
            removed
        };
        if removed {
            self.emit_change(ToolsChangeKind::Disposed, scope, name);
        }
    }

    /// The declarations visible from `scope`, sorted by ordinal name order
    /// (SPEC §4). `None` sees only global tools.
    pub fn declarations(&self, scope: Option<&AgentPipelineScope>) -> Vec<ToolSchemaSnapshot> {
        self.seal(scope).declarations()
    }

    /// Freezes what is visible from `scope` for one model step (SPEC §5).
    /// Costs what is visible, not what the whole registry holds.
    pub fn seal(&self, scope: Option<&AgentPipelineScope>) -> SealedToolCatalogView {
        let mut visible: BTreeMap<&[u8], &Arc<RegisteredTool>> = BTreeMap::new();
        let table = read(&self.inner.tools);
        let keys = scope
            .into_iter()
            .flat_map(AgentPipelineScope::chain)
            .map(AgentPipelineScope::id)
            .chain(std::iter::once(GLOBAL));
        for key in keys {
            let Some(layer) = table.layers.get(&key) else { continue };
            for (name, stack) in layer {
                if let Some(top) = stack.last() {
                    // Nearer layers were visited first, so they win.
                    visible.entry(name.as_bytes()).or_insert(top);
                }
            }
        }
        let tools = visible.into_values().map(Arc::clone).collect();
        drop(table);
        SealedToolCatalogView::new(scope.cloned(), tools)
    }

    /// How many tool registrations the registry holds, shadowed ones included.
    pub fn tool_count(&self) -> usize {
        read(&self.inner.tools).count
    }

    /// Calls `listener` for every `tools/change` event (SPEC §11), synchronously,
    /// after the registry's locks are released. A panicking listener is contained.
    pub fn on_tools_change(&self, listener: impl Fn(&ToolsChangeEvent) + Send + Sync + 'static) -> Registration {
        let id = self.next_id();
        write(&self.inner.change_listeners).push((id, Arc::new(listener)));
        let weak = self.weak();
        Registration::new(move || {
            if let Some(inner) = weak.upgrade() {
                write(&inner.change_listeners).retain(|(i, _)| *i != id);
            }
        })
    }

    fn emit_change(&self, kind: ToolsChangeKind, scope: Option<AgentPipelineScope>, name: &str) {
        let listeners: Vec<ChangeListener> = read(&self.inner.change_listeners)
            .iter()
            .map(|(_, l)| Arc::clone(l))
            .collect();
        if listeners.is_empty() {
            return;
        }
        let event = ToolsChangeEvent {
            kind,
            scope,
            name: name.to_owned(),
        };
        for listener in listeners {
            if let Err(panicked) = callback::run_sync(|| listener(&event)) {
                tracing::error!(tool = %event.name, %panicked, "tools/change listener panicked");
            }
        }
    }

    fn add_listener(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: StageListener,
    ) -> Registration {
        let id = self.next_id();
        self.inner.pipeline.add_listener(id, scope, order, listener);
        let weak = self.weak();
        Registration::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.pipeline.remove_listener(id);
            }
        })
    }

    /// Adds a pre-execute listener (SPEC §7 step 2) for calls in `scope` or
    /// below (`None`: every call).
    pub fn register_pre_execute(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: impl PreExecuteListener,
    ) -> Registration {
        self.add_listener(scope, order, StageListener::PreExecute(Arc::new(listener)))
    }

    /// Adds a guard (SPEC §7 step 3).
    pub fn register_guard(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        guard: impl ToolGuard,
    ) -> Registration {
        self.add_listener(scope, order, StageListener::Guard(Arc::new(guard)))
    }

    /// Adds an execute wrapper (SPEC §7 step 6).
    pub fn register_execute(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: impl ExecuteListener,
    ) -> Registration {
        self.add_listener(scope, order, StageListener::Execute(Arc::new(listener)))
    }

    /// Adds a post-execute listener (SPEC §7 step 7).
    pub fn register_post_execute(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: impl PostExecuteListener,
    ) -> Registration {
        self.add_listener(scope, order, StageListener::PostExecute(Arc::new(listener)))
    }

    /// Adds a result listener (SPEC §7 step 8): it observes every outcome.
    pub fn register_result(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: impl ResultListener,
    ) -> Registration {
        self.add_listener(scope, order, StageListener::Result(Arc::new(listener)))
    }

    /// How many listeners and guards are registered, all stages together.
    pub fn listener_count(&self) -> usize {
        self.inner.pipeline.listener_count()
    }

    /// Installs the approval answerer (SPEC §8), replacing (and unloading)
    /// any other. Disposing the handle unloads it: calls still waiting on it
    /// fail `UNAVAILABLE`.
    pub fn set_approval_answerer(&self, answerer: impl ApprovalAnswerer) -> Registration {
        let id = self.next_id();
        self.inner.pipeline.approval.install(id, Arc::new(answerer));
        let weak = self.weak();
        Registration::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.pipeline.approval.unload(id);
            }
        })
    }

    /// Whether an approval answerer is installed.
    pub fn has_approval_answerer(&self) -> bool {
        self.inner.pipeline.approval.is_installed()
    }

    /// Sets how long a call waits for an approval answer before it fails
    /// `UNAVAILABLE` (SPEC §8). `None` (the default) leaves it to the answerer.
    pub fn set_approval_timeout(&self, timeout: Option<Duration>) {
        self.inner.pipeline.approval.set_timeout(timeout);
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tool_count())
            .finish_non_exhaustive()
    }
}
