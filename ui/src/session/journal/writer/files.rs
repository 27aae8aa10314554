//! The files a journal writer holds open: which numbered file each running
//! batch writes to, rotation by size into the next file (never inside a
//! batch), the header each file starts with, the tool declarations written
//! once per file, and the spans of finished batches.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io::Write;
use std::path::Path;

use tether_tools::{AgentPipelineScope, DeclaredCall, SealedToolCatalogView, ToolRegistry};

use super::super::JournalSpan;
use super::super::record::{DeclaredLine, JournalHeader, TOOL_DECLARED};
use super::{journal_scope, now_ms, to_line};
use crate::files::journal_set;

/// Finished spans nobody has asked for are kept this long (a console
/// without a screen never asks).
const UNCLAIMED_SPANS: usize = 4_096;

pub(super) struct OpenFile {
    pub(super) number: u32,
    pub(super) file: File,
    pub(super) len: u64,
}

pub(super) struct OpenBatch {
    pub(super) file: u32,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) remaining: usize,
    /// The sha256 of the policy in force when the batch began.
    pub(super) policy_sha256: Option<String>,
}

pub(super) struct State {
    pub(super) max_bytes: Option<u64>,
    /// The file new batches go to is the last; older ones stay open while a
    /// batch that started in them is still running.
    pub(super) files: Vec<OpenFile>,
    pub(super) open: HashMap<u64, OpenBatch>,
    pub(super) finished: VecDeque<JournalSpan>,
    /// The header line each file of this run starts with.
    pub(super) header: JournalHeader,
    /// The declaration last written for each (scope id, tool) in the newest
    /// file, so it is written again only when it changed (or in a new file).
    pub(super) declared: HashMap<(Option<u64>, String), String>,
    /// Per running batch, the view it runs against and the tools whose
    /// declaration was already looked at.
    pub(super) checking: HashMap<u64, (SealedToolCatalogView, HashSet<String>)>,
}

pub(super) fn open_append(path: &Path) -> std::io::Result<File> {
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

impl State {
    /// The `tool/declared` record to write before `call`, when its tool's
    /// declaration in the call's scope was not written yet or changed.
    pub(super) fn declaration(&mut self, registry: &ToolRegistry, call: &DeclaredCall<'_>) -> Option<DeclaredLine> {
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

    pub(super) fn slot_of(&self, number: u32) -> usize {
        self.files
            .iter()
            .position(|f| f.number == number)
            .unwrap_or(self.files.len() - 1)
    }

    /// Writes one line to the file in `slot`: (its number, where the line
    /// starts, where it ends).
    pub(super) fn write(&mut self, slot: usize, line: &[u8]) -> std::io::Result<(u32, u64, u64)> {
        let file = &mut self.files[slot];
        file.file.write_all(line)?;
        let start = file.len;
        file.len += line.len() as u64;
        Ok((file.number, start, file.len))
    }

    /// Writes the run's header to the file in `slot`.
    pub(super) fn write_header(&mut self, slot: usize) -> std::io::Result<()> {
        self.header.ts_ms = now_ms();
        let line = to_line(&self.header).map_err(std::io::Error::other)?;
        self.write(slot, &line)?;
        Ok(())
    }

    pub(super) fn rotate_if_full(&mut self, base: &Path) -> std::io::Result<()> {
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

    pub(super) fn result_written(&mut self, batch_id: u64, end: u64) {
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
    pub(super) fn close_idle_files(&mut self) {
        let newest = self.files.last().map(|f| f.number);
        let open = &self.open;
        self.files
            .retain(|f| Some(f.number) == newest || open.values().any(|b| b.file == f.number));
    }
}
