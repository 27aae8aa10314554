//! Where the page listens: loopback over plain HTTP by default; any other
//! address over TLS (`--web-tls-cert`/`--web-tls-key`, rustls) or, said
//! out loud, `--web-insecure`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::sync::CancellationToken;

use super::Web;
use crate::cli::WebArgs;

/// How long a client has to finish its TLS handshake.
const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(10);

/// The page's socket, bound, and the URL phones open.
pub struct Bound {
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    /// `http(s)://host:port`: links and the same-origin check use it.
    pub base: String,
    /// Over TLS (here, or in front of it per `--web-url https://…`).
    pub secure: bool,
    /// Plain HTTP on an address other than loopback (`--web-insecure`).
    pub insecure: bool,
}

impl Bound {
    /// What the header says about the page.
    pub fn header_text(&self) -> String {
        if self.insecure {
            format!("web {} INSECURE (plain HTTP)", self.base)
        } else {
            format!("web {}", self.base)
        }
    }
}

/// Binds `--web`, refusing a non-loopback address without TLS or
/// `--web-insecure`.
pub async fn bind(args: &WebArgs) -> anyhow::Result<Option<Bound>> {
    let Some(addr) = args.web else {
        return Ok(None);
    };
    let tls = match (&args.web_tls_cert, &args.web_tls_key) {
        (Some(cert), Some(key)) => Some(acceptor(cert, key)?),
        _ => None,
    };
    let loopback = addr.ip().is_loopback();
    if !loopback && tls.is_none() && !args.web_insecure {
        anyhow::bail!(
            "--web {addr} is not a loopback address: give --web-tls-cert and --web-tls-key, or --web-insecure \
             (then anyone on the network path reads the page and its device cookie)"
        );
    }
    if addr.ip().is_unspecified() && args.web_url.is_none() {
        anyhow::bail!("--web {addr} listens on every address: give --web-url with the URL phones open");
    }
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on --web {addr}"))?;
    let bound: SocketAddr = listener.local_addr()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let base = match &args.web_url {
        Some(url) => {
            if url.path() != "/" || url.query().is_some() || !matches!(url.scheme(), "http" | "https") {
                anyhow::bail!(
                    "--web-url {url}: give the page's origin only (http(s)://host[:port]), served at its root"
                );
            }
            url.origin().ascii_serialization()
        }
        None => format!("{scheme}://{bound}"),
    };
    let secure = tls.is_some() || base.starts_with("https://");
    Ok(Some(Bound {
        listener,
        tls,
        base,
        secure,
        insecure: !loopback && scheme == "http" && args.web_insecure,
    }))
}

fn acceptor(cert: &std::path::Path, key: &std::path::Path) -> anyhow::Result<TlsAcceptor> {
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| anyhow::anyhow!("--web-tls-cert {}: {e}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| anyhow::anyhow!("--web-tls-key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("--web-tls-cert and --web-tls-key do not make a certificate and its key")?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Serves the page until `stop`.
pub fn serve(bound: Bound, web: Arc<Web>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
    let router = super::routes::router(web);
    tokio::spawn(async move {
        let shutdown = stop.clone().cancelled_owned();
        let served = match bound.tls {
            None => {
                axum::serve(bound.listener, router)
                    .with_graceful_shutdown(shutdown)
                    .await
            }
            Some(tls) => {
                let listener = TlsListener::spawn(bound.listener, tls, stop);
                axum::serve(listener, router).with_graceful_shutdown(shutdown).await
            }
        };
        if let Err(error) = served {
            tracing::warn!(%error, "the web page stopped");
        }
    })
}

/// Connections whose TLS handshake is done, handshakes run side by side
/// (a slow client holds up nobody).
struct TlsListener {
    ready: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    fn spawn(listener: TcpListener, tls: TlsAcceptor, stop: CancellationToken) -> Self {
        let local = listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
        let (sender, ready) = tokio::sync::mpsc::channel(16);
        tokio::spawn(async move {
            loop {
                let (stream, peer) = tokio::select! {
                    () = stop.cancelled() => break,
                    accepted = listener.accept() => match accepted {
                        Ok(accepted) => accepted,
                        Err(error) => {
                            tracing::warn!(%error, "accepting a web connection failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    },
                };
                let (tls, sender) = (tls.clone(), sender.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_DEADLINE, tls.accept(stream)).await {
                        Ok(Ok(stream)) => {
                            let _ = sender.send((stream, peer)).await;
                        }
                        Ok(Err(error)) => tracing::info!(%error, %peer, "a TLS handshake failed"),
                        Err(_) => tracing::info!(%peer, "a TLS handshake took too long"),
                    }
                });
            }
        });
        Self { ready, local }
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(ready) => ready,
            // The acceptor stopped with the serve: no more connections.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

/// The page bound and its state made, waiting for the session's hub and
/// the door whose code pairing asks for.
pub struct Pending {
    pub bound: Bound,
    pub web: Arc<Web>,
    control: tokio::net::UnixListener,
    pub control_path: std::path::PathBuf,
}

impl Pending {
    /// Binds `--web` and the `tether web` socket beside `socket`; `None`
    /// without `--web`.
    pub async fn new(
        args: &WebArgs,
        socket: &std::path::Path,
        journal: Option<Arc<crate::session::journal::JournalWriter>>,
        events: crate::session::events::AppEventSender,
    ) -> anyhow::Result<Option<Self>> {
        let Some(bound) = bind(args).await? else {
            return Ok(None);
        };
        let web = Web::new(bound.base.clone(), bound.secure, journal, events)?;
        let control_path = super::control::control_path(socket);
        let control = crate::agents::link::socket::bind(&control_path).await?;
        Ok(Some(Self {
            bound,
            web,
            control,
            control_path,
        }))
    }

    /// Follows the session's requests and serves the page and `tether web`
    /// until `stop`.
    pub fn open(
        self,
        hub: &crate::session::screens::ScreenHub,
        door: &Arc<crate::tui::remote::AttachDoor>,
        stop: &CancellationToken,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        tracing::info!(base = %self.bound.base, "the web page is open");
        vec![
            self.web.follow(hub),
            tokio::spawn(super::control::serve(
                self.control,
                Arc::clone(&self.web),
                Arc::clone(door),
                stop.clone(),
            )),
            serve(self.bound, self.web, stop.clone()),
        ]
    }
}
