//! A durable session log (SPEC §10): a [`ToolBatchSink`] that writes
//! `tool/call` and `tool/result` events as JSON lines to any async writer,
//! and a reader that turns a journal back into the batches it recorded.
//!
//! Each event is one line, written and flushed before the sink returns, so a
//! crash loses no declared call: `tool/call` is on its way to disk before the
//! call's body can start.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

use crate::batch::{DeclaredCall, ReadyOutcome, SinkFuture, ToolBatchSink};
use crate::call::ToolCall;
use crate::error::BoxError;
use crate::outcome::{ToolExecutionOutcome, ToolFailureCode};
use crate::view::ToolExecutionMode;

/// The `event` of a declared call.
pub const TOOL_CALL: &str = "tool/call";
/// The `event` of a final outcome.
pub const TOOL_RESULT: &str = "tool/result";

/// The identity of the scope a batch ran in, as recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalScope {
    /// The scope's display label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The session id (inherited ones included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The owner (inherited ones included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// One `tool/call` line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// Always [`TOOL_CALL`].
    pub event: String,
    /// Milliseconds since the Unix epoch.
    pub ts_ms: u64,
    /// The batch id.
    pub batch: u64,
    /// Position in the batch.
    pub index: usize,
    /// Calls in the batch.
    pub total: usize,
    /// Classification at batch start.
    pub mode: ToolExecutionMode,
    /// The scope of the batch's view, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<JournalScope>,
    /// The call as declared, raw argument text included.
    #[serde(flatten)]
    pub call: ToolCall,
}

/// One `tool/result` line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    /// Always [`TOOL_RESULT`].
    pub event: String,
    /// Milliseconds since the Unix epoch.
    pub ts_ms: u64,
    /// The batch id.
    pub batch: u64,
    /// Position in the batch.
    pub index: usize,
    /// The call id.
    pub call_id: String,
    /// The tool name.
    pub name: String,
    /// The failure code, `null` on success.
    pub code: Option<ToolFailureCode>,
    /// The value the model saw.
    pub value: Value,
    /// Fields a writer added beside these (a console's record of what
    /// decided the call), kept as written.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

impl ResultRecord {
    /// The outcome this line recorded.
    pub fn outcome(&self) -> ToolExecutionOutcome {
        let result = match self.code {
            None => Ok(self.value.clone()),
            Some(code) => {
                let message = self.value.get("message").and_then(Value::as_str).unwrap_or_default();
                Err((code, message.to_owned()))
            }
        };
        ToolExecutionOutcome::from_parts(&self.call_id, &self.name, result)
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A [`ToolBatchSink`] writing JSON lines to `W`, flushing after each event.
pub struct JournalSink<W> {
    writer: Mutex<W>,
}

impl<W: AsyncWrite + Unpin + Send> JournalSink<W> {
    /// A journal over `writer`.
    pub fn new(writer: W) -> Self {
        Self {
            writer: Mutex::new(writer),
        }
    }

    /// Appends any serializable event as one line (for example an approval
    /// decision with its provenance), and flushes.
    ///
    /// # Errors
    /// Serialization or I/O failures.
    pub async fn write_event(&self, event: &impl Serialize) -> Result<(), BoxError> {
        let mut line = serde_json::to_vec(event)?;
        line.push(b'\n');
        // One writer at a time, so lines never interleave.
        let mut writer = self.writer.lock().await;
        writer.write_all(&line).await?;
        writer.flush().await?;
        Ok(())
    }

    /// Gives the writer back.
    pub fn into_inner(self) -> W {
        self.writer.into_inner()
    }
}

impl<W: AsyncWrite + Unpin + Send> ToolBatchSink for JournalSink<W> {
    fn call_declared<'a>(&'a self, declared: DeclaredCall<'a>) -> SinkFuture<'a> {
        SinkFuture::pending(async move {
            let record = CallRecord {
                event: TOOL_CALL.to_owned(),
                ts_ms: now_ms(),
                batch: declared.batch_id,
                index: declared.index,
                total: declared.total,
                mode: declared.mode,
                scope: declared.scope.map(|s| JournalScope {
                    label: s.label().map(str::to_owned),
                    session_id: s.session_id().map(str::to_owned),
                    owner: s.owner().map(str::to_owned),
                }),
                call: declared.call.clone(),
            };
            self.write_event(&record).await
        })
    }

    fn outcome_ready<'a>(&'a self, ready: ReadyOutcome<'a>) -> SinkFuture<'a> {
        SinkFuture::pending(async move {
            let record = ResultRecord {
                event: TOOL_RESULT.to_owned(),
                ts_ms: now_ms(),
                batch: ready.batch_id,
                index: ready.index,
                call_id: ready.outcome.call_id().to_owned(),
                name: ready.outcome.name().to_owned(),
                code: ready.outcome.code(),
                value: ready.outcome.value().clone(),
                extra: serde_json::Map::new(),
            };
            self.write_event(&record).await
        })
    }
}

/// One recorded call and, if it was recorded, its outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct JournalCall {
    /// The `tool/call` line.
    pub record: CallRecord,
    /// The outcome from the matching `tool/result` line; `None` when the
    /// journal ends before it (a crash mid-batch).
    pub outcome: Option<ToolExecutionOutcome>,
    /// The fields the `tool/result` line held beyond the engine's own
    /// ([`ResultRecord::extra`]); empty without one.
    pub result_extra: serde_json::Map<String, Value>,
}

/// One recorded batch.
#[derive(Clone, Debug, PartialEq)]
pub struct JournalBatch {
    /// The batch id.
    pub batch: u64,
    /// The scope it ran in.
    pub scope: Option<JournalScope>,
    /// Its calls, in declared order.
    pub calls: Vec<JournalCall>,
}

impl JournalBatch {
    /// The calls to replay, in declared order.
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.calls.iter().map(|c| c.record.call.clone()).collect()
    }
}

/// A journal read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Journal {
    /// The batches, in the order their first call was recorded.
    pub batches: Vec<JournalBatch>,
    /// Lines of other events (approval decisions and the like), kept as JSON.
    pub other_events: Vec<Value>,
    /// The 1-based number of a last line cut short by a crash, if any. That
    /// line is ignored; everything before it is read.
    pub truncated_line: Option<usize>,
}

/// Why a journal could not be read.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum JournalError {
    /// A line is not JSON.
    #[error("line {line}, column {column}: not JSON: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// A line is JSON but not a valid event.
    #[error("line {line}: {message}")]
    Shape {
        /// 1-based line.
        line: usize,
        /// What was wrong.
        message: String,
    },
}

impl Journal {
    /// Reads a journal's text. A last line without its newline that does not
    /// parse is reported in [`Journal::truncated_line`], never an error: it is
    /// what a crash mid-write leaves.
    ///
    /// # Errors
    /// Any other line that is not JSON or not a valid event; a `tool/result`
    /// with no matching `tool/call`.
    pub fn parse(text: &str) -> Result<Journal, JournalError> {
        let mut journal = Journal::default();
        let ends_cleanly = text.is_empty() || text.ends_with('\n');
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let number = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let is_last = number == lines.len();
            let value: Value = match serde_json::from_str(line) {
                Ok(value) => value,
                Err(_) if is_last && !ends_cleanly => {
                    journal.truncated_line = Some(number);
                    break;
                }
                Err(e) => {
                    return Err(JournalError::Syntax {
                        line: number,
                        column: e.column(),
                        message: e.to_string(),
                    });
                }
            };
            let shape = |e: serde_json::Error| JournalError::Shape {
                line: number,
                message: e.to_string(),
            };
            match value.get("event").and_then(Value::as_str) {
                Some(TOOL_CALL) => {
                    let record: CallRecord = serde_json::from_value(value).map_err(shape)?;
                    journal.add_call(record);
                }
                Some(TOOL_RESULT) => {
                    let record: ResultRecord = serde_json::from_value(value).map_err(shape)?;
                    journal
                        .add_result(record)
                        .map_err(|message| JournalError::Shape { line: number, message })?;
                }
                Some(_) => journal.other_events.push(value),
                None => {
                    return Err(JournalError::Shape {
                        line: number,
                        message: "expected an object with a string field \"event\"".to_owned(),
                    });
                }
            }
        }
        Ok(journal)
    }

    fn add_call(&mut self, record: CallRecord) {
        // Batch ids are unique per registry, not per file: a journal appended to
        // by two runs can repeat one, so index 0 (or a repeated index) starts
        // a new batch.
        let current = self
            .batches
            .iter_mut()
            .rev()
            .find(|b| b.batch == record.batch)
            .filter(|b| record.index != 0 && b.calls.iter().all(|c| c.record.index != record.index));
        let batch = match current {
            Some(batch) => batch,
            None => {
                self.batches.push(JournalBatch {
                    batch: record.batch,
                    scope: record.scope.clone(),
                    calls: Vec::new(),
                });
                let last = self.batches.len() - 1;
                &mut self.batches[last]
            }
        };
        batch.calls.push(JournalCall {
            record,
            outcome: None,
            result_extra: serde_json::Map::new(),
        });
    }

    fn add_result(&mut self, record: ResultRecord) -> Result<(), String> {
        let call = self
            .batches
            .iter_mut()
            .rev()
            .filter(|b| b.batch == record.batch)
            .flat_map(|b| b.calls.iter_mut())
            .find(|c| c.record.index == record.index && c.record.call.call_id == record.call_id)
            .ok_or_else(|| {
                format!(
                    "tool/result for call {:?} (batch {}, index {}) has no tool/call before it",
                    record.call_id, record.batch, record.index
                )
            })?;
        if call.outcome.is_some() {
            return Err(format!("second tool/result for call {:?}", record.call_id));
        }
        call.outcome = Some(record.outcome());
        call.result_extra = record.extra;
        Ok(())
    }
}
