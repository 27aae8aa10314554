//! How a running console or gateway is told to stop.

/// Resolves on SIGINT (Ctrl+C) or SIGTERM. If SIGTERM cannot be listened
/// for, Ctrl+C still stops it.
pub async fn terminated() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let term = async {
            match term.as_mut() {
                Some(term) => term.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// SIGHUP, each time it comes: a daemon reads its configuration again
/// instead of dying. Where it cannot be listened for, it never comes.
pub struct Hangups {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Hangups {
    /// Starts listening: from now on SIGHUP no longer ends the process.
    pub fn new() -> Self {
        Self {
            #[cfg(unix)]
            signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok(),
        }
    }

    /// Resolves at the next SIGHUP.
    pub async fn next(&mut self) {
        #[cfg(unix)]
        if let Some(signal) = self.signal.as_mut() {
            if signal.recv().await.is_some() {
                return;
            }
        }
        std::future::pending::<()>().await;
    }
}

impl Default for Hangups {
    fn default() -> Self {
        Self::new()
    }
}
