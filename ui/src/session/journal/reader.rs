//! Reading the journal back: one batch by its span (the console's history),
//! and the headers of a whole set (what a replay says it was recorded under).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_tools::BoxError;
use tether_tools::journal::{Journal, JournalBatch, TOOL_CALL, TOOL_RESULT};

use super::JournalSpan;
use super::record::{JOURNAL_HEADER, JournalHeader, POLICY_RELOAD, POLICY_RELOAD_FAILED, PolicyReload};
use crate::files::journal_set;

/// Reads batches back from a (possibly rotated) journal.
#[derive(Clone, Debug)]
pub struct JournalReader {
    base: PathBuf,
}

impl JournalReader {
    /// A reader of the set named after `base`.
    pub fn new(base: PathBuf) -> Self {
        Self { base }
    }

    /// The batch `span` points at: a seek and one read of the span's bytes.
    ///
    /// # Errors
    /// The file is gone or changed, or the span holds no such batch.
    pub fn read_batch(&self, span: &JournalSpan) -> Result<JournalBatch, BoxError> {
        let mut file = File::open(journal_set::numbered(&self.base, span.file))?;
        file.seek(SeekFrom::Start(span.start))?;
        let mut bytes = vec![0; usize::try_from(span.end.saturating_sub(span.start))?];
        file.read_exact(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes);
        // Only this batch's records: others that ran alongside are skipped.
        let mut own = String::new();
        for line in text.lines() {
            let Ok(value) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let event = value.get("event").and_then(Value::as_str);
            let ours = value.get("batch").and_then(Value::as_u64) == Some(span.batch_id);
            if ours && matches!(event, Some(TOOL_CALL | TOOL_RESULT)) {
                own.push_str(line);
                own.push('\n');
            }
        }
        let journal = Journal::parse(&own)?;
        journal
            .batches
            .into_iter()
            .next()
            .ok_or_else(|| format!("the journal has no batch {} where it was recorded", span.batch_id).into())
    }
}

/// A policy the journal says was in force from some point on: a run's
/// header, or a reload (or a failed one) during the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyRecord {
    /// A run began under this header's policy.
    Header(JournalHeader),
    /// The policy was reloaded, or a reload failed.
    Reload(PolicyReload),
}

/// The journal's headers and policy reloads, in the order they were
/// written (a rotation's repeated header only once).
pub fn policy_records(path: &Path) -> Vec<PolicyRecord> {
    let Ok(text) = journal_set::read_text(path) else {
        return Vec::new();
    };
    let mut records: Vec<PolicyRecord> = Vec::new();
    let same_run = |h: &JournalHeader| JournalHeader { ts_ms: 0, ..h.clone() };
    let mut current: Option<JournalHeader> = None;
    for line in text
        .lines()
        .filter(|l| l.contains("\"policy") || l.contains(JOURNAL_HEADER))
    {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match value.get("event").and_then(Value::as_str) {
            Some(JOURNAL_HEADER) => {
                let Ok(header) = serde_json::from_value::<JournalHeader>(value) else {
                    continue;
                };
                if current.as_ref().map(same_run) != Some(same_run(&header)) {
                    current = Some(header.clone());
                    records.push(PolicyRecord::Header(header));
                }
            }
            Some(POLICY_RELOAD | POLICY_RELOAD_FAILED) => {
                if let Ok(reload) = serde_json::from_value::<PolicyReload>(value) {
                    // A rotation after a reload repeats the header with the new policy.
                    if let Some(current) = current.as_mut().filter(|_| reload.error.is_none()) {
                        current.policy_path = Some(reload.policy_path.clone());
                        current.policy_sha256.clone_from(&reload.policy_sha256);
                    }
                    records.push(PolicyRecord::Reload(reload));
                }
            }
            _ => {}
        }
    }
    records
}

/// The distinct headers of the journal (set) at `path`, in the order they
/// were written: one per run that appended to it. Empty for a journal from
/// before headers were written, or one that cannot be read.
pub fn headers(path: &Path) -> Vec<JournalHeader> {
    let Ok(text) = journal_set::read_text(path) else {
        return Vec::new();
    };
    let mut headers: Vec<JournalHeader> = Vec::new();
    for line in text.lines().filter(|l| l.contains(JOURNAL_HEADER)) {
        let Ok(header) = serde_json::from_str::<JournalHeader>(line) else {
            continue;
        };
        // A rotation repeats its run's header in every file.
        let same_run = |h: &JournalHeader| JournalHeader { ts_ms: 0, ..h.clone() };
        if header.event == JOURNAL_HEADER && headers.last().map(same_run) != Some(same_run(&header)) {
            headers.push(header);
        }
    }
    headers
}
