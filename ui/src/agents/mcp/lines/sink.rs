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
        state.queue.push_back(line);
        drop(state);
        self.shared().queued.notify_one();
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
        }
        failed = failed || out.flush().await.is_err();
        shared.lock().out = Some(out);
        if failed {
            shared.closed.cancel();
            break;
        }
    }
    shared.closed.cancel();
    let out = shared.lock().out.take();
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
}
