//! The Tether console: a terminal approval console on the `tether-tools` engine.
//! `main` only dispatches: each subcommand lives in `tether_console::commands`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use tether_console::cli::{Cli, Command, HookAction, McpAction, PolicyAction, ReplayArgs};
use tether_console::commands::{self, EXIT_BAD_INPUT};
use tether_console::files::policy::Variant;

fn main() -> ExitCode {
    let mut cli = Cli::parse_settled();
    // `tether serve` without --policy loads the policy in the default place
    // (`tether policy init … --write`), and its header names the file.
    if let Some(Command::Serve(args)) = &mut cli.command
        && args.policy.is_none()
    {
        args.policy = tether_console::files::policy::default_path().filter(|p| p.is_file());
    }
    // A hook bridge answers one tool call and exits: one thread is enough,
    // and starting worker threads would be most of its cost.
    let bridge = matches!(
        &cli.command,
        Some(Command::Hook {
            action: HookAction::ClaudeCode(_) | HookAction::Codex(_)
        })
    );
    // A stdio MCP gateway carries one client's calls, one after the other
    // in the common case: on one thread each call's hops (client, console,
    // upstream) are plain wake-ups, not hand-overs between worker threads,
    // which were most of what the gateway added to a call (issue 36).
    let gateway = matches!(
        &cli.command,
        Some(Command::Mcp {
            action: McpAction::Proxy(args),
        }) if args.gateway.http.is_none()
    );
    let built = if bridge || gateway {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    };
    let runtime = match built {
        Ok(runtime) => runtime,
        Err(error) => return fail(&anyhow::Error::from(error)),
    };
    let result = runtime.block_on(async {
        // The interactive console writes to the terminal itself; only the
        // line-oriented commands hold stdout.
        let mut out = std::io::stdout();
        match &cli.command {
            Some(Command::Check { files }) => commands::check::run(files, &mut out.lock()),
            Some(Command::Explain { cwd, command }) => commands::explain::run(command, cwd.as_deref(), &mut out.lock()),
            Some(Command::Policy {
                action:
                    PolicyAction::Init {
                        agent,
                        write,
                        with_reviewer,
                    },
            }) => commands::policy::init(
                *agent,
                if *with_reviewer {
                    Variant::WithReviewer
                } else {
                    Variant::Plain
                },
                write.as_ref().map(Option::as_deref),
                &mut out.lock(),
            )
            .map(|()| ExitCode::SUCCESS),
            Some(Command::Replay(args)) if args.headless => {
                quiet_panics();
                let _log_guard = optional_logging(&cli)?;
                commands::replay::run(args, &mut out.lock()).await
            }
            Some(Command::Replay(args)) => commands::console::run(&cli, args, &mut out).await,
            Some(Command::Serve(args)) => {
                // Headless serve prints its outcomes (and logs only when told
                // where); the console logs to a file.
                let _log_guard = if args.headless {
                    optional_logging(&cli)?
                } else {
                    Some(commands::start_logging(cli.log_dir.as_deref())?)
                };
                commands::serve::run(args, Duration::from_secs(args.console.approval_timeout), &mut out).await
            }
            Some(Command::Mcp { action }) => commands::mcp::run(&cli, action, &mut out).await,
            Some(Command::Hook { action }) => commands::hook::run(&cli, action, &mut out).await,
            Some(Command::Attach(args)) => commands::attach::run(args, &mut out).await,
            Some(Command::Web { action }) => commands::web::run(action, &mut out.lock()).await,
            Some(Command::Send { batch, socket }) => commands::send::run(batch, socket.as_ref(), &mut out.lock()).await,
            None => commands::console::run(&cli, &ReplayArgs::default_demo(cli.approval_timeout), &mut out).await,
        }
    });
    let _ = std::io::stdout().flush();
    // A read of stdin that never ends (a gateway told to stop while its
    // client keeps the pipe open) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result.unwrap_or_else(|error| fail(&error))
}

/// A headless run logs only to a `--log-dir` it was given.
fn optional_logging(cli: &Cli) -> anyhow::Result<Option<tracing_appender::non_blocking::WorkerGuard>> {
    cli.log_dir
        .as_deref()
        .map(|dir| commands::start_logging(Some(dir)))
        .transpose()
}

/// Scripted bodies may panic on purpose; the engine turns that into an
/// outcome, so the default hook's message would only be noise on stderr.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| tracing::debug!(%info, "panic caught by the pipeline")));
}

#[allow(clippy::print_stderr)]
fn fail(error: &anyhow::Error) -> ExitCode {
    eprintln!("tether: {error:#}");
    ExitCode::from(EXIT_BAD_INPUT)
}
