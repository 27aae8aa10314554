//! `tether hook claude-code|codex` (the bridge a coding agent runs for each
//! tool use) and `tether hook install` (print or merge the agent's settings).

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use super::{EXIT_BAD_INPUT, start_logging};
use crate::agents::hooks;
use crate::agents::link::socket;
use crate::cli::{Cli, HookAction};

pub async fn run(cli: &Cli, action: &HookAction, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (agent, args) = match action {
        HookAction::Install { agent, project, write } => {
            let path = hooks::settings_path(*agent, project.as_deref());
            let merged = hooks::merged_settings(*agent, &path)?;
            if *write {
                hooks::write_settings(&path, &merged)?;
                writeln!(out, "updated {}", path.display())?;
            } else {
                let text = serde_json::to_string_pretty(&merged)?;
                writeln!(out, "# merge into {}\n{text}", path.display())?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        HookAction::ClaudeCode(args) => (hooks::AgentKind::ClaudeCode, args),
        HookAction::Codex(args) => (hooks::AgentKind::Codex, args),
    };
    // A hook must answer even when it cannot log.
    let _log_guard = start_logging(cli.log_dir.as_deref()).ok();
    let mut input = String::new();
    if let Err(error) = std::io::stdin().lock().read_to_string(&mut input) {
        tracing::warn!(%error, "hook input unreadable");
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let socket = args.socket.clone().unwrap_or_else(socket::default_path);
    let deadline = Duration::from_secs(args.deadline);
    hooks::run(agent, &socket, deadline, args.fallback, &input, out).await?;
    Ok(ExitCode::SUCCESS)
}
