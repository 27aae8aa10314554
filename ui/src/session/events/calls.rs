//! A batch's calls as the screen shows them: ready, or built a few rows at
//! a time when the console first needs them.

use std::sync::Arc;

use tether_tools::{ToolCall, ToolExecutionMode};

/// Builds call `i` of a screen's batch, classified.
/// Shared, so that every console showing the batch builds its own rows.
pub type CallAt = Arc<dyn Fn(usize) -> (ToolCall, ToolExecutionMode) + Send + Sync>;

/// A batch's calls, classified, as the screen shows them.
#[derive(Clone)]
pub enum CallList {
    Ready(Vec<(ToolCall, ToolExecutionMode)>),
    /// Built by the console a few rows at a time when it first needs them
    /// (to draw them, or to find a call), on its own thread: copying and
    /// classifying a call (which parses its arguments) is no work for the
    /// engine, and none at all for a row that is never drawn.
    Later {
        /// How many calls there are (`call_at` is called below this only).
        len: usize,
        /// Roughly what the closure holds (calls it copied), for the
        /// history's byte limit; 0 when it only refers to shared data.
        bytes: usize,
        call_at: CallAt,
    },
}

impl CallList {
    /// How many calls the list holds or builds.
    pub fn len(&self) -> usize {
        match self {
            CallList::Ready(calls) => calls.len(),
            CallList::Later { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Vec<(ToolCall, ToolExecutionMode)>> for CallList {
    fn from(calls: Vec<(ToolCall, ToolExecutionMode)>) -> Self {
        CallList::Ready(calls)
    }
}

impl std::fmt::Debug for CallList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallList::Ready(calls) => f.debug_tuple("Ready").field(&calls.len()).finish(),
            CallList::Later { len, .. } => f.debug_struct("Later").field("len", len).finish_non_exhaustive(),
        }
    }
}
