//! The agent link's test harness: a console's link on a real Unix socket
//! (its policy, a result listener, an answerer) and a raw agent speaking
//! JSON lines to it. Shared by `link.rs` and `link_calls.rs`.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tether_console::agents::link::{self, Link, socket};
use tether_console::files::policy::Policy;
use tether_console::files::source::Document;
use tether_console::session::provenance::DecisionLog;
use tether_tools::{ApprovalAnswer, ListenerOrder, ToolExecution, ToolExecutionOutcome, ToolRegistry};
use tokio::net::UnixStream;
use tokio_util::codec::{Framed, LinesCodec};
use tokio_util::sync::CancellationToken;

/// Every outcome the server's result listener saw: call id and code.
pub type Results = Arc<Mutex<Vec<(String, Option<&'static str>)>>>;

pub struct Server {
    pub path: PathBuf,
    pub link: Arc<Link>,
    pub registry: ToolRegistry,
    pub results: Results,
    pub stop: CancellationToken,
    _dir: tempfile::TempDir,
    _handles: Vec<tether_tools::Registration>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

pub async fn server(rules: Value, answerer: Option<tether_tools::ChannelAnswerer>) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tether").join("console.sock");
    let registry = ToolRegistry::new();
    let log = DecisionLog::default();
    let policy =
        Policy::from_document(&Document::parse("p.json".into(), json!({ "rules": rules }).to_string()).unwrap())
            .unwrap();
    let mut handles = tether_console::session::policy::install(&registry, &policy, &log);
    let results = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&results);
    handles.push(registry.register_result(
        None,
        ListenerOrder::Append,
        move |e: ToolExecution, o: Arc<ToolExecutionOutcome>| {
            seen.lock()
                .unwrap()
                .push((e.call_id().to_owned(), o.code().map(|c| c.as_str())));
            async { Ok(()) }
        },
    ));
    match answerer {
        Some(answerer) => handles.push(registry.set_approval_answerer(answerer)),
        None => handles.push(
            registry.set_approval_answerer(|_r: tether_tools::ApprovalRequest| async {
                Ok::<_, tether_tools::BoxError>(ApprovalAnswer::Approved)
            }),
        ),
    }
    let link = Arc::new(Link::new(registry.clone(), log));
    let listener = socket::bind(&path).await.unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(link::serve(Arc::clone(&link), listener, stop.clone()));
    Server {
        path,
        link,
        registry,
        results,
        stop,
        _dir: dir,
        _handles: handles,
    }
}

pub struct Agent {
    pub lines: Framed<UnixStream, LinesCodec>,
    pub next: u64,
    pub notifications: Vec<Value>,
}

impl Agent {
    pub async fn connect(server: &Server) -> Agent {
        let stream = UnixStream::connect(&server.path).await.unwrap();
        Agent {
            lines: Framed::new(stream, LinesCodec::new()),
            next: 1,
            notifications: Vec::new(),
        }
    }

    pub async fn send_raw(&mut self, text: &str) {
        self.lines.send(text.to_owned()).await.unwrap();
    }

    pub async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(DEADLINE, self.lines.next())
            .await
            .expect("a frame in time");
        serde_json::from_str(&line.unwrap().unwrap()).unwrap()
    }

    pub async fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&frame.to_string()).await;
        id
    }

    /// Sends a request and answers call-backs with `body` until its reply comes.
    pub async fn call_with(&mut self, method: &str, params: Value, body: impl Fn(&Value) -> Value) -> Value {
        let id = self.send_request(method, params).await;
        loop {
            let frame = self.read().await;
            if frame["method"] == "tool/invoke" {
                let reply = json!({"jsonrpc": "2.0", "id": frame["id"], "result": {"value": body(&frame["params"])}});
                self.send_raw(&reply.to_string()).await;
            } else if frame.get("method").is_some() {
                self.notifications.push(frame);
            } else if frame["id"] == json!(id) {
                return frame;
            }
        }
    }

    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.call_with(method, params, |p| p["arguments"].clone()).await
    }

    pub async fn open(&mut self, session: &str) {
        let reply = self
            .call(
                "session/open",
                json!({"session_id": session, "owner": "test", "label": session}),
            )
            .await;
        assert!(reply.get("result").is_some(), "{reply}");
        for (name, concurrency) in [("echo", "always"), ("write", "never")] {
            let reply = self
                .call(
                    "tools/register",
                    json!({"name": name, "description": name, "concurrency": concurrency}),
                )
                .await;
            assert!(reply.get("result").is_some(), "{reply}");
        }
    }
}

pub fn calls(n: usize, name: &str) -> Value {
    json!(
        (0..n)
            .map(|i| json!({"id": format!("c{i}"), "name": name, "arguments": format!("{{\"i\": {i}}}")}))
            .collect::<Vec<_>>()
    )
}

/// Polls until `ok`; the deadline is generous for a debug build on two
/// loaded cores (400 polls of 10 ms were not) and only bounds a failure.
pub async fn eventually(what: &str, ok: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + DEADLINE;
    while !ok() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub const DEADLINE: Duration = Duration::from_secs(30);
