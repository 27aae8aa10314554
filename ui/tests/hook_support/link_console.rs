//! A console as the hook bridge meets it, in the test's own process: its
//! policy installed on a registry, its link serving a real Unix socket in a
//! temporary directory, its journal, and whoever answers what it asks.
// Each test file uses its own part of this harness.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use tether_console::agents::link::{self, Link, socket};
use tether_console::files::policy::Policy;
use tether_console::files::source::Document;
use tether_console::session::provenance::DecisionLog;
use tether_tools::{ApprovalAnswer, PendingApproval, ToolRegistry};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

/// Who answers the calls the policy asks about.
#[derive(Clone, Copy, Debug)]
pub enum Asker {
    /// The test, from [`LinkConsole::requests`].
    Test,
    /// A human who rejects every question ("the human said no").
    Rejecting,
    /// Nobody: the console has no approver.
    Nobody,
}

pub struct LinkConsole {
    /// The socket the bridge is pointed at.
    pub path: PathBuf,
    pub journal: PathBuf,
    pub registry: ToolRegistry,
    /// The questions the policy asks, for an [`Asker::Test`] console.
    pub requests: UnboundedReceiver<PendingApproval>,
    pub stop: CancellationToken,
    pub dir: tempfile::TempDir,
    _handles: Vec<tether_tools::Registration>,
}

impl LinkConsole {
    /// The next question the policy asks (an [`Asker::Test`] console); a
    /// call that never reached the console fails the test here instead of
    /// leaving it waiting.
    pub async fn asked(&mut self) -> PendingApproval {
        tokio::time::timeout(std::time::Duration::from_secs(30), self.requests.recv())
            .await
            .expect("the console asked within 30 s")
            .unwrap()
    }
}

impl Drop for LinkConsole {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A console on `policy` (a policy file's text), its questions answered by
/// `asker`.
pub async fn start(policy: &str, asker: Asker) -> LinkConsole {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tether").join("console.sock");
    let journal = dir.path().join("journal.jsonl");
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let policy = Policy::from_document(&Document::parse("p.json".into(), policy.into()).unwrap()).unwrap();
    let mut handles = tether_console::session::policy::install(&registry, &policy, &log);
    let (answerer, mut requests) = tether_tools::pipeline::approval::channel();
    match asker {
        Asker::Test => handles.push(registry.set_approval_answerer(answerer)),
        Asker::Rejecting => {
            handles.push(registry.set_approval_answerer(answerer));
            let (_, unused) = tokio::sync::mpsc::unbounded_channel();
            let mut asked = std::mem::replace(&mut requests, unused);
            tokio::spawn(async move {
                while let Some(pending) = asked.recv().await {
                    let _ = pending.reply.send(ApprovalAnswer::Rejected {
                        reason: Some("the human said no".into()),
                    });
                }
            });
        }
        Asker::Nobody => {}
    }
    let mut link = Link::new(registry.clone(), log);
    link.journal = Some(Arc::new(
        tether_console::session::journal::open(&journal).await.unwrap(),
    ));
    let stop = CancellationToken::new();
    tokio::spawn(link::serve(
        Arc::new(link),
        socket::bind(&path).await.unwrap(),
        stop.clone(),
    ));
    LinkConsole {
        path,
        journal,
        registry,
        requests,
        stop,
        dir,
        _handles: handles,
    }
}
