//! `tether` and `tether replay` (interactive): the console in the terminal.
//! Bad files are reported before the screen is taken over.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use super::{EXIT_BAD_INPUT, start_logging};
use crate::cli::{Cli, ReplayArgs};
use crate::files::inputs;
use crate::files::source::FileErrors;

pub async fn run(cli: &Cli, args: &ReplayArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let loaded = match inputs::load(args.scenario.as_deref(), args.policy.as_deref()) {
        Ok(loaded) => loaded,
        Err(errors) => {
            writeln!(out, "{}", FileErrors(errors))?;
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    let _log_guard = start_logging(cli.log_dir.as_deref())?;
    tracing::info!(source = %loaded.source, "console starting");
    let policy_path = args.policy.clone().or_else(|| loaded.policy_beside.clone());
    crate::tui::console::run_replay(
        loaded,
        policy_path,
        (args.console.journal.clone(), args.console.history.journal_max_bytes()),
        Duration::from_secs(args.console.approval_timeout),
        (args.auto, args.review),
        args.console.history.limits(),
        (args.console.notify.notify, args.console.notify.notify_cmd.clone()),
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}
