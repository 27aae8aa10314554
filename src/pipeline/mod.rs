//! The four-stage pipeline of one call (SPEC §7): pre-execute, guards,
//! execute, post-execute, then result notification.

pub mod approval;
pub mod execute;
pub mod guard;
pub mod post_execute;
pub mod pre_execute;
pub mod result;
mod run;

use std::sync::Arc;

use crate::registration::Registration;
use crate::registry::{ToolRegistry, write};
use crate::scope::AgentPipelineScope;

pub(crate) use run::{end_early, review_result, run_call};

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

fn stage_of(listeners: &mut Listeners, stage: Stage) -> &mut dyn StageList {
    match stage {
        Stage::PreExecute => &mut listeners.pre_execute,
        Stage::Guard => &mut listeners.guards,
        Stage::Execute => &mut listeners.execute,
        Stage::PostExecute => &mut listeners.post_execute,
        Stage::Result => &mut listeners.result,
    }
}

#[derive(Clone, Copy)]
enum Stage {
    PreExecute,
    Guard,
    Execute,
    PostExecute,
    Result,
}

trait StageList {
    fn remove_id(&mut self, id: u64);
}

impl<T: ?Sized> StageList for Vec<Scoped<T>> {
    fn remove_id(&mut self, id: u64) {
        self.retain(|e| e.id != id);
    }
}

impl ToolRegistry {
    fn add_listener<T: ?Sized>(
        &self,
        stage: Stage,
        list: impl FnOnce(&mut Listeners) -> &mut Vec<Scoped<T>>,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        item: Arc<T>,
    ) -> Registration {
        let id = self.next_id();
        let entry = Scoped {
            id,
            scope: scope.cloned(),
            item,
        };
        {
            let mut guard = write(&self.inner.listeners);
            let mut next = (**guard).clone();
            let entries = list(&mut next);
            match order {
                ListenerOrder::Append => entries.push(entry),
                ListenerOrder::Prepend => entries.insert(0, entry),
            }
            *guard = Arc::new(next);
        }
        let weak = self.weak();
        Registration::new(move || {
            if let Some(inner) = weak.upgrade() {
                let mut guard = write(&inner.listeners);
                let mut next = (**guard).clone();
                stage_of(&mut next, stage).remove_id(id);
                *guard = Arc::new(next);
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
        let item: Arc<dyn PreExecuteListener> = Arc::new(listener);
        self.add_listener(Stage::PreExecute, |l| &mut l.pre_execute, scope, order, item)
    }

    /// Adds a guard (SPEC §7 step 3).
    pub fn register_guard(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        guard: impl ToolGuard,
    ) -> Registration {
        let item: Arc<dyn ToolGuard> = Arc::new(guard);
        self.add_listener(Stage::Guard, |l| &mut l.guards, scope, order, item)
    }

    /// Adds an execute wrapper (SPEC §7 step 6).
    pub fn register_execute(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: impl ExecuteListener,
    ) -> Registration {
        let item: Arc<dyn ExecuteListener> = Arc::new(listener);
        self.add_listener(Stage::Execute, |l| &mut l.execute, scope, order, item)
    }

    /// Adds a post-execute listener (SPEC §7 step 7).
    pub fn register_post_execute(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: impl PostExecuteListener,
    ) -> Registration {
        let item: Arc<dyn PostExecuteListener> = Arc::new(listener);
        self.add_listener(Stage::PostExecute, |l| &mut l.post_execute, scope, order, item)
    }

    /// Adds a result listener (SPEC §7 step 8): it observes every outcome.
    pub fn register_result(
        &self,
        scope: Option<&AgentPipelineScope>,
        order: ListenerOrder,
        listener: impl ResultListener,
    ) -> Registration {
        let item: Arc<dyn ResultListener> = Arc::new(listener);
        self.add_listener(Stage::Result, |l| &mut l.result, scope, order, item)
    }

    /// How many listeners and guards are registered, all stages together.
    pub fn listener_count(&self) -> usize {
        crate::registry::read(&self.inner.listeners).len()
    }
}
