//! `tether mcp proxy` (the MCP gateway in front of one server), `tether mcp
//! serve` (in front of several) and `tether mcp pins` (list and approve
//! pinned tool definitions).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use super::{EXIT_BAD_INPUT, start_logging};
use crate::agents::hooks::install::{agent_timeout_secs, deadline_secs, installed_socket, program};
use crate::agents::link::socket;
use crate::agents::mcp::install::{self, Record, Wrap};
use crate::agents::mcp::{self, GatewayOptions, Naming, ServerSpec, pins};
use crate::cli::{Cli, GatewayArgs, McpAction, McpInstallArgs};
use crate::files::mcp_servers::{self, McpServer};
use crate::files::policy::Policy;
use crate::files::source::FileErrors;

pub async fn run(cli: &Cli, action: &McpAction, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match action {
        McpAction::Proxy(args) => {
            // stdout is the MCP client's channel: logs go to a file, and a
            // gateway that cannot log still serves.
            let _log_guard = start_logging(cli.log_dir.as_deref()).ok();
            let name = args.name.clone().unwrap_or_else(|| default_name(&args.command));
            tracing::info!(server = %name, "the upstream's name: its scope and its pin file (`tether mcp pins {name}`)");
            let servers = vec![McpServer::stdio(name, args.command.clone())];
            gateway(servers, Naming::Original, &args.gateway).await
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
            gateway(servers, Naming::Prefixed, &args.gateway).await
        }
        McpAction::Install(args) => install_command(cli, args, out),
        McpAction::Uninstall(args) => uninstall_command(args, out),
        McpAction::Pins { name, approve } => pins_command(name, approve.as_deref(), out),
    }
}

/// The gateway in front of `servers` on stdio, or over Streamable HTTP at
/// a loopback address, as `args` say.
async fn gateway(servers: Vec<McpServer>, naming: Naming, args: &GatewayArgs) -> anyhow::Result<ExitCode> {
    let Ok(policy) = policy(args.policy.as_deref()) else {
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    };
    let options = GatewayOptions {
        servers: servers.into_iter().map(spec).collect(),
        naming,
        socket: args.socket.clone().unwrap_or_else(socket::default_path),
        policy,
        hosted: None,
        no_host: args.no_host,
    };
    match args.http {
        None => mcp::run(options).await?,
        Some(addr) => {
            if let Err(error) = mcp::loopback_only(&addr) {
                tracing::error!("{error}");
                anyhow::bail!(error);
            }
            mcp::serve_http(options, addr, &mut std::io::stderr()).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn spec(server: McpServer) -> ServerSpec {
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

fn read_or_empty(path: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn load_record(path: &Path) -> anyhow::Result<Option<Record>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn save_record(path: &Path, record: &Record) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(serde_json::to_string_pretty(record)?.as_bytes())?;
    Ok(())
}

fn install_command(cli: &Cli, args: &McpInstallArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let path = install::config_path(args.agent, args.project.as_deref())?;
    let text = read_or_empty(&path)?;
    let socket = installed_socket(args.socket.as_deref())?;
    let timeout = agent_timeout_secs(deadline_secs(cli.approval_timeout));
    let wrap = Wrap {
        program: program()?.display().to_string(),
        socket,
        tool_timeout_secs: timeout,
    };
    let install::Installed {
        text: written,
        wrapped,
        left,
    } = install::install(args.agent, &text, &wrap)?;
    for (name, why) in &left {
        writeln!(out, "{name}: left as it is: {why}")?;
    }
    if wrapped.is_empty() {
        writeln!(
            out,
            "nothing to wrap in {}: every stdio MCP server there already goes through tether (or there is none)",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    for (name, original) in &wrapped {
        let mut command = vec![original["command"].as_str().unwrap_or_default().to_owned()];
        command.extend(
            original["args"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_owned)),
        );
        let runs = if args.write { "now runs as" } else { "would run as" };
        writeln!(
            out,
            "{name}: `{}` {runs} `{} mcp proxy --name {name} --socket {} -- {}`",
            command.join(" "),
            wrap.program,
            wrap.socket.display(),
            command.join(" ")
        )?;
    }
    match args.agent {
        crate::agents::hooks::AgentKind::Codex => {
            writeln!(
                out,
                "tool_timeout_sec = {timeout}: the console's approval timeout is {} s",
                cli.approval_timeout
            )?;
            writeln!(
                out,
                "default_tools_approval_mode = \"approve\" where none was set: the console decides (Codex would ask again, and `codex exec` refuse, every tool that is not read-only)"
            )?;
        }
        crate::agents::hooks::AgentKind::ClaudeCode => writeln!(
            out,
            "Claude Code waits MCP_TOOL_TIMEOUT ms for a tool: run it with MCP_TOOL_TIMEOUT={} or more (the console's approval timeout is {} s)",
            timeout * 1000,
            cli.approval_timeout
        )?,
    }
    if !args.write {
        writeln!(
            out,
            "nothing was written: run again with --write to change {}",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let record_path = install::record_path(&path);
    let record = match load_record(&record_path)? {
        Some(mut before) => {
            before.original = before.original.filter(|_| text == before.written);
            before.written.clone_from(&written);
            before.servers.extend(wrapped);
            before
        }
        None => Record {
            original: Some(text),
            written: written.clone(),
            servers: wrapped,
        },
    };
    save_record(&record_path, &record)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, &written).with_context(|| format!("writing {}", path.display()))?;
    writeln!(out, "updated {}", path.display())?;
    let project = args
        .project
        .as_ref()
        .map_or_else(String::new, |dir| format!(" --project {}", dir.display()));
    writeln!(
        out,
        "next: start the console (`tether serve`), then the agent: each tools/call of these servers now asks \
         the console (with no console running, every call is refused). `tether mcp uninstall {}{project} --write` \
         puts the file back.",
        args.agent.name()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn uninstall_command(args: &McpInstallArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let path = install::config_path(args.agent, args.project.as_deref())?;
    let text = read_or_empty(&path)?;
    let record_path = install::record_path(&path);
    let record = load_record(&record_path)?.unwrap_or_default();
    let (restored_text, restored) = install::uninstall(args.agent, &text, &record.servers)?;
    if restored.is_empty() {
        writeln!(out, "no MCP server in {} goes through tether", path.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "restores: {}", restored.join(", "))?;
    if !args.write {
        writeln!(out, "run again with --write to change {}", path.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    // Untouched since the install: the original file, byte for byte.
    let restored_text = match record.original {
        Some(original) if text == record.written => original,
        _ => restored_text,
    };
    std::fs::write(&path, restored_text).with_context(|| format!("writing {}", path.display()))?;
    if record_path.exists() {
        std::fs::remove_file(&record_path).with_context(|| format!("removing {}", record_path.display()))?;
    }
    writeln!(out, "restored {}", path.display())?;
    Ok(ExitCode::SUCCESS)
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
        // The server's words are escaped, the separators are ours: real
        // tabs, for `cut -f`.
        writeln!(
            out,
            "{}\t{state}\t{}",
            crate::sanitize::escape(tool),
            crate::sanitize::escape(&pin.hash)
        )?;
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

/// Words of a command line that start something else: a launcher, its
/// subcommand. The server's readable name is what they start.
const LAUNCHERS: &[&str] = &[
    "env", "npx", "bunx", "pnpx", "uvx", "pipx", "node", "deno", "bun", "python", "python3", "uv", "npm", "pnpm",
    "yarn", "docker", "podman", "run", "exec", "x", "dlx", "tool",
];

/// The server's name when `--name` is left out: what its command line
/// runs (the package or script a launcher such as `npx` or `env` starts,
/// else the command's file name), then the start of the SHA-256 of the
/// whole command line. Two servers whose command lines differ in anything
/// (package, version, arguments) never share a pin file or a scope.
fn default_name(command: &[String]) -> String {
    use sha2::{Digest as _, Sha256};
    let base = |word: &str| {
        // `@scope/package@1.2.3` is `package`; `/path/to/server.py` is `server.py`.
        let unversioned = match word.rfind('@') {
            Some(at) if at > 0 => &word[..at],
            _ => word,
        };
        unversioned.rsplit('/').next().unwrap_or(unversioned).to_owned()
    };
    let started = command.iter().find(|word| {
        let assignment = word.contains('=') && !word.starts_with('/');
        !word.starts_with('-') && !assignment && !LAUNCHERS.contains(&base(word).as_str())
    });
    let readable = started
        .or(command.first())
        .map(|word| base(word))
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "mcp".to_owned());
    let readable = crate::agents::mcp::pins::file_safe(&readable);
    let digest = Sha256::digest(command.join("\0").as_bytes());
    let short: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{readable}-{short}")
}

#[cfg(test)]
mod tests {
    use super::default_name;

    fn name(line: &str) -> String {
        default_name(&line.split(' ').map(str::to_owned).collect::<Vec<_>>())
    }

    #[test]
    fn a_default_name_says_what_runs_and_differs_with_any_word_of_the_command_line() {
        let fs = name("npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /home/me/project");
        assert!(fs.starts_with("server-filesystem-"), "{fs}");
        assert!(name("/usr/bin/env A=1 /venv/bin/python tests/upstream.py").starts_with("upstream.py-"));
        assert!(name("/opt/servers/my-server --flag").starts_with("my-server-"));
        let lines = [
            "npx -y @modelcontextprotocol/server-filesystem /home/me/project",
            "npx -y @modelcontextprotocol/server-filesystem /home/me/other",
            "npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /home/me/project",
            "npx -y @modelcontextprotocol/server-everything",
        ];
        let names: std::collections::HashSet<String> = lines.iter().map(|l| name(l)).collect();
        assert_eq!(names.len(), lines.len(), "{names:?}");
        assert_eq!(name(lines[0]), name(lines[0]), "the same server keeps its name");
    }
}
