//! `tether mcp proxy|serve --http ADDR`: the gateway as a Streamable HTTP
//! server (`rmcp`'s transport) on a loopback address behind a bearer token,
//! each client session its own gateway, so its own agent session in the
//! console. Upstreams reached by URL are in `http_client.rs`.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::gateway::{Gateway, GatewayOptions};
use crate::session::signals;

/// The path the gateway serves MCP on.
pub const PATH: &str = "/mcp";

/// The environment variable that fixes the bearer token (so a client's
/// configuration survives a restart); unset, a random one is made.
pub const TOKEN_ENV: &str = "TETHER_MCP_TOKEN";

/// Why a non-loopback address is refused.
pub fn loopback_only(addr: &SocketAddr) -> anyhow::Result<()> {
    anyhow::ensure!(
        addr.ip().is_loopback(),
        "refusing to serve MCP on {addr}: the gateway listens on a loopback address only (127.0.0.1:PORT or [::1]:PORT), \
         so only programs on this machine can reach it"
    );
    Ok(())
}

/// 32 bytes from the kernel's CSPRNG, as hex.
fn random_token() -> anyhow::Result<String> {
    use std::io::Read as _;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for the bearer token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares without stopping at the first difference, so the time taken
/// says nothing about how much of a guess was right.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn require_token(State(expected): State<Arc<str>>, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|token| same(token.trim().as_bytes(), expected.as_bytes())) {
        return next.run(request).await;
    }
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer realm=\"tether\"")],
        "missing or wrong bearer token: send `Authorization: Bearer <token>` with the token \
         `tether mcp serve --http` printed when it started\n",
    )
        .into_response()
}

/// Serves MCP clients over Streamable HTTP at `addr` (loopback only) until
/// SIGINT or SIGTERM; the URL and the token are written to `announce` once.
///
/// # Errors
/// A non-loopback address, a port that cannot be bound, no randomness.
pub async fn serve(options: GatewayOptions, addr: SocketAddr, announce: &mut dyn Write) -> anyhow::Result<()> {
    loopback_only(&addr)?;
    let (token, chosen) = match std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty()) {
        Some(token) => (token, false),
        None => (random_token()?, true),
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on {addr}"))?;
    let bound = listener.local_addr()?;
    let stop = CancellationToken::new();
    // The default allowed hosts are the loopback names: a DNS-rebinding
    // page cannot reach the gateway through a name of its own.
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(Gateway::new(options.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let expected: Arc<str> = Arc::from(token.as_str());
    let router = axum::Router::new()
        .route_service(PATH, service)
        .layer(axum::middleware::from_fn_with_state(expected, require_token));
    // Listening for a stop before the URL is told: a client that ends the
    // gateway as soon as it has read it is obeyed.
    let mut terminations = signals::Terminations::new();
    writeln!(
        announce,
        "tether mcp: serving MCP (Streamable HTTP) on this machine only"
    )?;
    writeln!(announce, "  url:   http://{bound}{PATH}")?;
    if chosen {
        writeln!(announce, "  token: {token}")?;
        writeln!(
            announce,
            "  (clients send `Authorization: Bearer <token>`; a new token is made at every start unless {TOKEN_ENV} is set)"
        )?;
    } else {
        writeln!(announce, "  token: from {TOKEN_ENV}")?;
    }
    announce.flush()?;
    tracing::info!(%bound, "serving MCP over Streamable HTTP");
    let shutdown = stop.clone();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            terminations.next().await;
            shutdown.cancel();
        })
        .await
        .context("serving HTTP")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        for ok in ["127.0.0.1:0", "[::1]:8080", "127.0.0.2:1"] {
            assert!(loopback_only(&ok.parse().unwrap()).is_ok(), "{ok}");
        }
        for refused in ["0.0.0.0:8080", "192.168.1.2:80", "[::]:80"] {
            let error = loopback_only(&refused.parse().unwrap()).unwrap_err().to_string();
            assert!(error.contains("loopback address only"), "{error}");
        }
    }

    #[test]
    fn tokens_are_random_and_compared_whole() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(same(a.as_bytes(), a.as_bytes()));
        assert!(!same(a.as_bytes(), b.as_bytes()));
        assert!(!same(a.as_bytes(), &a.as_bytes()[..63]));
    }
}
