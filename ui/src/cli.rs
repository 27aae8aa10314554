//! The command line (CONSOLE.md, "Command line").

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::files::scenario::NamedAnswer;
pub use crate::session::review::ReviewReplay;

mod settle;

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
    /// Policy files: start one from a starter for your agent.
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
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

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The socket to listen on (default: /run/user/UID/tether/console.sock when that is your runtime dir, else $TMPDIR/tether-UID/console.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// A policy file (default: $XDG_CONFIG_HOME/tether/policy.json when it exists; without one, every call is asked; see docs/policy.md).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// No terminal UI: print one JSON line per outcome; approvals get --answer.
    #[arg(long)]
    pub headless: bool,
    /// With --headless: how every approval is answered (`attached`: it waits
    /// for a console attached with `tether attach`, up to the approval timeout).
    /// A call whose arguments fail its schema is not answered: it fails INVALID_ARGS.
    #[arg(long, value_enum, default_value = "none", value_name = "ANSWER")]
    pub answer: ServeAnswer,
    /// Let other terminals open this console's screen with `tether attach`
    /// (they must give the one-time code the header shows; headless: stderr).
    #[arg(long)]
    pub attach: bool,
    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// What `tether serve` and `tether replay` both take: the journal, how long
/// a call waits for a human, how the human is told, and how much is kept.
#[derive(Debug, Default, clap::Args)]
pub struct ConsoleArgs {
    /// Append every call and result to this journal (JSON lines, mode 0600).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Seconds a call waits for a human before it fails UNAVAILABLE.
    #[arg(long, default_value_t = 120, value_name = "SECS", value_parser = at_least_one_second)]
    pub approval_timeout: u64,
    #[command(flatten)]
    pub notify: NotifyArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
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

/// How `tether serve --headless` answers approvals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ServeAnswer {
    Approve,
    Reject,
    Timeout,
    None,
    /// Wait for a console attached with `tether attach` (needs `--attach`).
    Attached,
}

impl ServeAnswer {
    /// The scripted answer, or `None` for `attached`.
    pub fn scripted(self) -> Option<NamedAnswer> {
        match self {
            ServeAnswer::Approve => Some(NamedAnswer::Approve),
            ServeAnswer::Reject => Some(NamedAnswer::Reject),
            ServeAnswer::Timeout => Some(NamedAnswer::Timeout),
            ServeAnswer::None => Some(NamedAnswer::None),
            ServeAnswer::Attached => None,
        }
    }
}

/// How the human hears that an approval waits.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct NotifyArgs {
    /// On the console's terminal when an approval starts waiting: a comma
    /// list of `bell` (BEL) and `osc` (a desktop notification by OSC 9 and
    /// OSC 777, passed through tmux), or `none`.
    #[arg(long, value_name = "LIST", default_value = "bell")]
    pub notify: crate::session::notify::TerminalNotify,
    /// Run this through `sh -c` when an approval starts waiting, a quarter of
    /// its time is left, and it ends; one JSON object on stdin (see
    /// docs/attach.md). Never waited for; killed after 10 s.
    #[arg(long, value_name = "CMD")]
    pub notify_cmd: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct AttachArgs {
    /// The socket `tether serve` listens on (default: as `tether serve`).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The six-digit code the serving console shows (asked for when left out).
    #[arg(long, value_name = "N")]
    pub code: Option<String>,
    /// Only watch: this console cannot answer.
    #[arg(long)]
    pub view: bool,
}

/// How much the console keeps, and how the journal is cut.
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct HistoryArgs {
    /// With --journal: start a new numbered journal file (FILE.1, FILE.2, …)
    /// once the current one reaches this size; a batch's records are never
    /// split, and `tether replay FILE` reads the whole set (default: one file).
    #[arg(long, value_name = "MB")]
    pub journal_max_mb: Option<u64>,
    /// Most recent batches kept in full on screen, for a console left open
    /// all day; older ones keep a one-line summary and are read back from
    /// the journal (--journal) when opened with `[`, or say they were dropped.
    #[arg(long, default_value_t = 500, value_name = "N")]
    pub history_batches: usize,
    /// Most memory (estimated) for the batches kept in full; whichever of
    /// this and --history-batches is reached first evicts the oldest.
    #[arg(long, default_value_t = 64, value_name = "MB")]
    pub history_mb: usize,
}

impl Default for HistoryArgs {
    fn default() -> Self {
        Self {
            journal_max_mb: None,
            history_batches: 500,
            history_mb: 64,
        }
    }
}

impl HistoryArgs {
    /// The journal's rotation size in bytes.
    pub fn journal_max_bytes(&self) -> Option<u64> {
        self.journal_max_mb.map(|mb| mb.saturating_mul(1 << 20))
    }

    /// The screen's history limits.
    pub fn limits(&self) -> crate::tui::app::HistoryLimits {
        crate::tui::app::HistoryLimits {
            batches: self.history_batches.max(1),
            bytes: self.history_mb.saturating_mul(1 << 20),
            ..crate::tui::app::HistoryLimits::default()
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// A scenario file or a journal (JSON lines); the bundled default demo when left out.
    pub scenario: Option<PathBuf>,

    /// A policy file (default: X.policy.json beside X.json when there is one,
    /// and the bundled demo brings its own; without one every call is asked).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// With --headless and a journal: replay under the policy file the
    /// journal was last recorded under (its header, or a later reload).
    #[arg(long, conflicts_with = "policy", requires = "headless")]
    pub policy_from_journal: bool,

    /// No terminal UI: print one line per outcome and a summary; exit 0 when
    /// every expectation holds, 1 when one fails, 2 on bad input.
    #[arg(long)]
    pub headless: bool,

    /// With --headless: how to answer approvals the scenario does not script
    /// (a call whose arguments fail its schema is not answered: it fails INVALID_ARGS).
    #[arg(long, value_enum, default_value = "none", value_name = "ANSWER")]
    pub answer: NamedAnswer,

    /// With --headless: JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,

    /// What a call the policy routes to a reviewer gets: the verdict the
    /// journal recorded for it (`recorded`; a call with none is asked), or
    /// the reviewer called again (`live`: commands run, models are asked).
    #[arg(long, value_enum, default_value = "recorded", value_name = "HOW")]
    pub review: ReviewReplay,

    #[command(flatten)]
    pub filter: ReplayFilter,

    /// Run every batch without waiting for a key.
    #[arg(long)]
    pub auto: bool,

    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// Which calls a headless replay shows: each filter given must match, the
/// recorded call or the replayed one.
#[derive(Debug, Default, clap::Args)]
pub struct ReplayFilter {
    /// With --headless: only calls this decided, recorded or now: a kind
    /// (human, rule, guard, always-rule, timeout, …) or one decider
    /// (rule:ask-all, human@main).
    #[arg(long, value_name = "DECIDER", requires = "headless")]
    pub decided_by: Option<String>,

    /// With --headless: only calls of the tools this glob matches.
    #[arg(long, value_name = "GLOB", requires = "headless")]
    pub tool: Option<String>,

    /// With --headless: only calls with this outcome, recorded or now (ok,
    /// DENIED, UNAVAILABLE, …).
    #[arg(long, value_name = "CODE", requires = "headless")]
    pub code: Option<String>,
}

impl ReplayArgs {
    /// `tether` with no arguments: the console on the bundled default demo.
    pub fn default_demo(approval_timeout: u64) -> Self {
        Self {
            scenario: None,
            policy: None,
            policy_from_journal: false,
            headless: false,
            answer: NamedAnswer::None,
            json: false,
            review: ReviewReplay::Recorded,
            filter: ReplayFilter::default(),
            auto: false,
            console: ConsoleArgs {
                approval_timeout,
                ..ConsoleArgs::default()
            },
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The console's socket.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Seconds to wait for the console (default: the approval timeout + 15);
    /// keep it below the agent's hook timeout, which `hook install` sets 15 s higher.
    #[arg(long, value_name = "SECS")]
    pub deadline: Option<u64>,
    /// The console's approval timeout, when it is not the default (sets the default --deadline).
    #[arg(long, value_name = "SECS", value_parser = at_least_one_second)]
    pub approval_timeout: Option<u64>,
}

#[derive(Debug, clap::Args)]
pub struct ClaudeCodeHookArgs {
    #[command(flatten)]
    pub common: HookArgs,
    /// What to answer when the console cannot decide: deny, or ask (Claude
    /// Code shows its own prompt; in `claude -p` that is a refusal too).
    #[arg(long, value_enum, default_value = "deny")]
    pub fallback: crate::agents::hooks::Fallback,
}

#[derive(Debug, clap::Args)]
pub struct CodexHookArgs {
    #[command(flatten)]
    pub common: HookArgs,
    /// Always deny for Codex, which runs the tool when a hook answers ask.
    #[arg(long, hide = true, value_name = "deny", value_parser = codex_fallback)]
    pub fallback: Option<crate::agents::hooks::Fallback>,
}

/// Only `deny`: Codex treats a hook's `ask` as unsupported and runs the tool.
fn codex_fallback(value: &str) -> Result<crate::agents::hooks::Fallback, String> {
    match value {
        "deny" => Ok(crate::agents::hooks::Fallback::Deny),
        _ => Err(
            "Codex runs the tool when a hook answers `ask`, so the Codex bridge always denies \
                  when the console cannot decide; leave --fallback out"
                .to_owned(),
        ),
    }
}

#[derive(Debug, Subcommand)]
pub enum HookAction {
    /// Claude Code's hook (PreToolUse, PermissionRequest, PostToolUse): JSON on stdin, the decision on stdout.
    ClaudeCode(ClaudeCodeHookArgs),
    /// Codex CLI's hook (PreToolUse, PermissionRequest, PostToolUse): JSON on stdin, the decision on stdout.
    Codex(CodexHookArgs),
    /// Print (or with --write, merge in) the settings that register the bridge.
    Install(InstallArgs),
    /// Take the bridge out of the agent's settings (the file comes back byte
    /// for byte when nothing else changed it); prints the change, --write makes it.
    Uninstall(UninstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[arg(value_enum)]
    pub agent: crate::agents::hooks::AgentKind,
    /// Claude Code: the project whose `.claude/settings.json` to change
    /// (default: the user's). Codex reads hooks only from $CODEX_HOME.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Merge into the settings file instead of printing; other hooks are kept.
    #[arg(long)]
    pub write: bool,
    /// Codex: also trust the bridge's hooks in $CODEX_HOME/config.toml, as
    /// Codex's /hooks review would (Codex silently skips untrusted hooks).
    #[arg(long)]
    pub trust: bool,
    /// The console's socket (default: where `tether serve` listens by default);
    /// written, absolute, into the installed command.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The console's approval timeout, when it is not the default: the
    /// bridge's deadline and the agent's hook timeout are set above it.
    #[arg(long, value_name = "SECS", value_parser = at_least_one_second)]
    pub approval_timeout: Option<u64>,
}

#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    #[arg(value_enum)]
    pub agent: crate::agents::hooks::AgentKind,
    /// Claude Code: the project whose `.claude/settings.json` to change
    /// (default: the user's). Codex reads hooks only from $CODEX_HOME.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Change the file instead of printing what would change.
    #[arg(long)]
    pub write: bool,
}

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

#[derive(Debug, clap::Args)]
pub struct McpProxyArgs {
    /// The server's name: its scope in the console and its pin file (default: what the command runs and a hash of the whole command line, so no two servers share pins).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
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
    /// The upstream server's command and arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct McpServeArgs {
    /// The upstream servers: `{"mcpServers": {"<name>": {"command", "args", "env", "cwd"} or {"url", "headers"}}}`.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
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
