//! The arguments of `tether hook`: the Claude Code and Codex bridges, and
//! installing or uninstalling them in an agent's settings.

use std::path::PathBuf;

use clap::Subcommand;

use super::at_least_one_second;

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
