//! How a running console or gateway is told to stop.

/// SIGINT (Ctrl+C) or SIGTERM, listened for from the moment this is made
/// until it is dropped. Made once, before a daemon says it is listening, and
/// polled in every turn of its loop: a stop that comes while the loop is
/// busy elsewhere (writing a line, reloading) is kept and seen at the next
/// poll. A listener made anew in each turn would miss a signal that came
/// between two turns, and with the handler installed the signal no longer
/// ends the process either: the daemon would ignore it for good.
pub struct Terminations {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
}

impl Terminations {
    /// Starts listening: from now on SIGINT and SIGTERM are kept for
    /// [`Terminations::next`]. One that cannot be listened for keeps its
    /// default action (it ends the process).
    pub fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                term: signal(SignalKind::terminate()).ok(),
                interrupt: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// Resolves at the next SIGINT or SIGTERM (or at once for one that came
    /// since the last call).
    pub async fn next(&mut self) {
        #[cfg(unix)]
        {
            async fn one(signal: Option<&mut tokio::signal::unix::Signal>) {
                if let Some(signal) = signal
                    && signal.recv().await.is_some()
                {
                    return;
                }
                std::future::pending::<()>().await;
            }
            tokio::select! {
                () = one(self.term.as_mut()) => {}
                () = one(self.interrupt.as_mut()) => {}
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

impl Default for Terminations {
    fn default() -> Self {
        Self::new()
    }
}

/// Resolves on SIGINT (Ctrl+C) or SIGTERM; for a single wait (a loop keeps
/// one [`Terminations`] instead).
pub async fn terminated() {
    Terminations::new().next().await;
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
