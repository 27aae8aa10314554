//! A peer's stdio as lines the gateway can take before rmcp sees them.
//!
//! rmcp reads a peer's stdio as a byte stream and writes it as one. A
//! [`Tap`] in front of its reader hands each whole line to the gateway
//! first: a line the gateway takes never reaches rmcp (from the client, a
//! `tools/call` the gateway runs itself, `gateway/fast.rs`; from a stdio
//! server, the answer to a call the gateway sent it, `upstream/raw.rs`);
//! any other passes through as it came. Writes from rmcp and from the
//! gateway go through one [`LineSink`], whole lines only, in the order they
//! were made, so a line of one is never cut into by the other.
//!
//! rmcp's own transport cannot do this: it parses every line into its typed
//! messages, hands each request to a task of its own and each response back
//! through its service loop; for a `tools/call` the gateway forwards, that
//! was most of what the gateway added to a call (issue 36).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

mod sink;

pub use sink::{LineSink, SinkWriter};

/// Longest line the tap looks at; a longer one passes through to rmcp
/// whole, unlooked at (rmcp drops lines past its own limit, the same).
pub const MOST_LOOKED_AT: usize = 16 * 1024 * 1024;

/// Decides whether the gateway takes a line (without its newline): `true`
/// when it did, and the line goes no further.
pub type Take = Box<dyn FnMut(&[u8]) -> bool + Send>;

/// Whether the tap may read more now: pending (with the waker kept) while
/// where its lines go has no room ([`LineSink::poll_room`]).
pub type Gate = Box<dyn Fn(&mut Context<'_>) -> Poll<()> + Send>;

/// A reader of a peer's stdio that offers each line to [`Take`] and
/// yields the lines it does not take.
pub struct Tap<R> {
    inner: R,
    take: Take,
    /// Told once when the stream ends (or fails).
    end: Option<Box<dyn FnOnce() + Send>>,
    /// Asked before each read of the stream.
    gate: Option<Gate>,
    /// The line read so far (no newline yet).
    line: Vec<u8>,
    /// Lines not taken, for rmcp.
    passed: Vec<u8>,
    /// How much of `passed` rmcp has read.
    read: usize,
    /// The current line grew past [`MOST_LOOKED_AT`]: it passes through up
    /// to its newline.
    passing: bool,
    chunk: Box<[u8]>,
}

impl<R> Tap<R> {
    pub fn new(inner: R, take: Take) -> Self {
        Self {
            inner,
            take,
            end: None,
            gate: None,
            line: Vec::new(),
            passed: Vec::new(),
            read: 0,
            passing: false,
            chunk: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Calls `end` once the stream ends or fails.
    #[must_use]
    pub fn on_end(mut self, end: Box<dyn FnOnce() + Send>) -> Self {
        self.end = Some(end);
        self
    }

    /// Reads nothing more while `gate` is pending.
    #[must_use]
    pub fn gated(mut self, gate: Gate) -> Self {
        self.gate = Some(gate);
        self
    }

    fn ended(&mut self) {
        if let Some(end) = self.end.take() {
            end();
        }
    }

    /// Sorts what was read: whole lines offered, the rest kept.
    fn sort(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let end = memchr::memchr(b'\n', bytes);
            if self.passing {
                let upto = end.map_or(bytes.len(), |end| end + 1);
                self.passed.extend_from_slice(&bytes[..upto]);
                self.passing = end.is_none();
                bytes = &bytes[upto..];
                continue;
            }
            let Some(end) = end else {
                self.line.extend_from_slice(bytes);
                if self.line.len() > MOST_LOOKED_AT {
                    self.passed.append(&mut self.line);
                    self.passing = true;
                }
                return;
            };
            let (head, rest) = (&bytes[..end], &bytes[end + 1..]);
            bytes = rest;
            if !self.line.is_empty() {
                self.line.extend_from_slice(head);
            }
            let whole: &[u8] = if self.line.is_empty() { head } else { &self.line };
            if whole.len() > MOST_LOOKED_AT || !(self.take)(whole) {
                self.passed.extend_from_slice(whole);
                self.passed.push(b'\n');
            }
            self.line.clear();
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Tap<R> {
    /// The tap read by a task of its own, the lines it does not take
    /// coming out of the returned reader (rmcp's). A taken line then costs
    /// no turn of rmcp's service loop, which otherwise woke for every line
    /// only to find the tap had taken it. The end of the stream (or a
    /// failed read) ends the returned reader too.
    pub fn detached(mut self) -> tokio::io::ReadHalf<tokio::io::SimplexStream> {
        use tokio::io::AsyncWriteExt as _;
        let (passed, mut to_rmcp) = tokio::io::simplex(64 * 1024);
        tokio::spawn(async move {
            // Ends at the stream's end, a failed read, or rmcp gone.
            let _ = tokio::io::copy(&mut self, &mut to_rmcp).await;
            let _ = to_rmcp.shutdown().await;
        });
        passed
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.read < this.passed.len() {
                let n = out.remaining().min(this.passed.len() - this.read);
                out.put_slice(&this.passed[this.read..this.read + n]);
                this.read += n;
                if this.read == this.passed.len() {
                    this.passed.clear();
                    this.read = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if let Some(gate) = &this.gate {
                if gate(cx).is_pending() {
                    return Poll::Pending;
                }
            }
            let mut chunk = ReadBuf::new(&mut this.chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(error)) => {
                    this.ended();
                    return Poll::Ready(Err(error));
                }
                Poll::Ready(Ok(())) if chunk.filled().is_empty() => {
                    this.ended();
                    // The end: a last line without its newline goes to rmcp as it is.
                    this.passed.append(&mut this.line);
                    if this.passed.is_empty() {
                        return Poll::Ready(Ok(()));
                    }
                }
                Poll::Ready(Ok(())) => {
                    let n = chunk.filled().len();
                    let bytes = std::mem::take(&mut this.chunk);
                    this.sort(&bytes[..n]);
                    this.chunk = bytes;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::sink::MOST_PENDING;
    use super::*;

    /// What a tap over `input` passes, and every line it offered to `take`.
    async fn tapped(
        input: impl AsyncRead + Unpin,
        take: impl Fn(&[u8]) -> bool + Send + 'static,
    ) -> (Vec<u8>, Vec<Vec<u8>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let saw = Arc::clone(&seen);
        let mut tap = Tap::new(
            input,
            Box::new(move |line: &[u8]| {
                saw.lock().unwrap().push(line.to_vec());
                take(line)
            }),
        );
        let mut passed = Vec::new();
        tap.read_to_end(&mut passed).await.unwrap();
        let seen = seen.lock().unwrap().clone();
        (passed, seen)
    }

    #[tokio::test]
    async fn a_taken_line_goes_no_further_and_the_others_pass_as_they_came() {
        let (passed, seen) = tapped(&b"one\ntake me\n\nthree\r\nlast"[..], |line| line == b"take me").await;
        assert_eq!(passed, b"one\n\nthree\r\nlast");
        assert_eq!(
            seen,
            vec![b"one".to_vec(), b"take me".to_vec(), b"".to_vec(), b"three\r".to_vec()]
        );
    }

    #[tokio::test]
    async fn a_line_read_in_pieces_is_offered_whole() {
        let (reader, mut writer) = tokio::io::duplex(8);
        let writing = tokio::spawn(async move {
            writer
                .write_all(b"{\"take\": \"a line longer than the pipe\"}\n{\"keep\": 1}\n")
                .await
                .unwrap();
        });
        let (passed, seen) = tapped(reader, |line| line.starts_with(b"{\"take\"")).await;
        writing.await.unwrap();
        assert_eq!(passed, b"{\"keep\": 1}\n");
        assert_eq!(seen[0], b"{\"take\": \"a line longer than the pipe\"}");
    }

    #[tokio::test]
    async fn a_line_past_the_limit_passes_unlooked_at() {
        let mut input = vec![b'x'; MOST_LOOKED_AT + 10];
        input.extend_from_slice(b"\nsmall\n");
        let (passed, seen) = tapped(&input[..], |_| true).await;
        assert_eq!(passed.len(), MOST_LOOKED_AT + 11);
        assert_eq!(seen, vec![b"small".to_vec()]);
    }

    #[tokio::test]
    async fn a_detached_tap_takes_lines_on_its_own_task_and_passes_the_rest_then_the_end() {
        let (mut peer, read) = tokio::io::duplex(1 << 16);
        let taken = Arc::new(Mutex::new(Vec::new()));
        let took = Arc::clone(&taken);
        let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let end = Arc::clone(&ended);
        let mut passed = Tap::new(
            read,
            Box::new(move |line: &[u8]| {
                let take = line.starts_with(b"{\"take\"");
                if take {
                    took.lock().unwrap().push(line.to_vec());
                }
                take
            }),
        )
        .on_end(Box::new(move || end.store(true, std::sync::atomic::Ordering::SeqCst)))
        .detached();
        peer.write_all(b"{\"take\": 1}\n{\"keep\": 2}\n").await.unwrap();
        // Taken without anyone reading what passes.
        for _ in 0..100 {
            if !taken.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(*taken.lock().unwrap(), [b"{\"take\": 1}".to_vec()]);
        peer.write_all(b"{\"take\": 3}\nlast, no newline").await.unwrap();
        drop(peer);
        let mut out = Vec::new();
        passed.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"{\"keep\": 2}\nlast, no newline");
        assert_eq!(taken.lock().unwrap().len(), 2);
        assert!(ended.load(std::sync::atomic::Ordering::SeqCst));
    }

    /// A server flooding a client that stops reading: the tap gated by the
    /// client's sink stops reading the server once the sink holds
    /// `MOST_PENDING` bytes (the server then waits on its full pipe), and
    /// reads on, every line in order, once the client reads again.
    #[tokio::test]
    async fn a_client_that_stops_reading_stops_the_server_not_the_memory() {
        let (client, mut client_reads) = tokio::io::duplex(64 * 1024);
        let to_client = LineSink::start(client);
        let (server_out, mut server_writes) = tokio::io::duplex(64 * 1024);
        let forward = to_client.clone();
        let gate = to_client.clone();
        let mut rest = Tap::new(
            server_out,
            Box::new(move |line: &[u8]| {
                forward.send(line.to_vec());
                true
            }),
        )
        .gated(Box::new(move |cx| gate.poll_room(cx)))
        .detached();
        let _rmcp = tokio::spawn(async move { tokio::io::copy(&mut rest, &mut tokio::io::sink()).await });
        // Three times what the sink may hold, in 64 KiB lines.
        let line = format!("{}\n", "x".repeat(64 * 1024 - 1));
        let lines = 3 * MOST_PENDING / line.len();
        let written = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&written);
        let server = tokio::spawn(async move {
            for _ in 0..lines {
                server_writes.write_all(line.as_bytes()).await.unwrap();
                counted.fetch_add(line.len(), std::sync::atomic::Ordering::Relaxed);
            }
        });
        // Until the server can write no more: the client has read nothing.
        let mut last = usize::MAX;
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let now = written.load(std::sync::atomic::Ordering::Relaxed);
            if now == last {
                break;
            }
            last = now;
        }
        assert!(!server.is_finished(), "the server wrote all it had: nothing stopped it");
        // What the sink holds, one line over at most, the tap's chunk and the two pipes.
        assert!(
            last <= MOST_PENDING + 64 * 1024 + 64 * 1024 + 3 * 64 * 1024,
            "the server wrote {last} bytes to a client that reads nothing"
        );
        // The client reads again: everything arrives, in order, whole.
        let mut got = vec![0; 3 * MOST_PENDING];
        let total = lines * 64 * 1024;
        client_reads.read_exact(&mut got[..total]).await.unwrap();
        assert!(
            got[..total]
                .chunks(64 * 1024)
                .all(|l| l.ends_with(b"\n") && l[..l.len() - 1].iter().all(|b| *b == b'x'))
        );
        server.await.unwrap();
    }
}
