//! Whole lines to a peer, from rmcp and the gateway alike, in the order
//! they were sent.
//!
//! A line is written at once, by whoever sends it, when nothing is queued
//! or being written and the peer takes it without waiting (a pipe or a
//! socket with room: nearly always); otherwise it is queued for the writer
//! task, which writes the queue in order. The direct write is what a
//! forwarded call's two lines (to the server, back to the client) take: a
//! task woken per line and a channel crossed was a measurable part of what
//! the gateway added to a call (issue 36, docs/performance.md).
//!
//! A peer that stops reading is not sent more than it takes: past
//! [`MOST_PENDING`] bytes unwritten, [`LineSink::poll_room`] is pending, and
//! what reads lines for that peer (a server's output, for the client: the
//! server's [`super::Tap`] is gated on it) waits, so the source is held up
//! on its own full pipe rather than the queue growing without end.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncWrite, AsyncWriteExt as _};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

type Out = Pin<Box<dyn AsyncWrite + Send>>;

/// Whole lines to a peer (the client, an upstream server, the console),
/// from rmcp and the gateway alike, written in the order they were sent.
/// When the last clone is dropped, the peer is closed once what was sent
/// is written.
#[derive(Clone)]
pub struct LineSink(Arc<Handle>);

/// What every clone of a sink shares; dropped with the last one.
struct Handle(Arc<Shared>);

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.closed.cancel();
    }
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer task: something was queued, or the sink closed.
    queued: Notify,
    /// Cancelled to close the sink, and when a write fails (the peer is gone).
    closed: CancellationToken,
}

struct State {
    /// The peer; `None` while the writer task is writing to it.
    out: Option<Out>,
    /// Lines (or a line's unwritten end) waiting, oldest first.
    queue: VecDeque<Vec<u8>>,
    /// Bytes sent and not yet written: the queue's and the writer's.
    pending: usize,
    /// Waiting for `pending` to come down ([`LineSink::poll_room`]).
    waiting: Vec<Waker>,
}

/// Bytes a sink holds for a peer that does not read before
/// [`LineSink::poll_room`] says it has none; room again at half.
pub const MOST_PENDING: usize = 8 * 1024 * 1024;

impl State {
    fn wake_waiting(&mut self) {
        for waker in self.waiting.drain(..) {
            waker.wake();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl LineSink {
    /// Starts the task that writes to `out`. Needs the runtime.
    pub fn start<W: AsyncWrite + Send + 'static>(out: W) -> Self {
        Self::start_until(out, CancellationToken::new())
    }

    /// [`Self::start`], the writing stopped by `closed` (once what was sent
    /// before is written), and `closed` cancelled when a write fails: the
    /// peer is gone.
    pub fn start_until<W: AsyncWrite + Send + 'static>(out: W, closed: CancellationToken) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                out: Some(Box::pin(out)),
                queue: VecDeque::new(),
                pending: 0,
                waiting: Vec::new(),
            }),
            queued: Notify::new(),
            closed,
        });
        tokio::spawn(write_queued(Arc::clone(&shared)));
        Self(Arc::new(Handle(shared)))
    }

    fn shared(&self) -> &Shared {
        &self.0.0
    }

    /// Closes the peer's input once what was sent before is written,
    /// whoever else still holds the sink.
    pub fn close(&self) {
        self.shared().closed.cancel();
    }

    /// Writes one message, its newline added: at once when the peer takes
    /// it whole and nothing is ahead of it, else queued.
    pub fn send(&self, mut line: Vec<u8>) {
        if self.shared().closed.is_cancelled() {
            return;
        }
        line.push(b'\n');
        let mut state = self.shared().lock();
        if state.queue.is_empty() {
            if let Some(out) = state.out.as_mut() {
                match write_now(out, &line) {
                    Ok(Written::All) => return,
                    // Nothing left to write: the writer task flushes.
                    Ok(Written::Unflushed) => line.clear(),
                    Ok(Written::Part(written)) => {
                        line.drain(..written);
                    }
                    Err(_) => {
                        drop(state);
                        self.shared().closed.cancel();
                        return;
                    }
                }
            }
        }
        state.pending += line.len();
        state.queue.push_back(line);
        drop(state);
        self.shared().queued.notify_one();
    }

    /// Ready while the sink holds at most [`MOST_PENDING`] bytes its peer
    /// has not taken (or it is closed); else pending until the peer has
    /// taken half of them. What reads a source of lines for this peer (a
    /// server's output for the client) waits on it, so a peer that stops
    /// reading stops the source instead of growing the queue without end.
    pub fn poll_room(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.shared().lock();
        if state.pending <= MOST_PENDING || self.shared().closed.is_cancelled() {
            return Poll::Ready(());
        }
        if !state.waiting.iter().any(|w| w.will_wake(cx.waker())) {
            state.waiting.push(cx.waker().clone());
        }
        Poll::Pending
    }

    /// A writer for rmcp whose whole lines go to this sink.
    pub fn writer(&self) -> SinkWriter {
        SinkWriter {
            sink: self.clone(),
            partial: Vec::new(),
        }
    }
}

/// What a write that does not wait managed.
enum Written {
    /// The whole line, flushed.
    All,
    /// The whole line, left in a writer that buffers and could not flush
    /// without waiting.
    Unflushed,
    /// The first so many bytes.
    Part(usize),
}

/// As much of `line` as `out` takes without waiting.
fn write_now(out: &mut Out, line: &[u8]) -> io::Result<Written> {
    let mut cx = Context::from_waker(Waker::noop());
    let mut written = 0;
    while written < line.len() {
        match out.as_mut().poll_write(&mut cx, &line[written..]) {
            Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
            Poll::Ready(Ok(n)) => written += n,
            Poll::Ready(Err(error)) => return Err(error),
            Poll::Pending => return Ok(Written::Part(written)),
        }
    }
    match out.as_mut().poll_flush(&mut cx) {
        Poll::Ready(Ok(())) => Ok(Written::All),
        Poll::Ready(Err(error)) => Err(error),
        Poll::Pending => Ok(Written::Unflushed),
    }
}

/// The writer task: what is queued, in order, then the peer closed once
/// the sink is.
async fn write_queued(shared: Arc<Shared>) {
    loop {
        let taken = {
            let mut state = shared.lock();
            if state.queue.is_empty() {
                None
            } else {
                state.out.take().map(|out| (out, std::mem::take(&mut state.queue)))
            }
        };
        let Some((mut out, lines)) = taken else {
            if shared.closed.is_cancelled() {
                break;
            }
            tokio::select! {
                biased;
                () = shared.queued.notified() => {}
                () = shared.closed.cancelled() => {}
            }
            continue;
        };
        let mut failed = false;
        for line in lines {
            if out.write_all(&line).await.is_err() {
                failed = true;
                break;
            }
            let mut state = shared.lock();
            state.pending = state.pending.saturating_sub(line.len());
            if state.pending <= MOST_PENDING / 2 {
                state.wake_waiting();
            }
        }
        failed = failed || out.flush().await.is_err();
        shared.lock().out = Some(out);
        if failed {
            shared.closed.cancel();
            break;
        }
    }
    shared.closed.cancel();
    // Closed: nothing waits for room any more (what is sent is dropped).
    let out = {
        let mut state = shared.lock();
        state.wake_waiting();
        state.out.take()
    };
    if let Some(mut out) = out {
        let _ = out.shutdown().await;
    }
}

/// rmcp's writer: bytes gathered into lines, each line sent whole.
pub struct SinkWriter {
    sink: LineSink,
    partial: Vec<u8>,
}

impl AsyncWrite for SinkWriter {
    fn poll_write(mut self: Pin<&mut Self>, _cx: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            if this.sink.shared().closed.is_cancelled() {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
            this.partial.extend_from_slice(&rest[..end]);
            this.sink.send(std::mem::take(&mut this.partial));
            rest = &rest[end + 1..];
        }
        this.partial.extend_from_slice(rest);
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::*;

    #[tokio::test]
    async fn lines_from_both_writers_reach_the_client_whole_and_in_order() {
        let (client, mut read) = tokio::io::duplex(1 << 16);
        let sink = LineSink::start(client);
        let mut rmcp = sink.writer();
        rmcp.write_all(b"{\"from\": \"rm").await.unwrap();
        sink.send(b"{\"from\": \"gateway\"}".to_vec());
        rmcp.write_all(b"cp\"}\n{\"second\": true}\n").await.unwrap();
        drop((rmcp, sink));
        let mut out = String::new();
        read.read_to_string(&mut out).await.unwrap();
        assert_eq!(
            out,
            "{\"from\": \"gateway\"}\n{\"from\": \"rmcp\"}\n{\"second\": true}\n"
        );
    }

    #[tokio::test]
    async fn a_line_written_at_once_needs_no_writer_task_turn() {
        let (client, mut read) = tokio::io::duplex(1 << 16);
        let sink = LineSink::start(client);
        sink.send(b"now".to_vec());
        // Read without yielding to the writer task first: already there.
        let mut got = [0; 4];
        let n = futures::FutureExt::now_or_never(read.read(&mut got)).unwrap().unwrap();
        assert_eq!(&got[..n], b"now\n");
    }

    #[tokio::test]
    async fn a_peer_that_cannot_take_a_line_gets_it_and_every_later_one_in_order() {
        // Room for 8 bytes at a time: every line but the shortest waits.
        let (client, mut read) = tokio::io::duplex(8);
        let sink = LineSink::start(client);
        let lines: Vec<String> = (0..50)
            .map(|i| format!("{{\"line\": {i}, \"pad\": \"{}\"}}", "x".repeat(i % 7)))
            .collect();
        for line in &lines {
            sink.send(line.clone().into_bytes());
        }
        sink.close();
        let mut out = String::new();
        read.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, lines.iter().map(|l| format!("{l}\n")).collect::<String>());
    }

    #[tokio::test]
    async fn a_writer_that_buffers_is_flushed() {
        let (client, mut read) = tokio::io::duplex(1 << 16);
        // A buffer larger than the line: it stays there until flushed.
        let sink = LineSink::start(tokio::io::BufWriter::with_capacity(1024, client));
        sink.send(b"buffered".to_vec());
        let mut got = [0; 9];
        tokio::time::timeout(std::time::Duration::from_secs(5), read.read_exact(&mut got))
            .await
            .expect("flushed")
            .unwrap();
        assert_eq!(&got, b"buffered\n");
    }

    #[tokio::test]
    async fn a_peer_gone_closes_the_sink_and_rmcp_hears_a_broken_pipe() {
        let (client, read) = tokio::io::duplex(64);
        drop(read);
        let closed = CancellationToken::new();
        let sink = LineSink::start_until(client, closed.clone());
        sink.send(b"lost".to_vec());
        tokio::time::timeout(std::time::Duration::from_secs(5), closed.cancelled())
            .await
            .expect("closed");
        let mut rmcp = sink.writer();
        assert!(rmcp.write_all(b"{}\n").await.is_err());
    }

    #[tokio::test]
    async fn a_sink_whose_peer_stops_reading_has_no_room_until_it_reads_again() {
        let (client, mut read) = tokio::io::duplex(1024);
        let sink = LineSink::start(client);
        let room = || std::future::poll_fn(|cx| sink.poll_room(cx));
        assert!(futures::poll!(std::pin::pin!(room())).is_ready());
        let line = vec![b'x'; 1024 * 1024 - 1];
        for _ in 0..=MOST_PENDING / (1024 * 1024) {
            sink.send(line.clone());
        }
        assert!(futures::poll!(std::pin::pin!(room())).is_pending(), "over the limit");
        let waiting = tokio::spawn({
            let sink = sink.clone();
            async move { std::future::poll_fn(|cx| sink.poll_room(cx)).await }
        });
        // Half taken: room again, and whoever waited is woken.
        let mut taken = vec![0; MOST_PENDING / 2 + 2 * 1024 * 1024];
        read.read_exact(&mut taken).await.unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(10), waiting)
            .await
            .expect("woken once there was room")
            .unwrap();
        // A closed sink has room: nothing is kept for it.
        drop(read);
        sink.send(b"after".to_vec());
        let closed = sink.clone();
        tokio::time::timeout(std::time::Duration::from_secs(10), closed.shared().closed.cancelled())
            .await
            .unwrap();
        assert!(futures::poll!(std::pin::pin!(room())).is_ready());
    }
}
