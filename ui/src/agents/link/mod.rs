//! The agent link: agents connect over a local socket, each gets its own
//! scope under the console's root, registers tools whose bodies it runs
//! itself, and executes batches through the console's pipeline. Only the
//! human at the console answers approvals: no method here can.

mod batch;
pub mod client;
mod conn;
mod connection;
mod hook_session;
mod in_flight;
pub mod protocol;
pub mod quiet;
pub mod socket;
mod state;
mod wire;

pub use state::{HostHandler, Link};

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tether_tools::ToolExecutionOutcome;
use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;

use crate::session::events::AppEvent;

/// How long quitting waits for connections to write what they owe.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(4);

/// Accepts agents until `stop` fires. Peers of another user are refused.
/// Then it waits (up to [`DRAIN`]) for every connection to finish: `stop`
/// cancels their batches, and each batch still writes its outcomes (a call
/// the human never answered ends `UNAVAILABLE`) before its socket closes —
/// returning at once would drop the runtime and the agent would read EOF.
pub async fn serve(link: Arc<Link>, listener: UnixListener, stop: CancellationToken) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "accepting an agent failed");
                continue;
            }
        };
        match stream.peer_cred() {
            Ok(cred) if socket::peer_allowed(cred.uid(), link.our_uid) => {}
            Ok(cred) => {
                tracing::warn!(peer_uid = cred.uid(), "refused an agent of another user");
                link.send(AppEvent::Note(format!("refused a connection from uid {}", cred.uid())));
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, "could not read the peer's credentials; refused");
                continue;
            }
        }
        let link = Arc::clone(&link);
        let stop = stop.child_token();
        connections.spawn(async move { connection::handle(link, stream, stop).await });
    }
    drop(listener);
    let drained = tokio::time::timeout(DRAIN, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(
            left = connections.len(),
            "connections still open after quitting; dropped"
        );
    }
}

/// Runs one tool body for the console: `(call_id, name, arguments, edited,
/// cancel)`; `edited` when a human edited the arguments before approving.
pub type Invoke = Arc<
    dyn Fn(String, String, Value, bool, CancellationToken) -> BoxFuture<'static, Result<Value, String>> + Send + Sync,
>;

/// Told a call's outcome as soon as the journal holds it, before the
/// batch's own bookkeeping (decision trails, the screen's events, the
/// batch's release): what lets a hosted gateway answer its client first.
pub type EarlyOutcome<'a> = &'a (dyn Fn(&ToolExecutionOutcome) + Sync);

/// An agent connection to `link` from this process (a gateway the console
/// hosts): the far end of an in-memory stream served as a socket's would
/// be, on the current runtime, until `stop` or until the stream is dropped.
/// Its tool bodies are run by calling `invoke`, and [`InProcess::execute`]
/// runs a batch without its frames written and read back.
pub fn connect_in_process(
    link: &Arc<Link>,
    stop: CancellationToken,
    invoke: Invoke,
) -> (tokio::io::DuplexStream, InProcess) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    let conn = connection::new_conn(stop, Some(invoke));
    tokio::spawn(connection::serve_conn(Arc::clone(link), Arc::clone(&conn), read, write));
    let direct = InProcess {
        link: Arc::clone(link),
        conn,
    };
    (ours, direct)
}

/// The in-process side of [`connect_in_process`].
pub struct InProcess {
    link: Arc<Link>,
    conn: Arc<conn::Conn>,
}

impl InProcess {
    /// `batch/execute` on the connection, typed both ways (no frame built
    /// or parsed): each call's outcome and what decided it, in declared
    /// order. `early` is told each outcome once the journal holds it.
    ///
    /// # Errors
    /// The message the error frame would carry.
    pub async fn execute(
        &self,
        batch: protocol::ExecuteBatch,
        early: Option<EarlyOutcome<'_>>,
    ) -> Result<Vec<(ToolExecutionOutcome, String)>, String> {
        let (_, result, decided) = batch::run_batch(&self.link, &self.conn, batch, early)
            .await
            .map_err(|(_, message)| message)?;
        Ok(result.outcomes.into_iter().zip(decided).collect())
    }
}

/// Runs [`serve`] on a thread of its own with a single-threaded runtime, and
/// returns at once. Every connection, batch and call-back of the link then
/// lives on one thread: a remote call's hops between reader, batch and
/// writer are plain task switches, not cross-thread wake-ups, which is most
/// of a round trip's cost on a small machine.
///
/// # Errors
/// When the listener cannot be moved to the new runtime or the thread
/// cannot start.
pub fn serve_on_own_thread(
    link: Arc<Link>,
    listener: UnixListener,
    stop: CancellationToken,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let listener = listener.into_std()?;
    let handle = std::thread::Builder::new().name("tether-link".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(error) => {
                tracing::error!(%error, "the agent link's runtime did not start");
                return;
            }
        };
        runtime.block_on(async move {
            match UnixListener::from_std(listener) {
                Ok(listener) => serve(link, listener, stop).await,
                Err(error) => tracing::error!(%error, "the agent link's socket could not be used"),
            }
        });
    })?;
    Ok(handle)
}
