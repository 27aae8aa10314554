//! The arguments of `tether replay`: the scenario or journal, the policy,
//! headless output, how reviews are replayed and which calls are shown.

use std::path::PathBuf;

use super::ConsoleArgs;
use crate::files::scenario::NamedAnswer;
use crate::session::review::ReviewReplay;

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// A scenario file or a journal (JSON lines); the bundled default demo when left out.
    pub scenario: Option<PathBuf>,

    /// A policy file (default: X.policy.json beside X.json when there is one,
    /// and the bundled demo brings its own; without one every call is asked).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// With --headless and a journal: replay under the policy file the
    /// journal was last recorded under (its header, or a later reload).
    #[arg(long, conflicts_with = "policy", requires = "headless")]
    pub policy_from_journal: bool,

    /// No terminal UI: print one line per outcome and a summary; exit 0 when
    /// every expectation holds, 1 when one fails, 2 on bad input.
    #[arg(long)]
    pub headless: bool,

    /// With --headless: how to answer approvals the scenario does not script
    /// (a call whose arguments fail its schema is not answered: it fails INVALID_ARGS).
    #[arg(long, value_enum, default_value = "none", value_name = "ANSWER")]
    pub answer: NamedAnswer,

    /// With --headless: JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,

    /// What a call the policy routes to a reviewer gets: the verdict the
    /// journal recorded for it (`recorded`; a call with none is asked), or
    /// the reviewer called again (`live`: commands run, models are asked).
    #[arg(long, value_enum, default_value = "recorded", value_name = "HOW")]
    pub review: ReviewReplay,

    #[command(flatten)]
    pub filter: ReplayFilter,

    /// Run every batch without waiting for a key.
    #[arg(long)]
    pub auto: bool,

    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// Which calls a headless replay shows: each filter given must match, the
/// recorded call or the replayed one.
#[derive(Debug, Default, clap::Args)]
pub struct ReplayFilter {
    /// With --headless: only calls this decided, recorded or now: a kind
    /// (human, rule, guard, always-rule, timeout, …) or one decider
    /// (rule:ask-all, human@main).
    #[arg(long, value_name = "DECIDER", requires = "headless")]
    pub decided_by: Option<String>,

    /// With --headless: only calls of the tools this glob matches.
    #[arg(long, value_name = "GLOB", requires = "headless")]
    pub tool: Option<String>,

    /// With --headless: only calls with this outcome, recorded or now (ok,
    /// DENIED, UNAVAILABLE, …).
    #[arg(long, value_name = "CODE", requires = "headless")]
    pub code: Option<String>,
}

impl ReplayArgs {
    /// `tether` with no arguments: the console on the bundled default demo.
    pub fn default_demo(approval_timeout: u64) -> Self {
        Self {
            scenario: None,
            policy: None,
            policy_from_journal: false,
            headless: false,
            answer: NamedAnswer::None,
            json: false,
            review: ReviewReplay::Recorded,
            filter: ReplayFilter::default(),
            auto: false,
            console: ConsoleArgs {
                approval_timeout,
                ..ConsoleArgs::default()
            },
        }
    }
}
