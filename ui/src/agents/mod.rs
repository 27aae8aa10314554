//! The front doors through which agents reach a session: `link` (the native
//! socket, any language), `hooks` (bridges for Claude Code and Codex) and
//! `mcp` (the MCP gateway, itself a client of the link).
//! Each talks to the same session API; none knows about the others or the screen.

pub mod hooks;
pub mod link;
pub mod mcp;
