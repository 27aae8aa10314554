//! Registration handles: each removes exactly the one thing it registered.

use std::fmt;
use std::sync::{Mutex, PoisonError};

type Disposer = Box<dyn FnOnce() + Send>;

/// Removes exactly one registration (a tool, a listener, a guard, a change
/// listener or an approval answerer) when disposed or dropped (SPEC §2, §7).
///
/// Disposing twice is a no-op. Dropping the handle disposes it, so keep it for
/// as long as the registration should live, or call [`Registration::keep`] to
/// make it permanent.
#[must_use = "dropping a Registration removes what it registered at once; keep it, or call `.keep()`"]
pub struct Registration {
    disposer: Mutex<Option<Disposer>>,
}

impl Registration {
    pub(crate) fn new(disposer: impl FnOnce() + Send + 'static) -> Self {
        Self {
            disposer: Mutex::new(Some(Box::new(disposer))),
        }
    }

    /// Removes the registration. A second call does nothing.
    pub fn dispose(&self) {
        let disposer = self.disposer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(disposer) = disposer {
            disposer();
        }
    }

    /// Whether [`Registration::dispose`] has run.
    pub fn is_disposed(&self) -> bool {
        self.disposer.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// Keeps the registration for the life of the registry: the handle is
    /// consumed and nothing can remove it any more.
    pub fn keep(self) {
        self.disposer.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.dispose();
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("disposed", &self.is_disposed())
            .finish()
    }
}
