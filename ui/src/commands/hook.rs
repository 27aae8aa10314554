//! `tether hook claude-code|codex` (the bridge a coding agent runs for each
//! tool use), `tether hook install` (print or merge the agent's settings)
//! and `tether hook uninstall` (take them out again).

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use super::start_logging;
use crate::agents::hooks::uninstall::{self, FileRecord, Record};
use crate::agents::hooks::{self, AgentKind, Bridge, install, trust};
use crate::agents::link::socket;
use crate::cli::{Cli, HookAction, HookArgs, InstallArgs, UninstallArgs};

pub async fn run(cli: &Cli, action: &HookAction, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (bridge, args) = match action {
        // Once the change is made, a reader that stopped early (`| head -1`) fails nothing.
        HookAction::Install(args) => return install(cli, args, &mut super::UnlessClosed::new(out)),
        HookAction::Uninstall(args) => return uninstall(args, &mut super::UnlessClosed::new(out)),
        HookAction::ClaudeCode(args) => (Bridge::ClaudeCode(args.fallback), &args.common),
        HookAction::Codex(args) => (Bridge::Codex, &args.common),
    };
    bridge_hook(cli, bridge, args, out).await
}

/// The bridge runs once per tool call, twice per call in both agents, so
/// it starts nothing it does not need: logging begins only when there is
/// something to log, after the agent has its answer.
async fn bridge_hook(cli: &Cli, bridge: Bridge, args: &HookArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let mut err = std::io::stderr();
    let mut input = String::new();
    if let Err(error) = std::io::stdin().lock().read_to_string(&mut input) {
        // Exit status 2 with a reason on stderr blocks the call in both agents.
        writeln!(err, "Tether refused the call: the hook input was unreadable ({error})")?;
        log_fallback(cli, &format!("hook input unreadable: {error}"));
        return Ok(ExitCode::from(2));
    }
    let socket = args.socket.clone().unwrap_or_else(socket::default_path);
    let deadline = Duration::from_secs(
        args.deadline
            .unwrap_or_else(|| install::deadline_secs(cli.approval_timeout)),
    );
    let (code, fell_back) = hooks::run(bridge, &socket, deadline, &input, out, &mut err).await?;
    if let Some(why) = fell_back {
        log_fallback(cli, &why);
    }
    Ok(ExitCode::from(code))
}

/// Logs why the bridge fell back; a hook that cannot log has answered anyway.
fn log_fallback(cli: &Cli, why: &str) {
    if let Ok(_guard) = start_logging(cli.log_dir.as_deref()) {
        tracing::warn!(%why, "tether hook fell back");
    }
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
    let config_before = if args.trust && args.write {
        uninstall::read_optional(&config)?
    } else {
        None
    };
    let trusted = if args.trust && args.write {
        let updated = trust::trusted_config(config_before.as_deref().unwrap_or_default(), &entries)
            .map_err(|e| e.context(format!("{}: nothing was changed", config.display())))?;
        Some(updated)
    } else {
        None
    };
    let agent = args.agent.name();
    if args.write {
        let before = uninstall::read_optional(&path)?;
        let kept = uninstall::load(&path)?.unwrap_or_default();
        let written = install::settings_text(&merged)?;
        let holds = before
            .as_deref()
            .is_some_and(|t| uninstall::holds_bridge(args.agent, t));
        let mut record = Record {
            settings: Some(FileRecord::after_write(
                kept.settings.as_ref(),
                before.as_deref(),
                written.clone(),
                holds,
            )),
            config: kept.config.clone(),
        };
        if let Some(updated) = &trusted {
            record.config = Some(FileRecord::after_write(
                kept.config.as_ref(),
                config_before.as_deref(),
                updated.clone(),
                false,
            ));
        }
        uninstall::save(&path, &record)?;
        install::write_text(&path, &written)?;
        writeln!(out, "updated {}", path.display())?;
    } else {
        let text = serde_json::to_string_pretty(&merged)?;
        writeln!(out, "# merge into {}\n{text}", path.display())?;
    }
    writeln!(
        out,
        "the hook runs `{command}`: the console's approval timeout is {} s, the bridge waits {deadline} s, \
         the agent {timeout} s (when the console runs with another --approval-timeout, install with the same: \
         `tether hook install {agent} --approval-timeout SECS`)",
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
    let project = project_flag(args.project.as_deref());
    if args.write {
        writeln!(
            out,
            "next: start the console (`tether serve`), then {}: each of its tool calls now asks the console \
             (with no console running, every call is denied). `tether hook uninstall {agent}{project} --write` \
             takes the bridge out again.",
            agent_start(args.agent)
        )?;
        if let Some(default) = crate::files::policy::default_path().filter(|p| !p.exists()) {
            writeln!(
                out,
                "no policy yet at {}: without one, the console asks about every call. \
                 `tether policy init {agent} --write` writes a starter there (reads and read-only commands \
                 inside the working directory run unasked; secrets and destructive commands are asked).",
                default.display()
            )?;
        }
    } else {
        writeln!(
            out,
            "nothing was written: run again with --write to merge this into {}",
            path.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// ` --project DIR` as the user would type it again, or nothing.
fn project_flag(project: Option<&Path>) -> String {
    project.map_or_else(String::new, |dir| format!(" --project {}", dir.display()))
}

fn agent_start(kind: AgentKind) -> &'static str {
    match kind {
        AgentKind::ClaudeCode => "start Claude Code (`claude`) in a new session",
        AgentKind::Codex => "start Codex (`codex`) in a new session",
    }
}

fn uninstall(args: &UninstallArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let path = install::settings_path(args.agent, args.project.as_deref())?;
    let current = uninstall::read_optional(&path)?;
    let record = uninstall::load(&path)?.unwrap_or_default();
    let exact = record.settings.as_ref().and_then(|r| r.restore(current.as_deref()));
    let stripped = match (&exact, &current) {
        (None, Some(text)) => uninstall::without_bridge(args.agent, &path, text)?,
        _ => None,
    };
    let config = path.with_file_name("config.toml");
    let config_now = match &record.config {
        Some(_) => uninstall::read_optional(&config)?,
        None => None,
    };
    let config_exact = record.config.as_ref().and_then(|r| r.restore(config_now.as_deref()));
    let change = match (&exact, &stripped) {
        (Some(None), _) => format!(
            "removes {} (it did not exist before `tether hook install`)",
            path.display()
        ),
        (Some(Some(_)), _) => format!(
            "restores {} byte for byte as it was before `tether hook install`",
            path.display()
        ),
        (None, Some(_)) => format!(
            "removes the bridge's hooks from {} and keeps everything else (the file changed since the install)",
            path.display()
        ),
        (None, None) => {
            writeln!(out, "no Tether hook in {}: nothing to do", path.display())?;
            if args.write {
                uninstall::forget(&path)?;
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    if !args.write {
        writeln!(out, "{change}")?;
        if config_exact.is_some() {
            writeln!(out, "and restores {} (the trust entries)", config.display())?;
        }
        writeln!(
            out,
            "nothing was written: run again with --write to change {}",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    match (exact, stripped) {
        (Some(original), _) => uninstall::put_back(&path, original)?,
        (None, Some(settings)) => install::write_text(&path, &install::settings_text(&settings)?)?,
        (None, None) => {}
    }
    writeln!(
        out,
        "{}",
        change
            .replacen("removes", "removed", 1)
            .replacen("restores", "restored", 1)
    )?;
    match (config_exact, &record.config) {
        (Some(original), _) => {
            uninstall::put_back(&config, original)?;
            writeln!(out, "restored {} (the trust entries are gone)", config.display())?;
        }
        (None, Some(_)) => writeln!(
            out,
            "left {} alone: it changed since the install (its `hooks.state` entries for the bridge can be deleted by hand)",
            config.display()
        )?,
        (None, None) => {}
    }
    uninstall::forget(&path)?;
    writeln!(
        out,
        "next: agent sessions started from now on run their tools without asking the console; \
         `tether hook install {}` puts the bridge back",
        args.agent.name()
    )?;
    Ok(ExitCode::SUCCESS)
}
