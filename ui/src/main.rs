//! The Tether console: a terminal approval console on the `tether-tools` engine.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use tether_console::cli::{Cli, Command};
use tether_console::{check_files, headless};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(&anyhow::Error::from(error)),
    };
    let mut stdout = std::io::stdout().lock();
    let result = runtime.block_on(async {
        match &cli.command {
            Some(Command::Check { files }) => check_files::run(files, &mut stdout),
            Some(Command::Replay(args)) if args.headless => {
                quiet_panics();
                headless::run(args, &mut stdout).await
            }
            _ => {
                writeln!(
                    stdout,
                    "tether: the interactive console is not built yet; use `tether replay --headless`"
                )?;
                Ok(ExitCode::from(headless::EXIT_BAD_INPUT))
            }
        }
    });
    let _ = stdout.flush();
    result.unwrap_or_else(|error| fail(&error))
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
