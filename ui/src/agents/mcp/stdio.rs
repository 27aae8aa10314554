//! The client's stdio, read and written on the gateway's own thread.
//!
//! `tokio::io::stdin()`/`stdout()` run every read and write on tokio's
//! blocking pool: a message in is a read on one thread that wakes the
//! runtime, a message out a hand-over to another thread that writes it. On
//! the gateway's path those are four thread wake-ups a call that a client
//! talking to the server directly does not pay (issue 36, measured with
//! strace: two of the proxy's ten wake-ups a call). Clients start servers
//! with pipes (Codex, the Python SDK: rmcp's [`stdio_pipes`] reopens those
//! non-blocking on their own file descriptions) or with a socket pair
//! (Node's `child_process`, so Claude Code): a socket is driven by the
//! reactor as a `UnixStream`. Anything else (a terminal, a file) keeps the
//! blocking handles.
//!
//! [`stdio_pipes`]: rmcp::transport::io::stdio_pipes

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileTypeExt as _;

use tokio::io::{AsyncRead, AsyncWrite};

/// The client's end of the gateway: what it reads, what it writes.
pub type Stdio = (Box<dyn AsyncRead + Send + Unpin>, Box<dyn AsyncWrite + Send + Unpin>);

/// The client's stdio for the gateway's MCP server. Needs the runtime.
pub fn client() -> Stdio {
    if let Some((read, write)) = sockets() {
        tracing::debug!("the client's stdio is a socket: read and written on the reactor");
        return (Box::new(read), Box::new(write));
    }
    let (read, write) = rmcp::transport::io::stdio_pipes();
    (Box::new(read), Box::new(write))
}

/// A client's stdio handed over by its proxy (`host.rs`): sockets driven
/// by the reactor as above, pipes as tokio's pipe ends (both set
/// non-blocking: the proxy that shares them reads and writes neither).
///
/// # Errors
/// When a descriptor is neither a socket nor the pipe end it should be.
pub fn of(input: OwnedFd, output: OwnedFd) -> std::io::Result<Stdio> {
    let read: Box<dyn AsyncRead + Send + Unpin> = match socket_of(input.as_fd()) {
        Some(socket) => Box::new(stream(socket)?),
        None => Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(input)?),
    };
    let write: Box<dyn AsyncWrite + Send + Unpin> = match socket_of(output.as_fd()) {
        Some(socket) => Box::new(stream(socket)?),
        None => Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(output)?),
    };
    Ok((read, write))
}

fn stream(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// A descriptor of its own for `fd`, when `fd` is a socket.
fn socket_of(fd: BorrowedFd<'_>) -> Option<OwnedFd> {
    let owned = fd.try_clone_to_owned().ok()?;
    let file = std::fs::File::from(owned);
    file.metadata().ok()?.file_type().is_socket().then(|| file.into())
}

/// Standard input and output when both are stream sockets, driven by the
/// reactor. A socket cannot be reopened on a file description of its own,
/// so `O_NONBLOCK` is set on the one the client gave: the gateway is its
/// only reader and writer (its upstream servers get pipes of their own).
fn sockets() -> Option<(tokio::net::UnixStream, tokio::net::UnixStream)> {
    let input = socket_of(std::io::stdin().as_fd())?;
    let output = socket_of(std::io::stdout().as_fd())?;
    Some((stream(input).ok()?, stream(output).ok()?))
}
