//! The arguments of `tether mcp`: the gateway in front of one upstream
//! server (`proxy`) or several (`serve`), installing it, and its pins.

use std::path::PathBuf;

use clap::Subcommand;

use super::at_least_one_second;

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// An MCP server (stdio, or Streamable HTTP with --http) in front of one
    /// upstream server: every tools/call goes through the console's pipeline, then upstream.
    Proxy(McpProxyArgs),
    /// An MCP server (stdio, or Streamable HTTP with --http) in front of several
    /// upstream servers (a `.mcp.json`-shaped file), their tools listed as `<server>__<tool>`.
    Serve(McpServeArgs),
    /// Launch the MCP servers an agent already has configured through
    /// `tether mcp proxy` (prints the change; --write makes it).
    Install(McpInstallArgs),
    /// Put back the MCP servers `tether mcp install` wrapped.
    Uninstall(McpInstallArgs),
    /// List the pinned tool definitions of a server, or approve a changed one.
    Pins {
        /// The server's name (as given to `--name`).
        name: String,
        /// Accept this tool's changed definition.
        #[arg(long, value_name = "TOOL")]
        approve: Option<String>,
    },
}

/// What the gateway does when the console is not running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum McpFallback {
    /// Every call fails with the reason (the only choice: the gateway fails closed).
    Deny,
}

/// What `mcp proxy` and `mcp serve` share: where the console is, what
/// happens without it, and how clients reach the gateway.
#[derive(Debug, clap::Args)]
pub struct GatewayArgs {
    /// The console's socket.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// When the console is not running.
    #[arg(long, value_enum, default_value = "deny")]
    pub fallback: McpFallback,
    /// Run this policy in the gateway when the console is not running (`ask` becomes deny).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Serve MCP clients over Streamable HTTP at this loopback address
    /// (`127.0.0.1:PORT`; port 0 picks one) instead of on stdio; the URL and
    /// a bearer token are printed on stderr.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Serve the client in this process even when the console runs (which
    /// otherwise hosts the gateway): each call then crosses to the console
    /// and back twice, but the server outlives a console restart (its calls
    /// are refused while the console is down).
    #[arg(long)]
    pub no_host: bool,
}

#[derive(Debug, clap::Args)]
pub struct McpProxyArgs {
    /// The server's name: its scope in the console and its pin file (default: what the command runs and a hash of the whole command line, so no two servers share pins).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    #[command(flatten)]
    pub gateway: GatewayArgs,
    /// The upstream server's command and arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct McpServeArgs {
    /// The upstream servers: `{"mcpServers": {"<name>": {"command", "args", "env", "cwd"} or {"url", "headers"}}}`.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    #[command(flatten)]
    pub gateway: GatewayArgs,
}

#[derive(Debug, clap::Args)]
pub struct McpInstallArgs {
    #[arg(value_enum)]
    pub agent: crate::agents::hooks::AgentKind,
    /// Claude Code: the project whose `.mcp.json` to change (default: the
    /// user's `~/.claude.json`). Codex reads MCP servers only from $CODEX_HOME.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Change the file instead of printing what would change.
    #[arg(long)]
    pub write: bool,
    /// The console's socket (default: where `tether serve` listens by default);
    /// written, absolute, into each installed command.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// install: the console's approval timeout, when it is not the default
    /// (the agent's tool timeout is set above it).
    #[arg(long, value_name = "SECS", value_parser = at_least_one_second)]
    pub approval_timeout: Option<u64>,
}
