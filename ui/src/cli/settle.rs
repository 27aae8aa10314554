//! Options that can be written before or after the subcommand mean the same
//! wherever they are written, and an option whose silent no-op would mislead
//! is refused with where it goes instead: an approval timeout that protects
//! the user must never be accepted and then not applied. `--log-dir` changes
//! nothing for a command that writes no log and protects nothing, so it is
//! accepted everywhere (a shell alias that carries it keeps working).

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use super::{Cli, Command, HookAction, McpAction};

/// Where `--approval-timeout` goes, for the refusal.
const TIMEOUT_BELONGS: &str = "it is for the commands that wait for a human (`tether`, `tether replay` and \
     `tether serve`, not headless) and for `tether hook install`, `tether hook claude-code|codex` and \
     `tether mcp install`, which set their own timeouts from it";

/// What a command makes of the two options.
struct Uses {
    /// The command as the user would name it.
    name: &'static str,
    /// Why `--approval-timeout` does nothing here, when it does nothing.
    no_timeout: Option<&'static str>,
    /// `--approval-timeout` written after the subcommand.
    after: Option<u64>,
}

impl Cli {
    /// [`clap::Parser::parse`], then the options written at two levels
    /// settled ([`Cli::try_parse_settled`]); exits with clap's message on
    /// bad input.
    pub fn parse_settled() -> Self {
        Self::try_parse_settled(std::env::args_os()).unwrap_or_else(|error| error.exit())
    }

    /// Parses `args`, then makes `--approval-timeout` one value wherever it
    /// was written (given twice, the two must agree) and refuses it on a
    /// command that would ignore it.
    ///
    /// # Errors
    /// clap's errors, and the refusals above in clap's format.
    pub fn try_parse_settled<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut command = Self::command();
        let matches = command.try_get_matches_from_mut(args)?;
        let mut cli = Self::from_arg_matches(&matches).map_err(|error| error.format(&mut command))?;
        cli.settle(&matches)
            .map_err(|message| command.error(ErrorKind::ArgumentConflict, message))?;
        Ok(cli)
    }

    fn settle(&mut self, matches: &ArgMatches) -> Result<(), String> {
        let given = |m: &ArgMatches, id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
        let before = given(matches, "approval_timeout").then_some(self.approval_timeout);
        let uses = self.uses(matches.subcommand().map(|(_, m)| m));
        if let Some(why) = uses.no_timeout
            && (before.is_some() || uses.after.is_some())
        {
            return Err(format!(
                "--approval-timeout does nothing for `{}`{why}; {TIMEOUT_BELONGS}",
                uses.name
            ));
        }
        if let (Some(a), Some(b)) = (before, uses.after)
            && a != b
        {
            return Err(format!(
                "--approval-timeout is given twice ({a} before `{}`, {b} after it); give it once",
                uses.name
            ));
        }
        let secs = uses.after.or(before).unwrap_or(self.approval_timeout);
        self.approval_timeout = secs;
        match &mut self.command {
            Some(Command::Serve(args)) => args.console.approval_timeout = secs,
            Some(Command::Replay(args)) => args.console.approval_timeout = secs,
            _ => {}
        }
        Ok(())
    }

    /// What the chosen command does with the two options; `sub` is its matches.
    fn uses(&self, sub: Option<&ArgMatches>) -> Uses {
        let after = |args_value: u64| {
            sub.filter(|m| m.value_source("approval_timeout") == Some(ValueSource::CommandLine))
                .map(|_| args_value)
        };
        let uses = |name, no_timeout, after| Uses {
            name,
            no_timeout,
            after,
        };
        const HEADLESS: Option<&str> = Some(" (headless, --answer answers every approval at once)");
        const NEVER: Option<&str> = Some("");
        match &self.command {
            None => uses("tether", None, None),
            Some(Command::Replay(args)) => uses(
                "tether replay",
                args.headless.then_some(HEADLESS).flatten(),
                after(args.console.approval_timeout),
            ),
            Some(Command::Serve(args)) => uses(
                "tether serve",
                (args.headless && args.answer != super::ServeAnswer::Attached)
                    .then_some(HEADLESS)
                    .flatten(),
                after(args.console.approval_timeout),
            ),
            Some(Command::Send { .. }) => uses("tether send", NEVER, None),
            // The serving console's timeout applies to what an attached one answers.
            Some(Command::Attach(_)) => uses("tether attach", NEVER, None),
            Some(Command::Web { .. }) => uses("tether web", NEVER, None),
            Some(Command::Check { .. }) => uses("tether check", NEVER, None),
            Some(Command::Explain { .. }) => uses("tether explain", NEVER, None),
            Some(Command::Policy { .. }) => uses("tether policy", NEVER, None),
            Some(Command::Hook { action }) => match action {
                HookAction::ClaudeCode(args) => uses("tether hook claude-code", None, args.common.approval_timeout),
                HookAction::Codex(args) => uses("tether hook codex", None, args.common.approval_timeout),
                HookAction::Install(args) => uses("tether hook install", None, args.approval_timeout),
                HookAction::Uninstall(_) => uses("tether hook uninstall", NEVER, None),
            },
            Some(Command::Mcp { action }) => match action {
                McpAction::Proxy(_) => uses("tether mcp proxy", NEVER, None),
                McpAction::Serve(_) => uses("tether mcp serve", NEVER, None),
                McpAction::Install(args) => uses("tether mcp install", None, args.approval_timeout),
                McpAction::Uninstall(args) => uses("tether mcp uninstall", NEVER, args.approval_timeout),
                McpAction::Pins { .. } => uses("tether mcp pins", NEVER, None),
            },
        }
    }
}
