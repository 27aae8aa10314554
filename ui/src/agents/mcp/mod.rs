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
mod http;
mod http_client;
pub mod install;
mod ordered;
mod owners;
pub mod pins;
mod tools;
mod upstream;

pub use console::NOT_RUNNING;
pub use gateway::{Gateway, GatewayOptions, Naming, ServerSpec, failure, to_result};
pub use http::{TOKEN_ENV, loopback_only, serve as serve_http};

use rmcp::ServiceExt as _;

/// Serves the client on stdio until it goes away.
///
/// # Errors
/// When the client's stdio cannot be served.
pub async fn run(options: GatewayOptions) -> anyhow::Result<()> {
    let server = Gateway::new(options)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("the MCP client did not initialize: {e}"))?;
    let reason = server.waiting().await?;
    tracing::info!(?reason, "the MCP client went away");
    Ok(())
}
