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

use std::io::{self, Write as _};
use std::net::Shutdown;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
    recvmsg, sendmsg,
};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// What the peer sends: woken only when there is something to read. Read
/// with `recvmsg`, so descriptors the peer sends along (`SCM_RIGHTS`, as a
/// gateway hands the console its stdio) are kept for [`ReadHalf::take_fds`]
/// instead of closed by the kernel.
#[derive(Debug)]
pub struct ReadHalf {
    stream: AsyncFd<UnixStream>,
    fds: Vec<OwnedFd>,
}

/// The most descriptors one read takes (more are closed by the kernel).
pub const MAX_FDS: usize = 32;

impl ReadHalf {
    /// The descriptors received so far, in the order sent.
    pub fn take_fds(&mut self) -> Vec<OwnedFd> {
        std::mem::take(&mut self.fds)
    }
}

/// Writes all of `bytes` to a blocking `stream`, `fds` sent along with the
/// first of them (`SCM_RIGHTS`).
///
/// # Errors
/// When the socket fails.
pub fn send_with_fds(stream: &UnixStream, bytes: &[u8], fds: &[std::os::fd::BorrowedFd<'_>]) -> io::Result<()> {
    let mut space = [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if fds.len() > MAX_FDS || !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::other(format!(
            "at most {MAX_FDS} descriptors go in one message"
        )));
    }
    let sent = sendmsg(stream, &[io::IoSlice::new(bytes)], &mut control, SendFlags::empty())?;
    let mut rest = bytes.get(sent..).unwrap_or_default();
    while !rest.is_empty() {
        let n = (&*stream).write(rest)?;
        rest = rest.get(n..).unwrap_or_default();
    }
    Ok(())
}

/// One `recvmsg`: the bytes into `buf`, any descriptors onto `fds`.
fn receive(stream: &UnixStream, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> io::Result<usize> {
    let mut space = [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let received = recvmsg(
        stream,
        &mut [io::IoSliceMut::new(buf)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = message {
            fds.extend(received);
        }
    }
    Ok(received.bytes)
}

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
        ReadHalf {
            stream: register(stream, Interest::READABLE)?,
            fds: Vec::new(),
        },
        WriteHalf {
            stream: write,
            full: None,
        },
    ))
}

impl AsyncRead for ReadHalf {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let this = &mut *self;
            let mut ready = ready!(this.stream.poll_read_ready(cx))?;
            let fds = &mut this.fds;
            match ready.try_io(|stream| receive(stream.get_ref(), buf.initialize_unfilled(), fds)) {
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
    use std::os::fd::AsFd as _;

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

    /// Descriptors sent along with a line are received with it, and work:
    /// what is written to the received pipe comes out of the sender's end.
    #[tokio::test]
    async fn descriptors_sent_with_a_line_are_kept_for_the_reader() {
        let (a, b) = UnixStream::pair().unwrap_or_else(|e| panic!("{e}"));
        let (pipe_read, pipe_write) = rustix::pipe::pipe().unwrap_or_else(|e| panic!("{e}"));
        send_with_fds(&a, b"take this\n", &[pipe_write.as_fd()]).unwrap_or_else(|e| panic!("{e}"));
        drop(pipe_write);
        b.set_nonblocking(true).unwrap_or_else(|e| panic!("{e}"));
        let (mut read, _write) = split(tokio::net::UnixStream::from_std(b).unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut line = [0u8; 10];
        read.read_exact(&mut line).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&line, b"take this\n");
        let fds = read.take_fds();
        assert_eq!(fds.len(), 1, "the pipe's write end came with the line");
        let mut pipe = std::fs::File::from(fds.into_iter().next().unwrap_or_else(|| panic!("no fd")));
        pipe.write_all(b"through").unwrap_or_else(|e| panic!("{e}"));
        drop(pipe);
        let mut got = String::new();
        std::io::Read::read_to_string(&mut std::fs::File::from(pipe_read), &mut got).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, "through");
        assert!(read.take_fds().is_empty(), "taken once");
    }
}
