//! `tether hook claude-code|codex` (the bridge a coding agent runs for each
//! tool use) and `tether hook install` (print or merge the agent's settings).

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use super::start_logging;
use crate::agents::hooks::{self, AgentKind, Bridge, install, trust};
use crate::agents::link::socket;
use crate::cli::{Cli, HookAction, HookArgs, InstallArgs};

pub async fn run(cli: &Cli, action: &HookAction, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (bridge, args) = match action {
        HookAction::Install(args) => return install(cli, args, out),
        HookAction::ClaudeCode(args) => (Bridge::ClaudeCode(args.fallback), &args.common),
        HookAction::Codex(args) => (Bridge::Codex, &args.common),
    };
    bridge_hook(cli, bridge, args, out).await
}

async fn bridge_hook(cli: &Cli, bridge: Bridge, args: &HookArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    // A hook must answer even when it cannot log.
    let _log_guard = start_logging(cli.log_dir.as_deref()).ok();
    let mut err = std::io::stderr();
    let mut input = String::new();
    if let Err(error) = std::io::stdin().lock().read_to_string(&mut input) {
        tracing::warn!(%error, "hook input unreadable");
        // Exit status 2 with a reason on stderr blocks the call in both agents.
        writeln!(err, "Tether refused the call: the hook input was unreadable ({error})")?;
        return Ok(ExitCode::from(2));
    }
    let socket = args.socket.clone().unwrap_or_else(socket::default_path);
    let deadline = Duration::from_secs(
        args.deadline
            .unwrap_or_else(|| install::deadline_secs(cli.approval_timeout)),
    );
    let code = hooks::run(bridge, &socket, deadline, &input, out, &mut err).await?;
    Ok(ExitCode::from(code))
}

fn install(cli: &Cli, args: &InstallArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if args.trust && args.agent != AgentKind::Codex {
        anyhow::bail!("--trust is for Codex; Claude Code runs the hooks in its settings without a trust step");
    }
    let path = install::settings_path(args.agent, args.project.as_deref())?;
    let deadline = install::deadline_secs(cli.approval_timeout);
    let timeout = install::agent_timeout_secs(deadline);
    let command = install::command_line(args.agent, args.socket.as_deref(), deadline)?;
    let merged = install::merged_settings(args.agent, &path, &command, timeout)?;
    let entries = match args.agent {
        AgentKind::Codex => trust::entries(&path, &merged, |c| install::is_bridge(c, AgentKind::Codex)),
        AgentKind::ClaudeCode => Vec::new(),
    };
    let config = path.with_file_name("config.toml");
    // The trust entries are checked before anything is written, so a broken
    // config.toml leaves both files as they were.
    let trusted = if args.trust && args.write {
        let current = match std::fs::read_to_string(&config) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e.into()),
        };
        let updated = trust::trusted_config(&current, &entries)
            .map_err(|e| e.context(format!("{}: nothing was changed", config.display())))?;
        Some(updated)
    } else {
        None
    };
    if args.write {
        install::write_settings(&path, &merged)?;
        writeln!(out, "updated {}", path.display())?;
    } else {
        let text = serde_json::to_string_pretty(&merged)?;
        writeln!(out, "# merge into {}\n{text}", path.display())?;
    }
    writeln!(
        out,
        "the hook runs `{command}`: the console's approval timeout is {} s, the bridge waits {deadline} s, \
         the agent {timeout} s (pass the console's --approval-timeout to `tether hook install` when it is not the default)",
        cli.approval_timeout
    )?;
    if args.agent == AgentKind::Codex {
        if args.trust {
            writeln!(
                out,
                "trust entries for {}:\n{}",
                config.display(),
                trust::shown(&entries)
            )?;
            if let Some(updated) = trusted {
                std::fs::write(&config, updated)?;
                writeln!(out, "trusted {} hooks in {}", entries.len(), config.display())?;
            }
        } else {
            writeln!(
                out,
                "Codex skips hooks it has not been told to trust, silently: the tools then run unchecked.\n\
                 Trust them in Codex's /hooks review, or run this again with --trust to write the entries \
                 into {} (a new entry is needed whenever the hook's command line changes).",
                config.display()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
