//! The agent link: round trip of a no-op remote call (agent → console →
//! agent body → console → agent) on loopback, against a plain line echo over
//! the same kind of socket; and calls per second with 8 agents at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tether_console::agents::link::{self, Link, socket};
use tether_console::session::provenance::DecisionLog;
use tether_tools::ToolRegistry;
use tokio::net::{UnixListener, UnixStream};
use tokio_util::codec::{Framed, LinesCodec};
use tokio_util::sync::CancellationToken;

type Lines = Framed<UnixStream, LinesCodec>;

async fn call(lines: &mut Lines, id: u64, method: &str, params: Value) -> Value {
    let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    lines.send(frame.to_string()).await.unwrap();
    loop {
        let frame: Value = serde_json::from_str(&lines.next().await.unwrap().unwrap()).unwrap();
        if frame["method"] == "tool/invoke" {
            let reply = json!({"jsonrpc": "2.0", "id": frame["id"], "result": {"value": null}});
            lines.send(reply.to_string()).await.unwrap();
        } else if frame["id"] == json!(id) {
            return frame;
        }
    }
}

async fn agent(path: &std::path::Path, name: &str) -> Lines {
    let mut lines = Framed::new(UnixStream::connect(path).await.unwrap(), LinesCodec::new());
    call(&mut lines, 1, "session/open", json!({"session_id": name})).await;
    call(
        &mut lines,
        2,
        "tools/register",
        json!({"name": "noop", "concurrency": "always"}),
    )
    .await;
    lines
}

async fn one_call(lines: &mut Lines, id: u64) -> Duration {
    let start = Instant::now();
    let reply = call(
        lines,
        id,
        "batch/execute",
        json!({"calls": [{"id": "c", "name": "noop", "arguments": "{}"}]}),
    )
    .await;
    assert_eq!(reply["result"]["outcomes"][0]["code"], Value::Null);
    start.elapsed()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p) as usize]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.sock");
        let stop = CancellationToken::new();
        let link = Arc::new(Link::new(ToolRegistry::new(), DecisionLog::default()));
        // As `tether serve` runs it: on a thread of its own. For comparison,
        // TETHER_LINK_RUNTIME=shared runs it on this bench's two-worker runtime.
        let listener = socket::bind(&path).await.unwrap();
        let _server = if std::env::var("TETHER_LINK_RUNTIME").as_deref() == Ok("shared") {
            tokio::spawn(link::serve(link, listener, stop.clone()));
            None
        } else {
            Some(link::serve_on_own_thread(link, listener, stop.clone()).unwrap())
        };

        // Baseline: a line echoed back over a Unix socket, same framing.
        let echo_path = dir.path().join("echo.sock");
        let echo = UnixListener::bind(&echo_path).unwrap();
        tokio::spawn(async move {
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
        let mut echo_lines = Framed::new(UnixStream::connect(&echo_path).await.unwrap(), LinesCodec::new());
        let mut echo_samples = Vec::new();
        for _ in 0..5_000 {
            let start = Instant::now();
            echo_lines.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned()).await.unwrap();
            echo_lines.next().await.unwrap().unwrap();
            echo_samples.push(start.elapsed());
        }

        let mut lines = agent(&path, "single").await;
        for id in 0..500 {
            one_call(&mut lines, 100 + id).await;
        }
        let mut samples = Vec::new();
        for id in 0..5_000 {
            samples.push(one_call(&mut lines, 1_000 + id).await);
        }
        // The agent's own share of a call, without a socket: reading the
        // four frames a call brings it (as this bench's agent does, into JSON
        // trees) and writing the two it sends. The echo does none of this.
        let received = [
            r#"{"jsonrpc":"2.0","method":"tool/call","params":{"batch_id":"batch-1","index":0,"call_id":"c","name":"noop","mode":"parallel"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tool/invoke","params":{"call_id":"c","name":"noop","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"tool/result","params":{"batch_id":"batch-1","index":0,"call_id":"c","name":"noop","code":null,"value":null}}"#,
            r#"{"jsonrpc":"2.0","id":1000,"result":{"batch_id":"batch-1","outcomes":[{"call_id":"c","name":"noop","code":null,"value":null,"is_error":false,"decided_by":"body"}]}}"#,
        ];
        let mut agent_work = Vec::new();
        for id in 0..5_000_u64 {
            let start = Instant::now();
            let frame = json!({"jsonrpc": "2.0", "id": id, "method": "batch/execute", "params": {"calls": [{"id": "c", "name": "noop", "arguments": "{}"}]}});
            std::hint::black_box(frame.to_string());
            for line in received {
                std::hint::black_box(serde_json::from_str::<Value>(line).unwrap());
            }
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": {"value": null}});
            std::hint::black_box(reply.to_string());
            agent_work.push(start.elapsed());
        }
        let agent_p50 = percentile(&mut agent_work, 0.5);
        let p50 = percentile(&mut samples, 0.5);
        let p99 = percentile(&mut samples, 0.99);
        let echo_p50 = percentile(&mut echo_samples, 0.5);
        println!(
            "SUMMARY remote no-op call round trip: p50 {p50:.1?}, p99 {p99:.1?}; plain line echo p50 {echo_p50:.1?} = {:.1}x the echo (goal: p50 within 2x of the echo)",
            p50.as_secs_f64() / echo_p50.as_secs_f64()
        );
        println!(
            "SUMMARY of which the bench agent's own JSON work (no socket): p50 {agent_p50:.1?}; two echoes plus that: {:.1?}; the rest, the console's work and waking its thread twice more: about {:.1?}",
            echo_p50 * 2 + agent_p50,
            p50.saturating_sub(echo_p50 * 2 + agent_p50)
        );

        let window = Duration::from_secs(3);
        // Baseline for throughput: 8 clients echoing lines back to back over
        // the same kind of socket for the same time. A remote call is two
        // round trips at least (call and invoke, reply and outcome), so half
        // this rate is the most the link could do on this machine now.
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let echo_path = echo_path.clone();
            tasks.push(tokio::spawn(async move {
                let mut lines = Framed::new(UnixStream::connect(&echo_path).await.unwrap(), LinesCodec::new());
                let start = Instant::now();
                let mut done = 0_u64;
                while start.elapsed() < window {
                    lines.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned()).await.unwrap();
                    lines.next().await.unwrap().unwrap();
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
                let mut lines = agent(&path, &format!("agent-{n}")).await;
                let start = Instant::now();
                let mut done = 0_u64;
                while start.elapsed() < window {
                    one_call(&mut lines, 10 + done).await;
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
        stop.cancel();
    });
}
