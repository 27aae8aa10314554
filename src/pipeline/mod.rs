//! The four-stage pipeline of one call (SPEC §7): pre-execute, guards,
//! execute, post-execute, then result notification.

pub mod approval;
pub mod execute;
pub mod guard;
pub mod post_execute;
pub mod pre_execute;
pub mod result;
mod run;

use std::sync::{Arc, RwLock};

use crate::scope::AgentPipelineScope;
use crate::sync::{Ids, read, write};

pub(crate) use run::{end_early, review_result, run_call};

use approval::Approval;
use execute::ExecuteListener;
use guard::ToolGuard;
use post_execute::PostExecuteListener;
use pre_execute::PreExecuteListener;
use result::ResultListener;

/// Where a new listener goes among the current listeners of its stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ListenerOrder {
    /// After every current listener (registration order).
    #[default]
    Append,
    /// Before every current listener (the seed's `prepend: true`).
    Prepend,
}

/// One listener with the scope it applies to.
pub(crate) struct Scoped<T: ?Sized> {
    id: u64,
    scope: Option<AgentPipelineScope>,
    pub(crate) item: Arc<T>,
}

impl<T: ?Sized> Clone for Scoped<T> {
    fn clone(&self) -> Self {
        Self {
            id: self.id,
            scope: self.scope.clone(),
            item: Arc::clone(&self.item),
        }
    }
}

impl<T: ?Sized> Scoped<T> {
    /// A listener registered with scope S applies to calls in S or below;
    /// `None` applies to every call.
    fn applies_to(&self, call_scope: Option<&AgentPipelineScope>) -> bool {
        match (&self.scope, call_scope) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(s), Some(call)) => call.is_within(s),
        }
    }
}

/// Every stage's listeners, in order.
#[derive(Default, Clone)]
pub(crate) struct Listeners {
    pub(crate) pre_execute: Vec<Scoped<dyn PreExecuteListener>>,
    pub(crate) guards: Vec<Scoped<dyn ToolGuard>>,
    pub(crate) execute: Vec<Scoped<dyn ExecuteListener>>,
    pub(crate) post_execute: Vec<Scoped<dyn PostExecuteListener>>,
    pub(crate) result: Vec<Scoped<dyn ResultListener>>,
}

impl Listeners {
    fn len(&self) -> usize {
        self.pre_execute.len() + self.guards.len() + self.execute.len() + self.post_execute.len() + self.result.len()
    }
}

/// The index and listener of the first entry at or after `from` that applies
/// to a call in `scope`.
pub(crate) fn next_applicable<'a, T: ?Sized>(
    entries: &'a [Scoped<T>],
    from: usize,
    scope: Option<&AgentPipelineScope>,
) -> Option<(usize, &'a Arc<T>)> {
    entries
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, e)| e.applies_to(scope))
        .map(|(i, e)| (i, &e.item))
}

/// Every listener of a slice that applies to a call in `scope`, in order.
pub(crate) fn applicable<'a, T: ?Sized>(
    entries: &'a [Scoped<T>],
    scope: Option<&'a AgentPipelineScope>,
) -> impl Iterator<Item = &'a Arc<T>> {
    entries.iter().filter(move |e| e.applies_to(scope)).map(|e| &e.item)
}

/// One listener of any stage, as the registry hands it over.
pub(crate) enum StageListener {
    PreExecute(Arc<dyn PreExecuteListener>),
    Guard(Arc<dyn ToolGuard>),
    Execute(Arc<dyn ExecuteListener>),
    PostExecute(Arc<dyn PostExecuteListener>),
    Result(Arc<dyn ResultListener>),
}

/// What the pipeline keeps for one registry: every stage's listeners
/// (copy-on-write, so a call works on one snapshot and no lock is held while
/// it runs) and the approval capability.
#[derive(Default)]
pub(crate) struct PipelineState {
    listeners: RwLock<Arc<Listeners>>,
    pub(crate) approval: Approval,
}

impl PipelineState {
    /// The listeners of every stage, as they are now.
    pub(crate) fn listeners(&self) -> Arc<Listeners> {
        Arc::clone(&read(&self.listeners))
    }

    /// Adds a listener under a registry-unique `id`.
    pub(crate) fn add_listener(
        &self,
        id: u64,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: StageListener,
    ) {
        fn place<T: ?Sized>(entries: &mut Vec<Scoped<T>>, order: ListenerOrder, entry: Scoped<T>) {
            match order {
                ListenerOrder::Append => entries.push(entry),
                ListenerOrder::Prepend => entries.insert(0, entry),
            }
        }
        let scope = scope.cloned();
        let mut guard = write(&self.listeners);
        let mut next = (**guard).clone();
        match listener {
            StageListener::PreExecute(item) => place(&mut next.pre_execute, order, Scoped { id, scope, item }),
            StageListener::Guard(item) => place(&mut next.guards, order, Scoped { id, scope, item }),
            StageListener::Execute(item) => place(&mut next.execute, order, Scoped { id, scope, item }),
            StageListener::PostExecute(item) => place(&mut next.post_execute, order, Scoped { id, scope, item }),
            StageListener::Result(item) => place(&mut next.result, order, Scoped { id, scope, item }),
        }
        *guard = Arc::new(next);
    }

    /// Removes the listener added under `id`, whatever its stage.
    pub(crate) fn remove_listener(&self, id: u64) {
        let mut guard = write(&self.listeners);
        let mut next = (**guard).clone();
        next.pre_execute.retain(|e| e.id != id);
        next.guards.retain(|e| e.id != id);
        next.execute.retain(|e| e.id != id);
        next.post_execute.retain(|e| e.id != id);
        next.result.retain(|e| e.id != id);
        *guard = Arc::new(next);
    }

    /// How many listeners and guards there are, all stages together.
    pub(crate) fn listener_count(&self) -> usize {
        read(&self.listeners).len()
    }
}

/// The registry a call runs in, as the pipeline sees it.
#[derive(Clone, Copy)]
pub(crate) struct Host<'a> {
    pub(crate) state: &'a PipelineState,
    pub(crate) ids: &'a Ids,
}
