//! A console that runs all day: resident memory of the real console state
//! (the `App`, drawn into a 200×50 `TestBackend` by the console's own event
//! loop) fed through the agent link by 8 agents sending batches of 5 calls
//! with 1 KB arguments and 1 KB results. Prints VmRSS at 10,000 and 100,000
//! calls (and 1,000,000 with `TETHER_MEMORY_1M=1`), and the slope per call
//! between checkpoints. `TETHER_MEMORY_JOURNAL=1` opens a journal as well
//! (in a temporary directory).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use tether_console::agents::link::{self, Link, socket};
use tether_console::session::events::AppEventSender;
use tether_console::session::observer;
use tether_console::tui::app::{App, HeaderInfo, ScopeEntry};
use tether_console::tui::console::run_loop;
use tether_tools::ToolRegistry;
use tokio::net::UnixStream;
use tokio_util::codec::{Framed, LinesCodec};
use tokio_util::sync::CancellationToken;

type Lines = Framed<UnixStream, LinesCodec>;

const AGENTS: usize = 8;
const CALLS_PER_BATCH: usize = 5;

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

async fn call(lines: &mut Lines, id: u64, method: &str, params: Value, payload: &Value) -> Value {
    let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    lines.send(frame.to_string()).await.unwrap();
    loop {
        let frame: Value = serde_json::from_str(&lines.next().await.unwrap().unwrap()).unwrap();
        if frame["method"] == "tool/invoke" {
            let reply = json!({"jsonrpc": "2.0", "id": frame["id"], "result": {"value": payload}});
            lines.send(reply.to_string()).await.unwrap();
        } else if frame["id"] == json!(id) {
            return frame;
        }
    }
}

async fn agent(path: &Path, n: usize, payload: &Value) -> Lines {
    let stream = UnixStream::connect(path).await.unwrap();
    let mut lines = Framed::new(stream, LinesCodec::new_with_max_length(1 << 20));
    let session = json!({"session_id": format!("agent-{n}")});
    call(&mut lines, 1, "session/open", session, payload).await;
    let tool = json!({"name": "read_file", "concurrency": "always"});
    call(&mut lines, 2, "tools/register", tool, payload).await;
    lines
}

/// Runs `batches` batches of 5 calls on one agent connection.
async fn run_batches(lines: &mut Lines, agent: usize, first: u64, batches: u64, args: &str, payload: &Value) {
    for b in first..first + batches {
        let calls: Vec<Value> = (0..CALLS_PER_BATCH)
            .map(|i| json!({"id": format!("a{agent}-b{b}-c{i}"), "name": "read_file", "arguments": args}))
            .collect();
        let reply = call(lines, 10 + b, "batch/execute", json!({"calls": calls}), payload).await;
        assert_eq!(reply["result"]["outcomes"][0]["code"], Value::Null, "{reply}");
    }
}

fn main() {
    let one_million = std::env::var_os("TETHER_MEMORY_1M").is_some();
    let with_journal = std::env::var_os("TETHER_MEMORY_JOURNAL").is_some();
    let mut checkpoints = vec![10_000_u64, 100_000];
    if one_million {
        checkpoints.push(1_000_000);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.sock");
        let stop = CancellationToken::new();
        let (events, mut receiver) = AppEventSender::new();
        let log = tether_console::session::provenance::DecisionLog::default();
        let registry = ToolRegistry::new();
        let _handles = observer::attach(&registry, &events);
        let mut link = Link::new(registry.clone(), log.clone());
        link.events = Some(events.clone());
        if with_journal {
            let journal = tether_console::session::journal::open(&dir.path().join("journal.jsonl"))
                .await
                .unwrap();
            link.journal = Some(Arc::new(journal));
        }
        let root = link.root.clone();
        let server = link::serve_on_own_thread(Arc::new(link), socket::bind(&path).await.unwrap(), stop.clone()).unwrap();
        drop(events);

        let mut app = App::new(
            registry,
            ScopeEntry::tree(std::slice::from_ref(&root)),
            HeaderInfo::default(),
            Instant::now(),
        );
        app.decisions = Some(log);
        let mut terminal = Terminal::new(TestBackend::new(200, 50)).unwrap();
        let (quit, input) = futures::channel::mpsc::unbounded::<std::io::Result<crossterm::event::Event>>();

        let driver = tokio::spawn(async move {
            let text = "x".repeat(1_000);
            let args = json!({"path": "src/lib.rs", "text": text}).to_string();
            let payload = json!({"contents": text});
            let mut agents = Vec::new();
            for n in 0..AGENTS {
                agents.push(agent(&path, n, &payload).await);
            }
            let start_rss = rss_bytes();
            println!("memory: {} agents connected, RSS {:.1} MB", AGENTS, start_rss as f64 / 1e6);
            let mut done = 0_u64;
            let mut batch_no = 0_u64;
            let mut previous: Option<(u64, u64)> = None;
            for target in checkpoints {
                let started = Instant::now();
                let per_agent = (target - done).div_ceil((AGENTS * CALLS_PER_BATCH) as u64);
                let mut tasks = Vec::new();
                for (n, mut lines) in agents.drain(..).enumerate() {
                    let (args, payload) = (args.clone(), payload.clone());
                    tasks.push(tokio::spawn(async move {
                        run_batches(&mut lines, n, batch_no, per_agent, &args, &payload).await;
                        lines
                    }));
                }
                for task in tasks {
                    agents.push(task.await.unwrap());
                }
                batch_no += per_agent;
                done += per_agent * (AGENTS * CALLS_PER_BATCH) as u64;
                let elapsed = started.elapsed();
                // Let the screen catch up with what was sent before reading.
                tokio::time::sleep(Duration::from_millis(300)).await;
                let rss = rss_bytes();
                let slope = previous.map(|(calls, bytes)| (rss as f64 - bytes as f64) / (done - calls) as f64);
                let line = format!(
                    "SUMMARY memory after {done} calls (1 KB args + 1 KB results, TUI attached{}): RSS {:.1} MB{}; {:.0} calls/s",
                    if with_journal { ", journal open" } else { "" },
                    rss as f64 / 1e6,
                    slope.map_or(String::new(), |s| format!(", slope {s:.0} bytes/call since the last checkpoint")),
                    (done - previous.map_or(0, |p| p.0)) as f64 / elapsed.as_secs_f64()
                );
                println!("{line}");
                previous = Some((done, rss));
            }
            println!("SUMMARY memory goal: under 100 MB after 1,000,000 calls, slope about 0 after warm-up");
            drop(agents);
            drop(quit);
        });
        run_loop(&mut terminal, &mut app, input, &mut receiver, |_, _| {})
            .await
            .unwrap();
        driver.await.unwrap();
        stop.cancel();
        let _ = tokio::task::spawn_blocking(move || server.join()).await;
    });
}
