//! The front doors through which agents reach a session: `link` (the native
//! socket, any language) and `hooks` (bridges for Claude Code and Codex).
//! Each talks to the same session API; none knows about the others or the screen.

pub mod hooks;
pub mod link;
