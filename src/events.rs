//! Change events (SPEC §11).

use crate::scope::AgentPipelineScope;

/// Names of the engine's events.
#[derive(Debug, Clone, Copy)]
pub struct CoreEvents;

impl CoreEvents {
    /// A tool was registered or disposed somewhere.
    pub const TOOLS_CHANGE: &'static str = "tools/change";
}

/// What happened to a tool registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolsChangeKind {
    /// A tool was registered.
    Registered,
    /// A tool registration was disposed.
    Disposed,
}

/// A `tools/change` event: which tool changed in which scope.
#[derive(Clone, Debug)]
pub struct ToolsChangeEvent {
    /// Registered or disposed.
    pub kind: ToolsChangeKind,
    /// The scope of the registration (`None`: global).
    pub scope: Option<AgentPipelineScope>,
    /// The tool name.
    pub name: String,
}

impl ToolsChangeEvent {
    /// The event name, [`CoreEvents::TOOLS_CHANGE`].
    pub fn event_name(&self) -> &'static str {
        CoreEvents::TOOLS_CHANGE
    }
}
