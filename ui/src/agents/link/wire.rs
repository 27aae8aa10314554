//! The bytes on an agent's socket. Lines are read into one buffer and
//! handed out as `&str` slices of it; frames to the agent are written into
//! one shared buffer that a writer task sends. No frame has an allocation
//! or a channel slot of its own, and whatever gathered while the writer
//! waited (a call's notification and its call-back) goes out in one write.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;

use futures::task::AtomicWaker;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::protocol::MAX_LINE;

/// What a buffer may keep between bursts; a larger one (a big frame) is
/// given back once it is empty.
const KEEP: usize = 64 * 1024;

/// One line from an agent, or word that a line was too long (and skipped)
/// or was not UTF-8.
#[derive(Debug, PartialEq)]
pub enum Frame<'a> {
    Line(&'a str),
    TooLong,
    /// The line's bytes are not UTF-8; `valid_up_to` is where the first bad
    /// byte sits.
    NotUtf8 {
        valid_up_to: usize,
    },
}

impl<'a> Frame<'a> {
    fn read(line: &'a [u8]) -> Self {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match std::str::from_utf8(line) {
            Ok(text) => Frame::Line(text),
            Err(e) => Frame::NotUtf8 {
                valid_up_to: e.valid_up_to(),
            },
        }
    }
}

/// Newline-delimited frames, at most [`MAX_LINE`] bytes each. A line that is
/// too long or not UTF-8 is a frame, not an error: one bad line must not end
/// the agent's connection. The rest of a too-long line is skipped.
#[derive(Debug, Default)]
pub struct LineReader {
    buf: Vec<u8>,
    /// Where the first unread line starts.
    head: usize,
    /// How far the search for a newline has got.
    scanned: usize,
    /// Skipping the rest of a too-long line.
    discarding: bool,
}

impl LineReader {
    /// The next whole line already read, if any.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        loop {
            let len = self.buf.len();
            let Some(end) = memchr::memchr(b'\n', &self.buf[self.scanned..]).map(|at| self.scanned + at) else {
                if self.discarding || len - self.head > MAX_LINE {
                    (self.head, self.scanned) = (len, len);
                    return (!std::mem::replace(&mut self.discarding, true)).then_some(Frame::TooLong);
                }
                self.scanned = len;
                return None;
            };
            let start = std::mem::replace(&mut self.head, end + 1);
            self.scanned = end + 1;
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            if end - start > MAX_LINE {
                return Some(Frame::TooLong);
            }
            return Some(Frame::read(&self.buf[start..end]));
        }
    }

    /// The last line when the agent closed the socket without a newline.
    pub fn rest(&mut self) -> Option<Frame<'_>> {
        let start = std::mem::replace(&mut self.head, self.buf.len());
        self.scanned = self.head;
        (!self.discarding && start < self.head).then(|| Frame::read(&self.buf[start..]))
    }

    /// Reads more from `from`; `Ok(0)` at its end. Cancel safe.
    pub async fn fill(&mut self, from: &mut (impl AsyncRead + Unpin)) -> std::io::Result<usize> {
        if self.head > 0 {
            self.buf.drain(..self.head);
            self.scanned -= self.head;
            self.head = 0;
            if self.buf.is_empty() {
                self.buf.shrink_to(KEEP);
            }
        }
        self.buf.reserve(4096);
        from.read_buf(&mut self.buf).await
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Frames waiting for the writer, in the order they were written.
#[derive(Default)]
pub(super) struct Outbox {
    state: Mutex<Pending>,
    /// The writer, waiting for frames (lighter than a `Notify`: one waiter).
    writer: AtomicWaker,
}

#[derive(Default)]
struct Pending {
    buf: Vec<u8>,
    /// No more frames will come: the writer stops once it has sent these.
    closed: bool,
    /// Writing failed: the agent is gone, frames are dropped.
    broken: bool,
}

impl Outbox {
    /// Appends one frame; `write` writes it without its newline.
    pub(super) fn push(&self, write: impl FnOnce(&mut Vec<u8>)) {
        let mut pending = lock(&self.state);
        if pending.broken {
            return;
        }
        let was_empty = pending.buf.is_empty();
        write(&mut pending.buf);
        pending.buf.push(b'\n');
        drop(pending);
        // The writer either waits (then this wakes it) or will look at the
        // buffer again before it waits; one wake-up per burst is enough.
        if was_empty {
            self.writer.wake();
        }
    }

    /// No more frames: the writer ends after sending what is queued.
    pub(super) fn close(&self) {
        lock(&self.state).closed = true;
        self.writer.wake();
    }

    /// Sends frames until the outbox is closed and empty, or writing fails.
    pub(super) async fn run(self: Arc<Self>, mut to: impl AsyncWrite + Unpin) {
        let mut sending = Vec::new();
        loop {
            let closed = {
                let mut pending = lock(&self.state);
                std::mem::swap(&mut pending.buf, &mut sending);
                pending.closed
            };
            if sending.is_empty() {
                if closed {
                    return;
                }
                // Registered before looking again, so a frame pushed in
                // between is not missed.
                std::future::poll_fn(|cx| {
                    self.writer.register(cx.waker());
                    let pending = lock(&self.state);
                    if pending.buf.is_empty() && !pending.closed {
                        Poll::Pending
                    } else {
                        Poll::Ready(())
                    }
                })
                .await;
                continue;
            }
            if to.write_all(&sending).await.is_err() {
                let mut pending = lock(&self.state);
                pending.broken = true;
                pending.buf = Vec::new();
                return;
            }
            sending.clear();
            sending.shrink_to(KEEP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(reader: &mut LineReader) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame() {
            out.push(format!("{frame:?}"));
        }
        out
    }

    fn feed(reader: &mut LineReader, bytes: &[u8]) {
        if reader.head > 0 {
            reader.buf.drain(..reader.head);
            reader.scanned -= reader.head;
            reader.head = 0;
        }
        reader.buf.extend_from_slice(bytes);
    }

    #[test]
    fn lines_split_across_reads_come_out_whole() {
        let mut reader = LineReader::default();
        feed(&mut reader, b"{\"a\":1}\n{\"b\"");
        assert_eq!(frames(&mut reader), [r#"Line("{\"a\":1}")"#]);
        feed(&mut reader, b":2}\r\n\xff\n");
        assert_eq!(
            frames(&mut reader),
            [r#"Line("{\"b\":2}")"#, "NotUtf8 { valid_up_to: 0 }"]
        );
        feed(&mut reader, b"tail");
        assert_eq!(frames(&mut reader), Vec::<String>::new());
        assert_eq!(reader.rest(), Some(Frame::Line("tail")));
        assert_eq!(reader.rest(), None);
    }

    #[test]
    fn a_too_long_line_is_one_frame_and_the_next_line_still_reads() {
        let mut reader = LineReader::default();
        feed(&mut reader, &vec![b'x'; MAX_LINE]);
        assert_eq!(frames(&mut reader), Vec::<String>::new());
        feed(&mut reader, b"xx");
        assert_eq!(frames(&mut reader), ["TooLong"]);
        feed(&mut reader, b"xxx\nok\n");
        assert_eq!(frames(&mut reader), [r#"Line("ok")"#]);

        let mut reader = LineReader::default();
        let mut long = vec![b'y'; MAX_LINE + 1];
        long.extend_from_slice(b"\nnext\n");
        feed(&mut reader, &long);
        assert_eq!(frames(&mut reader), ["TooLong", r#"Line("next")"#]);

        let mut reader = LineReader::default();
        let mut exact = vec![b'z'; MAX_LINE];
        exact.push(b'\n');
        feed(&mut reader, &exact);
        let read = frames(&mut reader);
        assert_eq!(read.len(), 1);
        assert!(read[0].starts_with("Line("), "{read:?}");
    }
}
