//! The agent link: round trip of a no-op remote call (agent → console →
//! agent body → console → agent) on loopback, against a plain line echo over
//! the same kind of socket; and calls per second with 8 agents at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use tether_console::agents::link::{self, Link, socket};
use tether_console::session::provenance::DecisionLog;
use tether_tools::ToolRegistry;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::codec::{Framed, LinesCodec};
use tokio_util::sync::CancellationToken;

#[path = "support/policy_link.rs"]
mod policy_link;

/// A lean client, as a well-written agent is: each frame read into a typed
/// struct that borrows from the line and skips what it does not need, each
/// frame written with a small format into a buffer that is reused. On two
/// cores the agents' own CPU competes with the console's thread, so a
/// careless client (a `serde_json::Value` tree per frame, `json!` per reply)
/// would be measured instead of the console. The echo baselines use the
/// same reading and writing, so the ratios compare like with like.
struct Client {
    stream: BufReader<UnixStream>,
    line: String,
    out: String,
}

/// Every frame an agent reads: notifications (`tool/call`, `tool/result`),
/// the call-back `tool/invoke`, and responses. Unknown fields are skipped.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(default)]
    id: Option<u64>,
    #[serde(borrow, default)]
    result: Option<Response<'a>>,
}

#[derive(Deserialize)]
struct Response<'a> {
    #[serde(borrow, default)]
    outcomes: Vec<Outcome<'a>>,
}

#[derive(Deserialize)]
struct Outcome<'a> {
    #[serde(borrow)]
    code: Option<&'a str>,
}

impl Client {
    async fn connect(path: &std::path::Path) -> Self {
        Self {
            stream: BufReader::new(UnixStream::connect(path).await.unwrap()),
            line: String::new(),
            out: String::new(),
        }
    }

    /// Sends `out` as one line.
    async fn send(&mut self) {
        self.out.push('\n');
        self.stream.get_mut().write_all(self.out.as_bytes()).await.unwrap();
        self.out.clear();
    }

    /// The next line, without its newline.
    async fn read(&mut self) -> &str {
        self.line.clear();
        assert!(
            self.stream.read_line(&mut self.line).await.unwrap() > 0,
            "the peer closed"
        );
        self.line.trim_end()
    }

    /// Sends a request and answers every `tool/invoke` (a no-op body) until
    /// the response to `id` comes; returns the code of its first outcome.
    async fn call(&mut self, id: u64, method: &str, params: &str) -> Option<String> {
        write!(
            self.out,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        )
        .unwrap();
        self.send().await;
        loop {
            let frame: Incoming = serde_json::from_str(self.read().await).unwrap();
            match (frame.method, frame.id) {
                (Some("tool/invoke"), Some(invoke)) => {
                    write!(
                        self.out,
                        r#"{{"jsonrpc":"2.0","id":{invoke},"result":{{"value":null}}}}"#
                    )
                    .unwrap();
                    self.send().await;
                }
                (None, Some(reply)) if reply == id => {
                    let outcomes = frame.result.map(|r| r.outcomes).unwrap_or_default();
                    return outcomes.first().and_then(|o| o.code).map(str::to_owned);
                }
                _ => {}
            }
        }
    }

    /// One line out and its echo back.
    async fn echo(&mut self) {
        self.out.push_str(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        self.send().await;
        self.read().await;
    }
}

async fn agent(path: &std::path::Path, name: &str) -> Client {
    let mut client = Client::connect(path).await;
    client
        .call(1, "session/open", &format!(r#"{{"session_id":"{name}"}}"#))
        .await;
    client
        .call(2, "tools/register", r#"{"name":"noop","concurrency":"always"}"#)
        .await;
    client
}

const NOOP_BATCH: &str = r#"{"calls":[{"id":"c","name":"noop","arguments":"{}"}]}"#;

async fn one_call(client: &mut Client, id: u64) -> Duration {
    let start = Instant::now();
    let code = client.call(id, "batch/execute", NOOP_BATCH).await;
    assert_eq!(code, None);
    start.elapsed()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p) as usize]
}

/// A number from the environment, or `default`: shorter runs under valgrind
/// (`TETHER_LINK_CALLS=200 TETHER_LINK_WINDOW_MS=0`).
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A line echo over a Unix socket, same framing, on a thread of its own
/// with a single-threaded runtime: served the way the link is, so the two
/// differ only in the work done per line.
fn echo_on_own_thread(listener: std::os::unix::net::UnixListener) {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let echo = UnixListener::from_std(listener).unwrap();
            while let Ok((stream, _)) = echo.accept().await {
                tokio::spawn(async move {
                    let mut lines = Framed::new(stream, LinesCodec::new());
                    while let Some(Ok(line)) = lines.next().await {
                        if lines.send(line).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
    });
}

fn main() {
    let calls = env_or("TETHER_LINK_CALLS", 5_000);
    let window = Duration::from_millis(env_or("TETHER_LINK_WINDOW_MS", 3_000));
    // The single client runs on a single-threaded runtime of its own, so
    // each hop of a round trip is one thread woken by the kernel, as the
    // link's and the echo's are. Wall-clock figures on the 2-core machine
    // come in two regimes that switch within and between runs whatever the
    // code: an echo of ~15-20 µs or of ~55-65 µs (pinned to one CPU with
    // `taskset -c 0` it was always the fast one). Compare ratios from the
    // same run; for the console's own share, count instructions
    // (TETHER_LINK_CALLS under callgrind).
    let single = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The 8 agents (and 8 echo clients) run on two workers, one per core.
    let rt = policy_link::runtime(2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("console.sock");
    let stop = CancellationToken::new();
    let link = Arc::new(Link::new(ToolRegistry::new(), DecisionLog::default()));
    let listener = rt.block_on(socket::bind(&path)).unwrap();
    // As `tether serve` runs it: on a thread of its own. For comparison,
    // TETHER_LINK_RUNTIME=shared runs it on this bench's two-worker runtime.
    let _server = if std::env::var("TETHER_LINK_RUNTIME").as_deref() == Ok("shared") {
        rt.spawn(link::serve(link, listener, stop.clone()));
        None
    } else {
        Some(link::serve_on_own_thread(link, listener, stop.clone()).unwrap())
    };
    let echo_path = dir.path().join("echo.sock");
    let echo = std::os::unix::net::UnixListener::bind(&echo_path).unwrap();
    echo.set_nonblocking(true).unwrap();
    echo_on_own_thread(echo);

    let (mut echo_samples, mut two_echo_samples, mut samples) = single.block_on(async {
        let mut echo_client = Client::connect(&echo_path).await;
        let mut echo_samples = Vec::new();
        for _ in 0..calls {
            let start = Instant::now();
            echo_client.echo().await;
            echo_samples.push(start.elapsed());
        }
        // The protocol's floor: a remote call is two round trips (the call
        // out and the invoke back, the reply out and the outcome back), so
        // its honest baseline is two echoes back to back.
        let mut two_echo_samples = Vec::new();
        for _ in 0..calls {
            let start = Instant::now();
            echo_client.echo().await;
            echo_client.echo().await;
            two_echo_samples.push(start.elapsed());
        }
        let mut client = agent(&path, "single").await;
        for id in 0..calls / 10 {
            one_call(&mut client, 100 + id).await;
        }
        let mut samples = Vec::new();
        for id in 0..calls {
            samples.push(one_call(&mut client, 1_000 + id).await);
        }
        (echo_samples, two_echo_samples, samples)
    });
    // The agent's own share of a call, without a socket: reading the
    // four frames a call brings it (as this bench's lean agent does, into
    // borrowed typed structs) and writing the two it sends. The echo does
    // none of this.
    let received = [
        r#"{"jsonrpc":"2.0","method":"tool/call","params":{"batch_id":"batch-1","index":0,"call_id":"c","name":"noop","mode":"parallel"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tool/invoke","params":{"call_id":"c","name":"noop","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"tool/result","params":{"batch_id":"batch-1","index":0,"call_id":"c","name":"noop","code":null,"value":null}}"#,
        r#"{"jsonrpc":"2.0","id":1000,"result":{"batch_id":"batch-1","outcomes":[{"call_id":"c","name":"noop","code":null,"value":null,"is_error":false,"decided_by":"body"}]}}"#,
    ];
    let mut agent_work = Vec::new();
    let mut out = String::new();
    for id in 0..calls {
        let start = Instant::now();
        write!(
            out,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"batch/execute","params":{NOOP_BATCH}}}"#
        )
        .unwrap();
        std::hint::black_box(&out);
        out.clear();
        for line in received {
            std::hint::black_box(serde_json::from_str::<Incoming>(line).unwrap());
        }
        write!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"value":null}}}}"#).unwrap();
        std::hint::black_box(&out);
        out.clear();
        agent_work.push(start.elapsed());
    }
    let agent_p50 = percentile(&mut agent_work, 0.5);
    let p50 = percentile(&mut samples, 0.5);
    let p99 = percentile(&mut samples, 0.99);
    let echo_p50 = percentile(&mut echo_samples, 0.5);
    let two_echo_p50 = percentile(&mut two_echo_samples, 0.5);
    println!(
        "SUMMARY remote no-op call round trip: p50 {p50:.1?}, p99 {p99:.1?}; plain line echo p50 {echo_p50:.1?} = {:.1}x the echo (goal: p50 within 2x of the echo)",
        p50.as_secs_f64() / echo_p50.as_secs_f64()
    );
    println!(
        "SUMMARY vs the protocol's floor: two echoes back to back p50 {two_echo_p50:.1?}; the remote call's p50 = {:.2}x that",
        p50.as_secs_f64() / two_echo_p50.as_secs_f64()
    );
    println!(
        "SUMMARY of which the bench agent's own JSON work (no socket): p50 {agent_p50:.1?}; two echoes plus that: {:.1?}; the rest, the console's work and waking its thread twice more: about {:.1?}",
        echo_p50 * 2 + agent_p50,
        p50.saturating_sub(echo_p50 * 2 + agent_p50)
    );

    rt.block_on(async {
        // Baseline for throughput: 8 clients echoing lines back to back over
        // the same kind of socket for the same time. A remote call is two
        // round trips at least (call and invoke, reply and outcome), so half
        // this rate is the most the link could do on this machine now.
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let echo_path = echo_path.clone();
            tasks.push(tokio::spawn(async move {
                let mut client = Client::connect(&echo_path).await;
                let start = Instant::now();
                let mut done = 0_u64;
                while start.elapsed() < window {
                    client.echo().await;
                    done += 1;
                }
                done
            }));
        }
        let mut echoes = 0;
        for task in tasks {
            echoes += task.await.unwrap();
        }
        let echo_rate = echoes as f64 / window.as_secs_f64();

        let mut tasks = Vec::new();
        for n in 0..8 {
            let path = path.clone();
            tasks.push(tokio::spawn(async move {
                let mut client = agent(&path, &format!("agent-{n}")).await;
                let start = Instant::now();
                let mut done = 0_u64;
                while start.elapsed() < window {
                    one_call(&mut client, 10 + done).await;
                    done += 1;
                }
                done
            }));
        }
        let mut total = 0;
        for task in tasks {
            total += task.await.unwrap();
        }
        let rate = total as f64 / window.as_secs_f64();
        println!(
            "SUMMARY 8 agents, one-call batches back to back for {window:?}: {rate:.0} calls/s (goal: at least 40,000); 8 plain line echoes in the same run: {echo_rate:.0} round trips/s, so at most {:.0} two-round-trip calls/s = {:.2}x of that ceiling",
            echo_rate / 2.0,
            rate / (echo_rate / 2.0)
        );
    });
    stop.cancel();
}
