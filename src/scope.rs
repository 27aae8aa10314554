//! Scopes: visibility layers for tools and listeners (SPEC §3).

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::ScopeError;

static NEXT_SCOPE_ID: AtomicU64 = AtomicU64::new(1);

/// A visibility layer (SPEC §3). Cheap to clone; identity is by reference, so
/// two scopes built from the same values are different scopes, and clones of
/// one scope are the same scope.
///
/// A call in scope S sees tools registered in S, in any ancestor of S, and
/// globally.
#[derive(Clone)]
pub struct AgentPipelineScope {
    inner: Arc<ScopeInner>,
}

struct ScopeInner {
    id: u64,
    depth: usize,
    parent: Option<AgentPipelineScope>,
    label: Option<String>,
    session_id: Option<String>,
    session: Option<Arc<dyn Any + Send + Sync>>,
    owner: Option<String>,
}

impl AgentPipelineScope {
    /// A root scope with no identity. Use [`AgentPipelineScope::builder`] for more.
    pub fn root() -> Self {
        Self::builder().build_unchecked()
    }

    /// A builder for a scope.
    pub fn builder() -> ScopeBuilder {
        ScopeBuilder::default()
    }

    /// A child of this scope with no identity of its own (it inherits all of it).
    pub fn child(&self) -> Self {
        Self::builder().parent(self).build_unchecked()
    }

    /// A process-unique number for this scope, stable for its lifetime. Useful
    /// as a map key; identity comparisons should use `==`.
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// The parent scope, if any.
    pub fn parent(&self) -> Option<&AgentPipelineScope> {
        self.inner.parent.as_ref()
    }

    /// Number of ancestors (a root has depth 0).
    pub fn depth(&self) -> usize {
        self.inner.depth
    }

    /// A display label (not identity, not inherited).
    pub fn label(&self) -> Option<&str> {
        self.inner.label.as_deref()
    }

    /// The session id, set here or inherited from the nearest ancestor that sets one.
    pub fn session_id(&self) -> Option<&str> {
        self.chain().find_map(|s| s.inner.session_id.as_deref())
    }

    /// The opaque session object, set here or inherited.
    pub fn session(&self) -> Option<&Arc<dyn Any + Send + Sync>> {
        self.chain().find_map(|s| s.inner.session.as_ref())
    }

    /// The owner, set here or inherited.
    pub fn owner(&self) -> Option<&str> {
        self.chain().find_map(|s| s.inner.owner.as_deref())
    }

    /// This scope, then its parent, and so on up to the root.
    pub fn chain(&self) -> impl Iterator<Item = &AgentPipelineScope> {
        std::iter::successors(Some(self), |s| s.parent())
    }

    /// Whether this scope is `ancestor` or one of its descendants.
    pub fn is_within(&self, ancestor: &AgentPipelineScope) -> bool {
        // Walking up stops early once we are shallower than the candidate.
        self.chain()
            .take_while(|s| s.depth() >= ancestor.depth())
            .any(|s| s == ancestor)
    }
}

impl PartialEq for AgentPipelineScope {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for AgentPipelineScope {}

impl std::hash::Hash for AgentPipelineScope {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.id.hash(state);
    }
}

impl fmt::Debug for AgentPipelineScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentPipelineScope")
            .field("id", &self.inner.id)
            .field("label", &self.inner.label)
            .field("parent", &self.parent().map(AgentPipelineScope::id))
            .field("session_id", &self.session_id())
            .field("owner", &self.owner())
            .finish()
    }
}

/// Builds an [`AgentPipelineScope`].
#[derive(Default)]
#[must_use]
pub struct ScopeBuilder {
    parent: Option<AgentPipelineScope>,
    label: Option<String>,
    session_id: Option<String>,
    session: Option<Arc<dyn Any + Send + Sync>>,
    owner: Option<String>,
}

impl ScopeBuilder {
    /// Sets the parent scope.
    pub fn parent(mut self, parent: &AgentPipelineScope) -> Self {
        self.parent = Some(parent.clone());
        self
    }

    /// Sets a display label.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Sets the session id (otherwise inherited).
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Sets the opaque session object (otherwise inherited).
    pub fn session(mut self, session: Arc<dyn Any + Send + Sync>) -> Self {
        self.session = Some(session);
        self
    }

    /// Sets the owner (otherwise inherited). It may not differ from an owner an
    /// ancestor already carries.
    pub fn owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = Some(owner.into());
        self
    }

    /// Builds the scope.
    ///
    /// # Errors
    /// [`ScopeError::OwnerConflict`] when an ancestor carries another owner.
    pub fn build(self) -> Result<AgentPipelineScope, ScopeError> {
        if let (Some(requested), Some(parent)) = (&self.owner, &self.parent) {
            if let Some(inherited) = parent.owner() {
                if inherited != requested {
                    return Err(ScopeError::OwnerConflict {
                        inherited: inherited.to_owned(),
                        requested: requested.clone(),
                    });
                }
            }
        }
        Ok(self.build_unchecked())
    }

    /// Builds a scope that has no parent, so no owner can conflict.
    pub fn build_root(self) -> AgentPipelineScope {
        Self { parent: None, ..self }.build_unchecked()
    }

    fn build_unchecked(self) -> AgentPipelineScope {
        AgentPipelineScope {
            inner: Arc::new(ScopeInner {
                id: NEXT_SCOPE_ID.fetch_add(1, Ordering::Relaxed),
                depth: self.parent.as_ref().map_or(0, |p| p.depth() + 1),
                parent: self.parent,
                label: self.label,
                session_id: self.session_id,
                session: self.session,
                owner: self.owner,
            }),
        }
    }
}
