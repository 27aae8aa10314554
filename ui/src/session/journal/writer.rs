//! Writing the journal: append-only JSON lines, mode 0600, written line by
//! line and handed to the OS before the sink returns (a crash of the
//! console loses no declared call). Optionally rotated by size into
//! numbered files (`PATH`, `PATH.1`, `PATH.2`, …) without ever splitting a
//! batch's records; every file starts with the run's header. Each finished
//! batch's place is kept as a [`JournalSpan`], so the console reads an old
//! batch back with a seek.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use serde::Serialize;
use tether_tools::journal::{CallRecord, JournalScope, TOOL_CALL, TOOL_RESULT};
use tether_tools::{
    AgentPipelineScope, BoxError, DeclaredCall, ReadyOutcome, SealedToolCatalogView, SinkFuture, ToolBatchSink,
    ToolRegistry,
};

use super::record::{
    DeclaredLine, JournalHeader, POLICY_RELOAD, POLICY_RELOAD_FAILED, PolicyReload, ReloadedBy, ResultLine,
    TOOL_DECLARED,
};
use super::{Decision, JournalReader, JournalSpan};
use crate::files::journal_set;
use crate::session::provenance::{CallKey, DecisionLog};

/// Finished spans nobody has asked for are kept this long (a console
/// without a screen never asks).
const UNCLAIMED_SPANS: usize = 4_096;

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

struct OpenFile {
    number: u32,
    file: File,
    len: u64,
}

struct OpenBatch {
    file: u32,
    start: u64,
    end: u64,
    remaining: usize,
    /// The sha256 of the policy in force when the batch began.
    policy_sha256: Option<String>,
}

struct State {
    max_bytes: Option<u64>,
    /// The file new batches go to is the last; older ones stay open while a
    /// batch that started in them is still running.
    files: Vec<OpenFile>,
    open: HashMap<u64, OpenBatch>,
    finished: VecDeque<JournalSpan>,
    /// The header line each file of this run starts with.
    header: JournalHeader,
    /// The declaration last written for each (scope id, tool) in the newest
    /// file, so it is written again only when it changed (or in a new file).
    declared: HashMap<(Option<u64>, String), String>,
    /// Per running batch, the view it runs against and the tools whose
    /// declaration was already looked at.
    checking: HashMap<u64, (SealedToolCatalogView, HashSet<String>)>,
}

fn open_append(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
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
        let line = to_line(&CallRecord {
            event: TOOL_CALL.to_owned(),
            ts_ms: now_ms(),
            batch: call.batch_id,
            index: call.index,
            total: call.total,
            mode: call.mode,
            scope: call.scope.map(journal_scope),
            call: call.call.clone(),
        })?;
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
        Some(log.with_trail(&key, |trail| {
            Decision::of(ready.outcome, trail, Some(self.approval_timeout))
        }))
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
            by: by.as_str().to_owned(),
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
            by: by.as_str().to_owned(),
            error: Some(error.to_owned()),
        };
        let mut state = self.lock();
        let newest = state.files.len() - 1;
        state.write(newest, &to_line(&record).map_err(std::io::Error::other)?)?;
        Ok(())
    }

    pub(crate) fn record_result(&self, ready: &ReadyOutcome<'_>) -> Result<(), BoxError> {
        let outcome = ready.outcome;
        let policy_sha256 = self
            .lock()
            .open
            .get(&ready.batch_id)
            .and_then(|b| b.policy_sha256.clone());
        let line = to_line(&ResultLine {
            event: TOOL_RESULT,
            ts_ms: now_ms(),
            batch: ready.batch_id,
            index: ready.index,
            call_id: outcome.call_id(),
            name: outcome.name(),
            code: outcome.code(),
            value: outcome.value(),
            decision: self.decision(ready),
            policy_sha256: policy_sha256.as_deref(),
        })?;
        let mut state = self.lock();
        let slot = match state.open.get(&ready.batch_id) {
            Some(batch) => state.slot_of(batch.file),
            None => state.files.len() - 1,
        };
        let (_, _, end) = state.write(slot, &line)?;
        state.result_written(ready.batch_id, end);
        Ok(())
    }
}

impl State {
    /// The `tool/declared` record to write before `call`, when its tool's
    /// declaration in the call's scope was not written yet or changed.
    fn declaration(&mut self, registry: &ToolRegistry, call: &DeclaredCall<'_>) -> Option<DeclaredLine> {
        let (view, checked) = self
            .checking
            .entry(call.batch_id)
            .or_insert_with(|| (registry.seal(call.scope), HashSet::new()));
        if !checked.insert(call.call.name.clone()) {
            return None;
        }
        let snapshot = view.declaration(&call.call.name)?;
        let scope = call.scope.map(AgentPipelineScope::id);
        let line = DeclaredLine {
            event: TOOL_DECLARED,
            ts_ms: now_ms(),
            scope: call.scope.map(journal_scope),
            name: snapshot.name().to_owned(),
            description: snapshot.description().to_owned(),
            parameters: snapshot.parameters().clone(),
            concurrency: crate::files::scenario::declared::rule_of(scope, &call.call.name),
        };
        let fingerprint = serde_json::to_string(&(&line.description, &line.parameters, &line.concurrency)).ok()?;
        let key = (scope, call.call.name.clone());
        if self.declared.get(&key) == Some(&fingerprint) {
            return None;
        }
        self.declared.insert(key, fingerprint);
        Some(line)
    }

    fn slot_of(&self, number: u32) -> usize {
        self.files
            .iter()
            .position(|f| f.number == number)
            .unwrap_or(self.files.len() - 1)
    }

    /// Writes one line to the file in `slot`: (its number, where the line
    /// starts, where it ends).
    fn write(&mut self, slot: usize, line: &[u8]) -> std::io::Result<(u32, u64, u64)> {
        let file = &mut self.files[slot];
        file.file.write_all(line)?;
        let start = file.len;
        file.len += line.len() as u64;
        Ok((file.number, start, file.len))
    }

    /// Writes the run's header to the file in `slot`.
    fn write_header(&mut self, slot: usize) -> std::io::Result<()> {
        self.header.ts_ms = now_ms();
        let line = to_line(&self.header).map_err(std::io::Error::other)?;
        self.write(slot, &line)?;
        Ok(())
    }

    fn rotate_if_full(&mut self, base: &Path) -> std::io::Result<()> {
        let newest = &self.files[self.files.len() - 1];
        let Some(max) = self.max_bytes else {
            return Ok(());
        };
        if newest.len < max.max(1) {
            return Ok(());
        }
        let number = newest.number + 1;
        let file = open_append(&journal_set::numbered(base, number))?;
        let len = file.metadata()?.len();
        self.files.push(OpenFile { number, file, len });
        self.close_idle_files();
        // Each file says which run and policy wrote it, and declares the tools its calls use.
        self.declared.clear();
        let newest = self.files.len() - 1;
        self.write_header(newest)
    }

    fn result_written(&mut self, batch_id: u64, end: u64) {
        let Some(batch) = self.open.get_mut(&batch_id) else {
            return;
        };
        batch.end = end;
        batch.remaining = batch.remaining.saturating_sub(1);
        if batch.remaining > 0 {
            return;
        }
        self.checking.remove(&batch_id);
        if let Some(batch) = self.open.remove(&batch_id) {
            self.finished.push_back(JournalSpan {
                batch_id,
                file: batch.file,
                start: batch.start,
                end: batch.end,
            });
            if self.finished.len() > UNCLAIMED_SPANS {
                self.finished.pop_front();
            }
            self.close_idle_files();
        }
    }

    /// Older files no running batch writes to are closed.
    fn close_idle_files(&mut self) {
        let newest = self.files.last().map(|f| f.number);
        let open = &self.open;
        self.files
            .retain(|f| Some(f.number) == newest || open.values().any(|b| b.file == f.number));
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::num::NonZeroUsize;

    use serde_json::{Value, json};
    use tether_tools::journal::Journal;
    use tether_tools::{Tool, ToolCall, ToolContext, ToolRegistrationOptions, ToolRegistry};
    use tokio_util::sync::CancellationToken;

    use super::*;

    fn header() -> JournalHeader {
        JournalHeader::new(None, Duration::from_secs(5))
    }

    async fn run_batches(writer: &JournalWriter, batches: usize, calls: usize) -> Vec<(u64, Option<JournalSpan>)> {
        let registry = ToolRegistry::new();
        let tool = Tool::new(
            "echo",
            "",
            json!({"type": "object"}),
            |args: Value, _: ToolContext| async move { Ok::<_, BoxError>(args) },
        );
        let _reg = registry
            .register(
                tool,
                None,
                ToolRegistrationOptions::default().with_concurrency(|_| true),
            )
            .unwrap();
        let view = registry.seal(None);
        let mut ids = Vec::new();
        for b in 0..batches {
            let calls = (0..calls)
                .map(|i| {
                    ToolCall::new(
                        format!("b{b}-c{i}"),
                        "echo",
                        format!("{{\"n\":\"{}\"}}", "x".repeat(100)),
                    )
                })
                .collect();
            let outcome = registry
                .execute_batch(
                    calls,
                    &view,
                    NonZeroUsize::new(4).unwrap(),
                    Some(writer),
                    &CancellationToken::new(),
                )
                .await;
            ids.push((outcome.batch_id, writer.take_span(outcome.batch_id)));
        }
        ids
    }

    #[tokio::test]
    async fn rotation_keeps_every_record_and_never_splits_a_batch() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("j.jsonl");
        let writer = JournalWriter::open(&base, Some(2_000), header()).unwrap();
        let spans = run_batches(&writer, 12, 5).await;
        let files = journal_set::files(&base);
        assert!(files.len() > 3, "rotated into {} files", files.len());
        let mut seen_in = HashMap::new();
        for (number, path) in files.iter().enumerate() {
            let text = std::fs::read_to_string(path).unwrap();
            let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
            assert_eq!(first["event"], "journal/header", "file {number} starts with the header");
            for line in text.lines().skip(1) {
                let value: Value = serde_json::from_str(line).unwrap();
                let batch = value["batch"].as_u64().unwrap();
                let file = *seen_in.entry(batch).or_insert(number);
                assert_eq!(file, number, "batch {batch} is split between two files");
            }
        }
        let journal = Journal::parse(&journal_set::read_text(&base).unwrap()).unwrap();
        assert_eq!(journal.batches.len(), 12);
        assert!(
            journal
                .batches
                .iter()
                .all(|b| b.calls.len() == 5 && b.calls.iter().all(|c| c.outcome.is_some()))
        );
        assert_eq!(writer.open_files(), 1, "older files are closed once their batches end");
        // Every batch comes back from its span with a seek.
        let reader = writer.reader();
        for (batch_id, span) in spans {
            let span = span.expect("a finished batch has a span");
            let batch = reader.read_batch(&span).unwrap();
            assert_eq!(batch.batch, batch_id);
            assert_eq!(batch.calls.len(), 5);
            assert_eq!(
                batch.calls[4].outcome.as_ref().unwrap().value(),
                &json!({"n": "x".repeat(100)})
            );
        }
    }

    #[tokio::test]
    async fn a_rotated_set_is_continued_in_its_newest_file() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("j.jsonl");
        let first = JournalWriter::open(&base, Some(1_000), header()).unwrap();
        run_batches(&first, 4, 3).await;
        drop(first);
        let newest = journal_set::newest_number(&base);
        assert!(newest > 0);
        let before = std::fs::metadata(journal_set::numbered(&base, newest)).unwrap().len();
        let second = JournalWriter::open(&base, None, header()).unwrap();
        run_batches(&second, 1, 1).await;
        assert_eq!(journal_set::newest_number(&base), newest);
        assert!(std::fs::metadata(journal_set::numbered(&base, newest)).unwrap().len() > before);
        // Both runs' batches are in the set (ids repeat across runs).
        let journal = Journal::parse(&journal_set::read_text(&base).unwrap()).unwrap();
        assert_eq!(journal.batches.len(), 5);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn every_file_of_the_set_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("j.jsonl");
        let writer = JournalWriter::open(&base, Some(500), header()).unwrap();
        run_batches(&writer, 3, 3).await;
        for path in journal_set::files(&base) {
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", path.display());
        }
    }
}
