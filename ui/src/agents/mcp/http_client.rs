//! An upstream reached by URL: `rmcp`'s Streamable HTTP client transport on
//! reqwest, TLS by rustls (ring) with the system's root certificates.

use std::collections::{BTreeMap, HashMap};

use anyhow::Context as _;
use http::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

/// The transport to an upstream's Streamable HTTP endpoint, `headers` sent
/// with every request (marked sensitive, so they are never logged).
///
/// # Errors
/// A header that is not one, or no HTTP client.
pub fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> anyhow::Result<StreamableHttpClientTransport<reqwest::Client>> {
    // reqwest is built without a default TLS provider (ring is much cheaper
    // to build than aws-lc); installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        // As rmcp's own client: reused idle connections stall on delayed ACKs.
        .pool_max_idle_per_host(0)
        // A redirect would replay the headers somewhere else: configure the final URL.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("building the HTTP client")?;
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).with_context(|| format!("header name {name:?}"))?;
        let mut value = HeaderValue::from_str(value).with_context(|| format!("the value of header {name}"))?;
        value.set_sensitive(true);
        custom.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}
