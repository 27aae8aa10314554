//! The Tether console as a library: everything the `tether` binary runs, so
//! tests can drive it without a process.
//!
//! The layers, lowest first; each may use only those above it in this list:
//! - [`sanitize`]: escaping of anything a model or agent wrote.
//! - [`paths`]: paths resolved as the agent's process would.
//! - [`subagent`]: which subagent made a call, as its front door said.
//! - [`shell`]: shell commands read as bash reads them, and command patterns.
//! - [`files`]: scenario, policy and journal formats with located errors.
//! - [`session`]: a running console's parts — policy listeners, approvals,
//!   observer, decision trail, replay runner, journal file.
//! - [`agents`]: the front doors onto a session (native link, hook bridges).
//! - [`tui`]: the screen — state, drawing, keys, the event loop.
//! - [`commands`]: one module per subcommand; [`cli`] declares them.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agents;
pub mod cli;
pub mod commands;
pub mod files;
pub mod paths;
pub mod sanitize;
pub mod secrets;
pub mod session;
pub mod shell;
pub mod subagent;
pub mod tui;
pub mod web;
