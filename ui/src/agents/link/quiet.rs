//! A Unix stream the reactor watches for reading only.
//!
//! tokio registers a `UnixStream` for both kinds of readiness, and a Unix
//! socket says it is writable again each time its peer reads: every frame
//! the other side took woke this side for nothing. On the gateway's path
//! that was two of its six wake-ups a call, and as many of the console's
//! (issue 36, strace: an `epoll_wait` that returns only `EPOLLOUT` after
//! each frame sent; perf: a context switch costs ~18 µs of CPU on this
//! VM). Here the read half is registered for reading alone; a write goes
//! straight to the socket, and only a write that finds it full registers
//! a second descriptor for writability, for as long as it waits.

use std::io::{self, Read as _, Write as _};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// What the peer sends: woken only when there is something to read.
#[derive(Debug)]
pub struct ReadHalf(AsyncFd<UnixStream>);

/// What goes to the peer: written at once; waits (registered) only when
/// the socket's buffer is full.
#[derive(Debug)]
pub struct WriteHalf {
    stream: UnixStream,
    full: Option<AsyncFd<UnixStream>>,
}

/// Registers `stream` with the reactor for `interest` only.
///
/// `AsyncFd::with_interest` is deprecated for `register_with_interest`,
/// which is `unsafe` (this workspace forbids it): its contract is that the
/// descriptor stays open, and the same, for as long as it is registered
/// (tokio#8587: a type whose `as_raw_fd` could change or close under it).
/// A std `UnixStream` owns its descriptor for its whole life, so the
/// contract holds by the type, and the safe constructor is sound here.
#[allow(deprecated)]
fn register(stream: UnixStream, interest: Interest) -> io::Result<AsyncFd<UnixStream>> {
    AsyncFd::with_interest(stream, interest)
}

/// Splits a connected stream. Needs the runtime's reactor.
///
/// # Errors
/// When the descriptor cannot be duplicated or registered.
pub fn split(stream: tokio::net::UnixStream) -> io::Result<(ReadHalf, WriteHalf)> {
    let stream = stream.into_std()?;
    stream.set_nonblocking(true)?;
    let write = stream.try_clone()?;
    Ok((
        ReadHalf(register(stream, Interest::READABLE)?),
        WriteHalf {
            stream: write,
            full: None,
        },
    ))
}

impl AsyncRead for ReadHalf {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.0.poll_read_ready(cx))?;
            match ready.try_io(|stream| stream.get_ref().read(buf.initialize_unfilled())) {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                // Not readable after all: readiness was cleared, wait again.
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncWrite for WriteHalf {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            match (&this.stream).write(buf) {
                Ok(n) => {
                    // Room again: stop hearing about it.
                    this.full = None;
                    return Poll::Ready(Ok(n));
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) if error.kind() != io::ErrorKind::WouldBlock => return Poll::Ready(Err(error)),
                Err(_) => {}
            }
            // Registering reports the socket's state as it is now, so room
            // made between the write and this is not missed.
            if this.full.is_none() {
                this.full = Some(register(this.stream.try_clone()?, Interest::WRITABLE)?);
            }
            if let Some(full) = &this.full {
                ready!(full.poll_write_ready(cx))?.clear_ready();
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(match self.stream.shutdown(Shutdown::Write) {
            Err(error) if error.kind() == io::ErrorKind::NotConnected => Ok(()),
            other => other,
        })
    }
}

/// As tokio's write half does: the peer reads the end of the stream as
/// soon as nothing more will be written, even while this side still reads.
impl Drop for WriteHalf {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// Frames both ways, one far larger than the socket's buffer (so a
    /// write waits for room), and the peer's end seen as the end.
    #[tokio::test]
    async fn both_ways_including_a_write_that_waits_for_room() {
        let (a, b) = tokio::net::UnixStream::pair().unwrap_or_else(|e| panic!("{e}"));
        let ((mut a_read, mut a_write), (mut b_read, mut b_write)) = (
            split(a).unwrap_or_else(|e| panic!("{e}")),
            split(b).unwrap_or_else(|e| panic!("{e}")),
        );
        let big: Vec<u8> = (0..4 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
        let sent = big.clone();
        let writer = tokio::spawn(async move {
            a_write.write_all(&sent).await.unwrap_or_else(|e| panic!("{e}"));
            a_write.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
        });
        let mut got = Vec::new();
        b_read.read_to_end(&mut got).await.unwrap_or_else(|e| panic!("{e}"));
        writer.await.unwrap_or_else(|e| panic!("{e}"));
        assert!(got == big, "every byte, in order ({} of {})", got.len(), big.len());
        b_write.write_all(b"pong\n").await.unwrap_or_else(|e| panic!("{e}"));
        let mut line = [0u8; 5];
        a_read.read_exact(&mut line).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&line, b"pong\n");
    }
}
