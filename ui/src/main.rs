//! The Tether console: a terminal approval console on the `tether-tools` engine.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use std::time::Duration;

use tether_console::agents::hooks as hook;
use tether_console::cli::{Cli, Command, HookAction, ReplayArgs};
use tether_console::commands::{check as check_files, replay as headless, serve};
use tether_console::files::{inputs, source::FileErrors};
use tether_console::tui::{console, terminal as tui};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(&anyhow::Error::from(error)),
    };
    let result = runtime.block_on(async {
        // The interactive console writes to the terminal itself; only the
        // line-oriented commands hold stdout.
        match &cli.command {
            Some(Command::Check { files }) => check_files::run(files, &mut std::io::stdout().lock()),
            Some(Command::Replay(args)) if args.headless => {
                quiet_panics();
                headless::run(args, &mut std::io::stdout().lock()).await
            }
            Some(Command::Replay(args)) => interactive(&cli, args).await,
            Some(Command::Serve(args)) => {
                // Headless serve prints its outcomes; the console logs to a file.
                let _log_guard = if args.headless {
                    None
                } else {
                    Some(start_logging(&cli)?)
                };
                serve::run(args, Duration::from_secs(cli.approval_timeout), &mut std::io::stdout()).await
            }
            Some(Command::Hook {
                action: HookAction::Install { agent, project, write },
            }) => {
                let path = hook::settings_path(*agent, project.as_deref());
                let merged = hook::merged_settings(*agent, &path)?;
                if *write {
                    hook::write_settings(&path, &merged)?;
                    writeln!(std::io::stdout(), "updated {}", path.display())?;
                } else {
                    let text = serde_json::to_string_pretty(&merged)?;
                    writeln!(std::io::stdout(), "# merge into {}\n{text}", path.display())?;
                }
                Ok(ExitCode::SUCCESS)
            }
            Some(Command::Hook { action }) => {
                let (agent, args) = match action {
                    HookAction::ClaudeCode(args) => (hook::AgentKind::ClaudeCode, args),
                    HookAction::Codex(args) => (hook::AgentKind::Codex, args),
                    HookAction::Install { .. } => return Ok(ExitCode::from(headless::EXIT_BAD_INPUT)),
                };
                // A hook must answer even when it cannot log.
                let _log_guard = start_logging(&cli).ok();
                let mut input = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut input)?;
                let socket = args
                    .socket
                    .clone()
                    .unwrap_or_else(tether_console::agents::link::socket::default_path);
                let deadline = Duration::from_secs(args.deadline);
                hook::run(agent, &socket, deadline, args.fallback, &input, &mut std::io::stdout()).await?;
                Ok(ExitCode::SUCCESS)
            }
            Some(Command::Send { batch, socket }) => {
                let socket = socket
                    .clone()
                    .unwrap_or_else(tether_console::agents::link::socket::default_path);
                tether_console::agents::link::client::send(&socket, batch, &mut std::io::stdout().lock()).await
            }
            None => interactive(&cli, &ReplayArgs::default_demo()).await,
        }
    });
    let _ = std::io::stdout().flush();
    result.unwrap_or_else(|error| fail(&error))
}

/// The console in the terminal: bad files are reported before the screen
/// is taken over.
async fn interactive(cli: &Cli, args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let loaded = match inputs::load(args.scenario.as_deref(), args.policy.as_deref()) {
        Ok(loaded) => loaded,
        Err(errors) => {
            writeln!(std::io::stdout().lock(), "{}", FileErrors(errors))?;
            return Ok(ExitCode::from(headless::EXIT_BAD_INPUT));
        }
    };
    let _log_guard = start_logging(cli)?;
    tracing::info!(source = %loaded.source, "console starting");
    console::run_replay(
        loaded,
        args.policy.clone(),
        args.journal.clone(),
        Duration::from_secs(cli.approval_timeout),
        args.auto,
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}

/// Logs to `--log-dir` (or the default); keep the guard alive while running.
fn start_logging(cli: &Cli) -> anyhow::Result<tracing_appender::non_blocking::WorkerGuard> {
    let log_dir = cli.log_dir.clone().unwrap_or_else(tui::default_log_dir);
    tui::init_logging(&log_dir)
}

/// Scripted bodies may panic on purpose; the engine turns that into an
/// outcome, so the default hook's message would only be noise on stderr.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| tracing::debug!(%info, "panic caught by the pipeline")));
}

#[allow(clippy::print_stderr)]
fn fail(error: &anyhow::Error) -> ExitCode {
    eprintln!("tether: {error:#}");
    ExitCode::from(headless::EXIT_BAD_INPUT)
}
