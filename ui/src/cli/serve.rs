//! The arguments of the commands that run a console: `tether serve` (and
//! what it shares with `tether replay`: the journal, the approval timeout,
//! notifications, history), and `tether attach`.

use std::path::PathBuf;

use super::at_least_one_second;
use crate::files::scenario::NamedAnswer;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The socket to listen on (default: /run/user/UID/tether/console.sock when that is your runtime dir, else $TMPDIR/tether-UID/console.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// A policy file (default: $XDG_CONFIG_HOME/tether/policy.json when it exists; without one, every call is asked; see docs/policy.md).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// No terminal UI: print one JSON line per outcome; approvals get --answer.
    #[arg(long)]
    pub headless: bool,
    /// With --headless: how every approval is answered (`attached`: it waits
    /// for a console attached with `tether attach` or a paired web device,
    /// up to the approval timeout).
    /// A call whose arguments fail its schema is not answered: it fails INVALID_ARGS.
    #[arg(long, value_enum, default_value = "none", value_name = "ANSWER")]
    pub answer: ServeAnswer,
    /// Let other terminals open this console's screen with `tether attach`
    /// (they must give the one-time code the header shows; headless: stderr).
    #[arg(long)]
    pub attach: bool,
    #[command(flatten)]
    pub web: super::WebArgs,
    /// Remind when an approval still waits after DUR (`90s`, `2m`): the
    /// notify command's `approval/reminder`, and the bell again.
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub remind_after: Option<std::time::Duration>,
    /// When an approval still waits after DUR, run --escalate-cmd (a second person).
    #[arg(long, value_name = "DUR", value_parser = duration, requires = "escalate_cmd")]
    pub escalate_after: Option<std::time::Duration>,
    /// Run through `sh -c` with the notify JSON (`approval/escalated`) on
    /// stdin when an approval still waits after --escalate-after.
    #[arg(long, value_name = "CMD", requires = "escalate_after")]
    pub escalate_cmd: Option<String>,
    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// A duration: `90s`, `2m`, `1h`, `500ms`, or whole seconds (as a policy's
/// `"timeout"` reads it).
fn duration(text: &str) -> Result<std::time::Duration, String> {
    crate::files::policy::duration(text)
}

/// What `tether serve` and `tether replay` both take: the journal, how long
/// a call waits for a human, how the human is told, and how much is kept.
#[derive(Debug, Default, clap::Args)]
pub struct ConsoleArgs {
    /// Append every call and result to this journal (JSON lines, mode 0600).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Seconds a call waits for a human before it fails UNAVAILABLE.
    #[arg(long, default_value_t = 120, value_name = "SECS", value_parser = at_least_one_second)]
    pub approval_timeout: u64,
    #[command(flatten)]
    pub notify: NotifyArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
}

/// How `tether serve --headless` answers approvals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ServeAnswer {
    Approve,
    Reject,
    Timeout,
    None,
    /// Wait for a console attached with `tether attach` or a paired web
    /// device (needs `--attach` or `--web`).
    Attached,
}

impl ServeAnswer {
    /// The scripted answer, or `None` for `attached`.
    pub fn scripted(self) -> Option<NamedAnswer> {
        match self {
            ServeAnswer::Approve => Some(NamedAnswer::Approve),
            ServeAnswer::Reject => Some(NamedAnswer::Reject),
            ServeAnswer::Timeout => Some(NamedAnswer::Timeout),
            ServeAnswer::None => Some(NamedAnswer::None),
            ServeAnswer::Attached => None,
        }
    }
}

/// How the human hears that an approval waits.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct NotifyArgs {
    /// On the console's terminal when an approval starts waiting: a comma
    /// list of `bell` (BEL) and `osc` (a desktop notification by OSC 9 and
    /// OSC 777, passed through tmux), or `none`.
    #[arg(long, value_name = "LIST", default_value = "bell")]
    pub notify: crate::session::notify::TerminalNotify,
    /// Run this through `sh -c` when an approval starts waiting, a quarter of
    /// its time is left, and it ends; one JSON object on stdin (see
    /// docs/attach.md). Never waited for; killed after 10 s.
    #[arg(long, value_name = "CMD")]
    pub notify_cmd: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct AttachArgs {
    /// The socket `tether serve` listens on (default: as `tether serve`).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The six-digit code the serving console shows (asked for when left out).
    #[arg(long, value_name = "N")]
    pub code: Option<String>,
    /// Only watch: this console cannot answer.
    #[arg(long)]
    pub view: bool,
}

/// How much the console keeps, and how the journal is cut.
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct HistoryArgs {
    /// With --journal: start a new numbered journal file (FILE.1, FILE.2, …)
    /// once the current one reaches this size; a batch's records are never
    /// split, and `tether replay FILE` reads the whole set (default: one file).
    #[arg(long, value_name = "MB")]
    pub journal_max_mb: Option<u64>,
    /// Most recent batches kept in full on screen, for a console left open
    /// all day; older ones keep a one-line summary and are read back from
    /// the journal (--journal) when opened with `[`, or say they were dropped.
    #[arg(long, default_value_t = 500, value_name = "N")]
    pub history_batches: usize,
    /// Most memory (estimated) for the batches kept in full; whichever of
    /// this and --history-batches is reached first evicts the oldest.
    #[arg(long, default_value_t = 64, value_name = "MB")]
    pub history_mb: usize,
}

impl Default for HistoryArgs {
    fn default() -> Self {
        Self {
            journal_max_mb: None,
            history_batches: 500,
            history_mb: 64,
        }
    }
}

impl HistoryArgs {
    /// The journal's rotation size in bytes.
    pub fn journal_max_bytes(&self) -> Option<u64> {
        self.journal_max_mb.map(|mb| mb.saturating_mul(1 << 20))
    }

    /// The screen's history limits.
    pub fn limits(&self) -> crate::tui::app::HistoryLimits {
        crate::tui::app::HistoryLimits {
            batches: self.history_batches.max(1),
            bytes: self.history_mb.saturating_mul(1 << 20),
            ..crate::tui::app::HistoryLimits::default()
        }
    }
}
