//! `tether mcp proxy` (the MCP gateway in front of one server) and
//! `tether mcp pins` (list and approve pinned tool definitions).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;

use super::{EXIT_BAD_INPUT, start_logging};
use crate::agents::link::socket;
use crate::agents::mcp::{self, ProxyOptions, pins};
use crate::cli::{Cli, McpAction};
use crate::files::policy::Policy;
use crate::files::source::FileErrors;

pub async fn run(cli: &Cli, action: &McpAction, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match action {
        McpAction::Proxy(args) => {
            // stdout is the MCP client's channel: logs go to a file, and a
            // gateway that cannot log still serves.
            let _log_guard = start_logging(cli.log_dir.as_deref()).ok();
            let policy = match &args.policy {
                Some(path) => match Policy::load(path) {
                    Ok(policy) => Some(policy),
                    Err(errors) => {
                        tracing::error!("{}", FileErrors(errors));
                        return Ok(ExitCode::from(EXIT_BAD_INPUT));
                    }
                },
                None => None,
            };
            let name = args.name.clone().unwrap_or_else(|| default_name(&args.command));
            let options = ProxyOptions {
                pins: pins::path_for(&name),
                name,
                command: args.command.clone(),
                socket: args.socket.clone().unwrap_or_else(socket::default_path),
                policy,
            };
            mcp::run_proxy(options).await?;
            Ok(ExitCode::SUCCESS)
        }
        McpAction::Pins { name, approve } => {
            let path = pins::path_for(name);
            let mut file = pins::PinFile::load(&path)?;
            if let Some(tool) = approve {
                if !file.approve(tool) {
                    writeln!(out, "no changed definition of {tool:?} waits in {}", path.display())?;
                    return Ok(ExitCode::from(super::EXIT_FAILED));
                }
                file.save(&path).with_context(|| format!("saving {}", path.display()))?;
                writeln!(out, "approved the new definition of {tool:?}")?;
                return Ok(ExitCode::SUCCESS);
            }
            writeln!(out, "# {}", path.display())?;
            for (tool, pin) in &file.tools {
                let state = if pin.changed.is_some() {
                    "HELD (changed)"
                } else {
                    "pinned"
                };
                let line = format!("{tool}\t{state}\t{}", pin.hash);
                writeln!(out, "{}", crate::sanitize::escape(&line))?;
                if let Some(changed) = &pin.changed {
                    writeln!(
                        out,
                        "  approved: {}",
                        crate::sanitize::escape(&pin.definition.to_string())
                    )?;
                    writeln!(out, "  new:      {}", crate::sanitize::escape(&changed.to_string()))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The server's name when `--name` is left out: its command's file name.
fn default_name(command: &[String]) -> String {
    command
        .first()
        .and_then(|c| std::path::Path::new(c).file_name())
        .map_or_else(|| "mcp".to_owned(), |n| n.to_string_lossy().into_owned())
}
