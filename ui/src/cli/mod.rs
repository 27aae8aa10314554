//! The command line (CONSOLE.md, "Command line"). The top-level commands
//! are here; each group's arguments are in its own child: `serve` (and what
//! `tether serve` and `tether replay` share), `replay`, `hook`, `mcp`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use self::hook::{ClaudeCodeHookArgs, CodexHookArgs, HookAction, HookArgs, InstallArgs, UninstallArgs};
pub use self::mcp::{GatewayArgs, McpAction, McpFallback, McpInstallArgs, McpProxyArgs, McpServeArgs};
pub use self::replay::{ReplayArgs, ReplayFilter};
pub use self::serve::{AttachArgs, ConsoleArgs, HistoryArgs, NotifyArgs, ServeAnswer, ServeArgs};
pub use self::web::{WebAction, WebArgs};
pub use crate::session::review::ReviewReplay;

mod hook;
mod mcp;
mod replay;
mod serve;
mod settle;
mod web;

/// Tether: approve an AI agent's tool calls by hand, replay demo batches for
/// policy debugging, and browse the declarations each scope can see.
///
/// On an approval prompt: y approves once, e edits the arguments and Ctrl+S
/// approves the edited call (policy judges the edit again), n rejects with a
/// reason, Esc rejects, a approves always; ? lists every key.
#[derive(Debug, Parser)]
#[command(name = "tether", version, about)]
pub struct Cli {
    /// Where log files go (default: the platform's state or temp directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,

    /// Seconds a call waits for a human before it fails UNAVAILABLE; the
    /// same written before or after the subcommand, refused where it would
    /// do nothing.
    #[arg(long, default_value_t = 120, value_name = "SECS", value_parser = at_least_one_second)]
    pub approval_timeout: u64,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a scenario (or a journal) batch by batch.
    Replay(ReplayArgs),
    /// The console with the agent link open: agents connect and run their batches through it.
    Serve(ServeArgs),
    /// Send a batch to a running console as an agent would, and print the outcomes.
    ///
    /// Exit status: 0 when every call succeeded, 1 when at least one did not
    /// (its outcome line says why), 2 on bad input (the batch file), 3 when
    /// no console could be reached, or it refused or broke off the batch.
    Send {
        /// The batch file (session, tools, calls; see docs/protocol.md).
        batch: PathBuf,
        /// The console's socket.
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
    },
    /// Bridge a coding agent's tool-use hooks to the running console.
    Hook {
        #[command(subcommand)]
        action: HookAction,
    },
    /// The MCP gateway: put the console in front of an MCP server.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Open the screen of a running `tether serve --attach` in this terminal:
    /// the same panes and approval queue; the first console to answer wins.
    Attach(AttachArgs),
    /// Phones and browsers that answer approvals (`tether serve --web`):
    /// pair one, list them, revoke one.
    Web {
        #[command(subcommand)]
        action: WebAction,
    },
    /// Policy files: start one from a starter for your agent.
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// Show how a shell command is read: each command bash would run, which
    /// the read-only catalogue (`@read-only`) covers word by word or refuses
    /// and why, and every command deny and ask rules see.
    ///
    /// Exit status: 0 when the catalogue covers every command, 1 when not.
    Explain {
        /// The directory the command would run in (paths are judged from
        /// it; default: the current directory).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The command, after `--` (one quoted argument, or its words).
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Validate scenario and policy files; print every error with file, line and column.
    Check {
        /// Scenario, policy or journal files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyAction {
    /// Print a starter policy (or write it with --write): reads and read-only
    /// commands inside the working directory run unasked, secrets and
    /// destructive commands are asked, every rule with examples.
    Init {
        /// The agent (or the MCP gateway) the policy is for.
        #[arg(value_enum)]
        agent: crate::files::policy::Starter,
        /// Write it to FILE (never over an existing file) instead of printing it;
        /// with no FILE, to the default policy ($XDG_CONFIG_HOME/tether/policy.json).
        #[arg(long, value_name = "FILE")]
        write: Option<Option<PathBuf>>,
        /// Send every call no rule decides to a model reviewer first (the
        /// key read from ANTHROPIC_API_KEY, or OPENAI_API_KEY for codex); it
        /// allows, denies or asks you, and asks you whenever it fails.
        #[arg(long)]
        with_reviewer: bool,
    },
}

/// An approval timeout in whole seconds, at least one: a call must be able
/// to wait for its human.
fn at_least_one_second(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("an approval timeout is at least 1 second".to_owned()),
        Ok(secs) => Ok(secs),
        Err(_) => Err(format!("{text:?} is not a whole number of seconds")),
    }
}
