//! The MCP gateway (`tether mcp proxy`, `tether mcp serve`): an MCP server
//! over stdio to its client and an MCP client to each real server, on
//! `rmcp`. It joins the running console over the agent link as one agent
//! session; each upstream server is a scope under it, each of its tools
//! registered with its real input schema. Every `tools/call` runs as a batch through the console's
//! pipeline (policy, guards, the human, the journal) and the body forwards
//! it upstream. Nothing reaches the upstream that nobody allowed: a console
//! that is down, a held tool or any pipeline failure is a tool result with
//! `isError` and the reason.

mod console;
mod embedded;
mod gateway;
mod handler;
mod held;
pub mod host;
mod http;
mod http_client;
pub mod install;
mod lines;
mod owners;
pub mod pins;
mod stdio;
mod upstream;

pub use console::NOT_RUNNING;
pub use gateway::{Gateway, GatewayOptions, Naming, ServerSpec, failure, to_result};
pub use http::{TOKEN_ENV, loopback_only, serve as serve_http};

use rmcp::ServiceExt as _;

/// Serves the client on stdio until it goes away, or until the gateway is
/// told to stop (SIGTERM: how clients end their servers), when it
/// says so in its log and returns, so the log is flushed before it exits.
/// When the console runs and hosts gateways, it serves the client instead
/// (`host.rs`), and this process waits for the session to end.
///
/// # Errors
/// When the client's stdio cannot be served.
pub async fn run(options: GatewayOptions) -> anyhow::Result<()> {
    let stop = tokio_util::sync::CancellationToken::new();
    let told = stop.clone();
    // SIGTERM only: clients start servers with SIGINT ignored and send it to
    // their whole process group (Claude Code does), which must not stop us.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::spawn(async move {
        term.recv().await;
        told.cancel();
    });
    if let Some(handed) = host::offer(&options).await {
        handed.wait(stop).await;
        return Ok(());
    }
    serve_client(Gateway::new(options), stdio::client(), stop, "SIGTERM").await
}

/// Serves one client on `stdio` until it goes away or `stop` fires (`why`
/// says what fires it, for the log).
///
/// # Errors
/// When the client did not initialize, or its session failed.
pub(crate) async fn serve_client(
    gateway: Gateway,
    (read, write): stdio::Stdio,
    stop: tokio_util::sync::CancellationToken,
    why: &str,
) -> anyhow::Result<()> {
    // The client's `tools/call`s are taken off its stdio by the gateway
    // (`gateway/fast.rs`); everything else is rmcp's.
    let sink = lines::LineSink::start(write);
    let _ = gateway.0.client_sink.set(sink.clone());
    let (taker, answers) = (gateway.clone(), sink.clone());
    let read = lines::Tap::new(read, Box::new(move |line| taker.take_line(line, &answers))).detached();
    let serving = gateway.serve((read, sink.writer()));
    let server = tokio::select! {
        server = serving => server.map_err(|e| anyhow::anyhow!("the MCP client did not initialize: {e}"))?,
        () = stop.cancelled() => {
            tracing::info!("told to stop ({why}) before the client initialized; exiting");
            return Ok(());
        }
    };
    let cancel = server.cancellation_token();
    tokio::select! {
        reason = server.waiting() => tracing::info!(reason = ?reason?, "the MCP client went away"),
        () = stop.cancelled() => {
            tracing::info!("told to stop ({why}); exiting");
            cancel.cancel();
        }
    }
    Ok(())
}
