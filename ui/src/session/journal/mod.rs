//! The console's journal file: the engine's `tool/call` and `tool/result`
//! lines, each result saying what decided its call, after a header naming
//! the console and the policy of the run. The format is in docs/journal.md.

mod decision;
mod reader;
mod record;
mod writer;

pub use decision::Decision;
pub use reader::{JournalReader, PolicyRecord, headers, policy_records};
pub use record::{
    DeclaredLine, FORMAT, JOURNAL_HEADER, JournalHeader, POLICY_RELOAD, POLICY_RELOAD_FAILED, PolicyReload, ReloadedBy,
    TOOL_DECLARED,
};
pub use writer::{JournalWriter, open};

/// Where one batch's records are: the numbered file, and a byte range that
/// holds every one of them (with, at most, records of batches that ran at
/// the same time, which the reader skips).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JournalSpan {
    /// The engine's batch id, as the records carry it.
    pub batch_id: u64,
    /// 0 for `PATH`, n for `PATH.n`.
    pub file: u32,
    /// Where the batch's first record starts.
    pub start: u64,
    /// Where its last record ends.
    pub end: u64,
}
