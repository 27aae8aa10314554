//! `tether mcp proxy` (the MCP gateway in front of one server), `tether mcp
//! serve` (in front of several) and `tether mcp pins` (list and approve
//! pinned tool definitions).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use super::{EXIT_BAD_INPUT, start_logging};
use crate::agents::link::socket;
use crate::agents::mcp::{self, GatewayOptions, Naming, ServerSpec, pins};
use crate::cli::{Cli, McpAction};
use crate::files::mcp_servers::{self, StdioServer};
use crate::files::policy::Policy;
use crate::files::source::FileErrors;

pub async fn run(cli: &Cli, action: &McpAction, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match action {
        McpAction::Proxy(args) => {
            // stdout is the MCP client's channel: logs go to a file, and a
            // gateway that cannot log still serves.
            let _log_guard = start_logging(cli.log_dir.as_deref()).ok();
            let Ok(policy) = policy(args.policy.as_deref()) else {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            };
            let name = args.name.clone().unwrap_or_else(|| default_name(&args.command));
            let server = StdioServer {
                name,
                command: args.command.clone(),
                env: Default::default(),
                cwd: None,
            };
            let options = GatewayOptions {
                servers: vec![spec(server)],
                naming: Naming::Original,
                socket: args.socket.clone().unwrap_or_else(socket::default_path),
                policy,
            };
            mcp::run(options).await?;
            Ok(ExitCode::SUCCESS)
        }
        McpAction::Serve(args) => {
            let _log_guard = start_logging(cli.log_dir.as_deref()).ok();
            let servers = match mcp_servers::load(&args.config) {
                Ok(servers) => servers,
                Err(errors) => {
                    // stderr, not stdout: stdout belongs to the MCP client.
                    let errors = FileErrors(errors);
                    tracing::error!("{errors}");
                    anyhow::bail!("{errors}");
                }
            };
            let Ok(policy) = policy(args.policy.as_deref()) else {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            };
            let options = GatewayOptions {
                servers: servers.into_iter().map(spec).collect(),
                naming: Naming::Prefixed,
                socket: args.socket.clone().unwrap_or_else(socket::default_path),
                policy,
            };
            mcp::run(options).await?;
            Ok(ExitCode::SUCCESS)
        }
        McpAction::Pins { name, approve } => pins_command(name, approve.as_deref(), out),
    }
}

fn spec(server: StdioServer) -> ServerSpec {
    ServerSpec {
        pins: pins::path_for(&server.name),
        server,
    }
}

/// The gateway's own policy, for when the console is down; a bad file is
/// logged and refused.
fn policy(path: Option<&Path>) -> Result<Option<Policy>, ()> {
    match path.map(Policy::load) {
        None => Ok(None),
        Some(Ok(policy)) => Ok(Some(policy)),
        Some(Err(errors)) => {
            tracing::error!("{}", FileErrors(errors));
            Err(())
        }
    }
}

fn pins_command(name: &str, approve: Option<&str>, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
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

/// The server's name when `--name` is left out: its command's file name.
fn default_name(command: &[String]) -> String {
    command
        .first()
        .and_then(|c| std::path::Path::new(c).file_name())
        .map_or_else(|| "mcp".to_owned(), |n| n.to_string_lossy().into_owned())
}
