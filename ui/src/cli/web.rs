//! The arguments of `tether serve --web …` and of `tether web pair|devices|revoke`.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Where the answering page listens when `--web` names no address.
pub const DEFAULT_WEB_ADDR: &str = "127.0.0.1:8799";

/// `tether serve --web`: a paired phone or browser answers the approval queue.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct WebArgs {
    /// Serve the answering page for paired phones and browsers (docs/web.md)
    /// on ADDR (default 127.0.0.1:8799). An address other than loopback
    /// needs --web-tls-cert and --web-tls-key, or --web-insecure.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_WEB_ADDR)]
    pub web: Option<SocketAddr>,
    /// The URL phones open the page at, when it is not the address served
    /// (`tailscale serve`, a reverse proxy): links and the same-origin check use it.
    #[arg(long, value_name = "URL", requires = "web")]
    pub web_url: Option<url::Url>,
    /// The page's TLS certificate chain (PEM).
    #[arg(long, value_name = "FILE", requires_all = ["web", "web_tls_key"])]
    pub web_tls_cert: Option<PathBuf>,
    /// The page's TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires_all = ["web", "web_tls_cert"])]
    pub web_tls_key: Option<PathBuf>,
    /// Serve a non-loopback address over plain HTTP (anyone on the network
    /// path reads the page and the device cookie); the header says so.
    #[arg(long, requires = "web")]
    pub web_insecure: bool,
}

/// `tether web …`: pair, list and revoke the devices that answer.
#[derive(Debug, clap::Subcommand)]
pub enum WebAction {
    /// Print a one-time link (and its QR code) that pairs a phone or browser
    /// with the running console: single use, valid 2 minutes. Asks for the
    /// code the console's header (headless: stderr) shows.
    Pair {
        /// The console's socket (default: as `tether serve`).
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// The six-digit code the console shows (asked for when left out).
        #[arg(long, value_name = "N")]
        code: Option<String>,
    },
    /// List the paired devices.
    Devices {
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
    },
    /// Revoke a paired device at once: its next request is refused.
    Revoke {
        /// The device's name, as `tether web devices` lists it.
        name: String,
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
    },
}
