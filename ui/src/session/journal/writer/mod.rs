//! Writing the journal: append-only JSON lines, mode 0600, written line by
//! line and handed to the OS before the sink returns (a crash of the
//! console loses no declared call). Optionally rotated by size into
//! numbered files (`PATH`, `PATH.1`, `PATH.2`, …) without ever splitting a
//! batch's records; every file starts with the run's header. Each finished
//! batch's place is kept as a [`JournalSpan`], so the console reads an old
//! batch back with a seek. The open files, rotation and spans are in
//! `files`.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use serde::Serialize;
use tether_tools::journal::{JournalScope, TOOL_CALL, TOOL_RESULT};
use tether_tools::{AgentPipelineScope, BoxError, DeclaredCall, ReadyOutcome, SinkFuture, ToolBatchSink, ToolRegistry};

use self::files::{OpenBatch, OpenFile, State, open_append};
use super::record::{
    CallLine, JournalHeader, POLICY_RELOAD, POLICY_RELOAD_FAILED, PolicyReload, ReloadedBy, ResultLine, ScopeLine,
};
use super::{Decision, JournalReader, JournalSpan};
use crate::files::journal_set;
use crate::session::provenance::{CallKey, DecisionLog};

mod files;
#[cfg(test)]
mod tests;

/// The journal as the console writes it.
pub struct JournalWriter {
    base: PathBuf,
    state: Mutex<State>,
    /// Where the decision trails are, once the console says
    /// ([`JournalWriter::record_decisions_from`]); each result line then
    /// says what decided its call.
    decisions: OnceLock<DecisionLog>,
    /// Where the tools' declarations are, once the console says
    /// ([`JournalWriter::record_declarations_from`]); each tool's is then
    /// written (`tool/declared`) before its first call.
    declarations: OnceLock<ToolRegistry>,
    approval_timeout: Duration,
}

/// Opens (or creates) a journal for appending, without rotation, with a
/// header that names no policy file and the default approval timeout.
pub async fn open(path: &Path) -> std::io::Result<JournalWriter> {
    JournalWriter::open(path, None, JournalHeader::new(None, DEFAULT_APPROVAL_TIMEOUT))
}

/// The approval timeout `tether serve` has by default.
const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

impl JournalWriter {
    /// Opens (or creates) the journal at `path` for appending and writes
    /// `header`; with `max_bytes`, a new numbered file is started (with the
    /// header again) once the current one has reached it (at a batch's first
    /// record, never inside a batch). An existing rotated set is continued
    /// in its newest file.
    ///
    /// # Errors
    /// The file cannot be opened or the header written.
    pub fn open(path: &Path, max_bytes: Option<u64>, header: JournalHeader) -> std::io::Result<JournalWriter> {
        let number = journal_set::newest_number(path);
        let file = open_append(&journal_set::numbered(path, number))?;
        let len = file.metadata()?.len();
        let approval_timeout = Duration::from_millis(header.approval_timeout_ms);
        let mut state = State {
            max_bytes,
            files: vec![OpenFile { number, file, len }],
            open: HashMap::new(),
            finished: VecDeque::new(),
            header,
            declared: HashMap::new(),
            checking: HashMap::new(),
        };
        state.write_header(0)?;
        Ok(JournalWriter {
            base: path.to_owned(),
            state: Mutex::new(state),
            decisions: OnceLock::new(),
            declarations: OnceLock::new(),
            approval_timeout,
        })
    }

    /// Writes a record that is no call's, such as an attached console coming
    /// or going (`console/attach`, `console/detach`); `event` names it, and
    /// the time is added. A reader keeps such lines as other events.
    ///
    /// # Errors
    /// The line cannot be written.
    pub fn record_event(
        &self,
        event: &str,
        mut fields: serde_json::Map<String, serde_json::Value>,
    ) -> std::io::Result<()> {
        fields.insert("event".to_owned(), event.into());
        fields.insert("ts_ms".to_owned(), now_ms().into());
        let mut line = serde_json::Value::Object(fields).to_string();
        line.push('\n');
        let mut state = self.lock();
        let newest = state.files.len() - 1;
        state.write(newest, line.as_bytes()).map(|_| ())
    }

    /// From now on each `tool/result` line says what decided its call, read
    /// from the trails `log` holds (the first log given is kept).
    pub fn record_decisions_from(&self, log: &DecisionLog) {
        if self.decisions.get().is_none() {
            let _ = self.decisions.set(log.clone());
        }
    }

    /// From now on each tool's declaration (schema, concurrency rule) is
    /// written before the first call of it in a scope, read from `registry`
    /// (the first registry given is kept).
    pub fn record_declarations_from(&self, registry: &ToolRegistry) {
        if self.declarations.get().is_none() {
            let _ = self.declarations.set(registry.clone());
        }
    }

    /// The path the set is named after.
    pub fn path(&self) -> &Path {
        &self.base
    }

    /// A reader of the set this writer writes.
    pub fn reader(&self) -> JournalReader {
        JournalReader::new(self.base.clone())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends any serializable event as one line (an approval decision with
    /// its provenance, a hook's review) to the newest file.
    ///
    /// # Errors
    /// Serialization or I/O failures.
    pub async fn write_event(&self, event: &impl Serialize) -> Result<(), BoxError> {
        let line = to_line(event)?;
        let mut state = self.lock();
        let last = state.files.len() - 1;
        state.write(last, &line)?;
        Ok(())
    }

    /// Where a finished batch's records are; each span is handed out once.
    pub fn take_span(&self, batch_id: u64) -> Option<JournalSpan> {
        let mut state = self.lock();
        let at = state.finished.iter().rposition(|s| s.batch_id == batch_id)?;
        state.finished.remove(at)
    }

    /// Numbered files still open (the newest, and any older one a running
    /// batch started in).
    pub fn open_files(&self) -> usize {
        self.lock().files.len()
    }

    pub(crate) fn record_call(&self, call: &DeclaredCall<'_>) -> Result<(), BoxError> {
        let line = call_line(call)?;
        let mut state = self.lock();
        let slot = match state.open.get(&call.batch_id) {
            Some(batch) => state.slot_of(batch.file),
            None => {
                state.rotate_if_full(&self.base)?;
                state.files.len() - 1
            }
        };
        let header_sha = state.header.policy_sha256.clone();
        if let Some(declared) = self.declarations.get().and_then(|r| state.declaration(r, call)) {
            state.write(slot, &to_line(&declared)?)?;
        }
        let (number, start, end) = state.write(slot, &line)?;
        let batch = state.open.entry(call.batch_id).or_insert(OpenBatch {
            file: number,
            start,
            end,
            remaining: call.total,
            policy_sha256: header_sha,
        });
        batch.end = end;
        Ok(())
    }

    /// What decided the outcome `ready` carries, when the trails are known.
    fn decision(&self, ready: &ReadyOutcome<'_>) -> Option<Decision> {
        let log = self.decisions.get()?;
        let key = CallKey::of_outcome(ready.outcome);
        Some(log.with_trail(&key, |trail| Decision::of(ready.outcome, trail)))
    }

    /// Writes a `policy/reload` record: the policy file at `path` (`rules`
    /// rules, its bytes hashed now) is in force from here on, reloaded
    /// `by`. Batches that begin later, and the header of a file a rotation
    /// starts, name it.
    ///
    /// # Errors
    /// The line cannot be written.
    pub fn record_policy_reload(&self, path: &Path, rules: usize, by: ReloadedBy) -> std::io::Result<()> {
        let now = JournalHeader::new(Some(path), self.approval_timeout);
        let record = PolicyReload {
            event: POLICY_RELOAD.to_owned(),
            ts_ms: now_ms(),
            policy_path: now.policy_path.clone().unwrap_or_default(),
            policy_sha256: now.policy_sha256.clone(),
            rules: Some(rules),
            by: by.name(),
            error: None,
        };
        let mut state = self.lock();
        state.header.policy_path = now.policy_path;
        state.header.policy_sha256 = now.policy_sha256;
        let newest = state.files.len() - 1;
        state.write(newest, &to_line(&record).map_err(std::io::Error::other)?)?;
        Ok(())
    }

    /// Writes a `policy/reload-failed` record: reloading `path` failed with
    /// `error` and the policy before stays in force.
    ///
    /// # Errors
    /// The line cannot be written.
    pub fn record_policy_reload_failed(&self, path: &Path, by: ReloadedBy, error: &str) -> std::io::Result<()> {
        let record = PolicyReload {
            event: POLICY_RELOAD_FAILED.to_owned(),
            ts_ms: now_ms(),
            policy_path: std::path::absolute(path)
                .unwrap_or_else(|_| path.to_owned())
                .display()
                .to_string(),
            policy_sha256: None,
            rules: None,
            by: by.name(),
            error: Some(error.to_owned()),
        };
        let mut state = self.lock();
        let newest = state.files.len() - 1;
        state.write(newest, &to_line(&record).map_err(std::io::Error::other)?)?;
        Ok(())
    }

    pub(crate) fn record_result(&self, ready: &ReadyOutcome<'_>) -> Result<(), BoxError> {
        let outcome = ready.outcome;
        let decision = self.decision(ready);
        // One lock for the line and its write: the policy it names is read
        // where it is kept, not copied out first.
        let mut state = self.lock();
        let line = to_line(&ResultLine {
            event: TOOL_RESULT,
            ts_ms: now_ms(),
            batch: ready.batch_id,
            index: ready.index,
            call_id: outcome.call_id(),
            name: outcome.name(),
            code: outcome.code(),
            value: outcome.value(),
            decision,
            policy_sha256: state.open.get(&ready.batch_id).and_then(|b| b.policy_sha256.as_deref()),
        })?;
        let slot = match state.open.get(&ready.batch_id) {
            Some(batch) => state.slot_of(batch.file),
            None => state.files.len() - 1,
        };
        let (_, _, end) = state.write(slot, &line)?;
        state.result_written(ready.batch_id, end);
        Ok(())
    }
}

impl ToolBatchSink for JournalWriter {
    fn call_declared<'a>(&'a self, call: DeclaredCall<'a>) -> SinkFuture<'a> {
        SinkFuture::done(self.record_call(&call))
    }

    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> SinkFuture<'a> {
        SinkFuture::done(self.record_result(&ready))
    }
}

/// A scope as the journal names it.
fn journal_scope(scope: &AgentPipelineScope) -> JournalScope {
    JournalScope {
        label: scope.label().map(str::to_owned),
        session_id: scope.session_id().map(str::to_owned),
        owner: scope.owner().map(str::to_owned),
    }
}

/// A `tool/call` line, written from the declared call as it is.
fn call_line(call: &DeclaredCall<'_>) -> Result<Vec<u8>, BoxError> {
    let declared = call.call;
    to_line(&CallLine {
        event: TOOL_CALL,
        ts_ms: now_ms(),
        batch: call.batch_id,
        index: call.index,
        total: call.total,
        mode: call.mode,
        scope: call.scope.map(|scope| ScopeLine {
            label: scope.label(),
            session_id: scope.session_id(),
            owner: scope.owner(),
        }),
        call_id: &declared.call_id,
        name: &declared.name,
        arguments: &declared.arguments,
        parent_call_id: declared.parent_call_id.as_deref(),
        invocation_context: declared.invocation_context.as_ref(),
    })
}

fn to_line(event: &impl Serialize) -> Result<Vec<u8>, BoxError> {
    let mut line = serde_json::to_vec(event)?;
    line.push(b'\n');
    Ok(line)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
