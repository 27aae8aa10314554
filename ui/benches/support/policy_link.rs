//! What the benches that time a call through a console's link share: the
//! runtime it is timed on, and a registry holding a policy's rules.
#![allow(dead_code)]

use tether_console::files::policy::Policy;
use tether_console::files::source::Document;
use tether_console::session::provenance::DecisionLog;
use tether_tools::{Registration, ToolRegistry};

/// A multi-thread runtime of `workers` workers, timers and I/O on.
pub fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

/// `rules` (a policy file's text) installed on a new registry: the
/// registry, its decision log, and the rules' handles (kept while the
/// bench runs).
pub fn with_policy(rules: &str) -> (ToolRegistry, DecisionLog, Vec<Registration>) {
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let policy = Policy::from_document(&Document::parse("p.json".into(), rules.into()).unwrap()).unwrap();
    let handles = tether_console::session::policy::install(&registry, &policy, &log);
    (registry, log, handles)
}
