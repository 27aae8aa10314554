//! What the MCP gateway adds to a `tools/call` a policy rule decides: the
//! same `echo` of the real `server-everything`, called by an rmcp client
//! straight on the server and through `tether mcp proxy` (a child process,
//! as a real client starts it) with the console in this process, and through
//! a relay of two `cat`s (what any process in between costs here), through
//! a relay with the gateway's hops to a console and back (the floor of its
//! design), and through the gateway deciding alone by its `--policy` with
//! no console (the floor of a console that hosts the gateway). All in the
//! same run, interleaved; criterion for the means, and a percentile pass
//! (p50, p99) printed as `SUMMARY`.
//!
//! Needs `mcp-server-everything` in `$TETHER_CI_CACHE` (`.ci/run`); skipped
//! with a message when it is missing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt as _};
use tether_console::agents::link::{self, Link, socket};
use tether_console::session::journal::{JournalHeader, JournalWriter};
use tokio_util::sync::CancellationToken;

#[path = "support/policy_link.rs"]
mod policy_link;

type Client = RunningService<RoleClient, ()>;

async fn connect(command: &[String], state: &std::path::Path) -> Client {
    let mut cmd = tokio::process::Command::new(&command[0]);
    cmd.args(&command[1..]).env("XDG_STATE_HOME", state);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn echo(client: &Client) {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = serde_json::json!({"message": "hi"}).as_object().cloned();
    let result = client.peer().call_tool(params).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
}

/// `/proc/self/task/TID` of this process's thread named `name`.
fn thread_named(name: &str) -> Option<PathBuf> {
    std::fs::read_dir("/proc/self/task")
        .ok()?
        .flatten()
        .map(|t| t.path())
        .find(|task| std::fs::read_to_string(task.join("comm")).is_ok_and(|comm| comm.trim() == name))
}

/// `/proc/PID` of a child of this process whose command line has `argument`.
fn child_with_argument(argument: &str) -> Option<PathBuf> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .map(|p| p.path())
        .find(|process| {
            let parent = std::fs::read_to_string(process.join("stat"))
                .ok()
                .and_then(|stat| {
                    stat.rsplit_once(')')
                        .map(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_owned))
                })
                .flatten();
            let cmdline = std::fs::read(process.join("cmdline")).unwrap_or_default();
            parent.as_deref() == Some(me.as_str()) && cmdline.split(|b| *b == 0).any(|arg| arg == argument.as_bytes())
        })
}

/// Time on a CPU of a thread (`/proc/self/task/TID`) or of every thread of
/// a process (`/proc/PID`): the first field of `schedstat`, summed.
fn cpu_time(at: &std::path::Path) -> Duration {
    let tasks: Vec<PathBuf> = if at.join("task").is_dir() {
        std::fs::read_dir(at.join("task")).map_or_else(|_| Vec::new(), |d| d.flatten().map(|t| t.path()).collect())
    } else {
        vec![at.to_owned()]
    };
    let nanos: u64 = tasks
        .iter()
        .filter_map(|task| std::fs::read_to_string(task.join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(nanos)
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let at = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[at]
}

/// The floor of any gateway that asks a console before and after each
/// call: this bench re-run as a relay (`TETHER_BENCH_HOPS` names the echo's
/// socket, `TETHER_BENCH_HOPS_SERVER` the server) that sends every line it
/// carries, either way, through a socket whose far end echoes it, and only
/// then on: the gateway's hops (client, gateway, console, gateway, server,
/// gateway, console, gateway, client) with nothing parsed, decided or
/// recorded, on blocking reads and writes.
fn hops(socket: &str, server: &str) {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::os::unix::net::UnixStream;
    use std::process::{Command, Stdio};

    fn carry(from: impl std::io::Read, mut to: impl std::io::Write, socket: &str) {
        let console = UnixStream::connect(socket).unwrap();
        let mut echo = BufReader::new(console.try_clone().unwrap());
        let mut console = console;
        let mut line = String::new();
        for read in BufReader::new(from).lines() {
            let Ok(read) = read else { return };
            console.write_all(format!("{read}\n").as_bytes()).unwrap();
            line.clear();
            if echo.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if to.write_all(line.as_bytes()).and_then(|()| to.flush()).is_err() {
                return;
            }
        }
    }
    let mut child = Command::new(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (to_server, from_server) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let results = {
        let socket = socket.to_owned();
        std::thread::spawn(move || carry(from_server, std::io::stdout(), &socket))
    };
    carry(std::io::stdin(), to_server, socket);
    let _ = child.kill();
    let _ = child.wait();
    let _ = results.join();
}

/// The console's end of [`hops`]: each line sent back as it came.
fn echo_console(path: &std::path::Path) {
    use std::io::{BufRead as _, BufReader, Write as _};
    let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut lines = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while lines.read_line(&mut line).unwrap_or(0) > 0 {
                    if stream.write_all(line.as_bytes()).is_err() {
                        return;
                    }
                    line.clear();
                }
            });
        }
    });
}

fn main() {
    if let (Some(socket), Some(server)) = (
        std::env::var_os("TETHER_BENCH_HOPS"),
        std::env::var_os("TETHER_BENCH_HOPS_SERVER"),
    ) {
        return hops(&socket.to_string_lossy(), &server.to_string_lossy());
    }
    let cache = std::env::var_os("TETHER_CI_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tether-ci"),
        PathBuf::from,
    );
    // TETHER_BENCH_SERVER: another server's executable in its place, one
    // with an `echo` tool, to see the gateway against a lighter server:
    // `benches/mcp-echo-server.sh` is one of a few bash builtins.
    let server = std::env::var_os("TETHER_BENCH_SERVER").map_or_else(
        || cache.join("npm/node_modules/.bin/mcp-server-everything"),
        PathBuf::from,
    );
    if !server.exists() {
        println!("SKIPPED: {} missing; run `bash .ci/run`", server.display());
        return;
    }
    let runtime = policy_link::runtime(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("console.sock");
    let stop = CancellationToken::new();
    let rules = r#"{"rules": [{"id": "echo-is-fine", "stage": "pre-execute", "match": {"tool": "echo"}, "action": {"type": "allow"}}]}"#;
    let (registry, log, _rules) = policy_link::with_policy(rules);
    runtime.block_on(async {
        let listener = socket::bind(&path).await.unwrap();
        // The journal on, as a console records every call.
        let mut link = Link::new(registry, log);
        // It hosts the gateway, as `tether serve` does.
        link.mcp_host = Some(tether_console::agents::mcp::host::handler());
        let header = JournalHeader::new(None, Duration::from_secs(120));
        // TETHER_BENCH_JOURNAL=off: without it, to see its share (the
        // goal is with it on).
        if std::env::var_os("TETHER_BENCH_JOURNAL").is_none_or(|v| v != "off") {
            link.journal = Some(Arc::new(
                JournalWriter::open(&dir.path().join("journal.jsonl"), None, header).unwrap(),
            ));
        }
        link::serve_on_own_thread(Arc::new(link), listener, stop.clone()).unwrap();
    });
    let state = dir.path().join("state");
    let direct_cmd = vec![server.display().to_string()];
    // `tether mcp proxy` in front of the server, `options` before `--`.
    let proxy_cmd = |options: &[&std::path::Path]| -> Vec<String> {
        let logs = dir.path().join("logs");
        let head = [env!("CARGO_BIN_EXE_tether"), "--log-dir", &logs.display().to_string()].map(str::to_owned);
        let proxy = ["mcp", "proxy", "--name", "everything"].map(str::to_owned);
        let options = options.iter().map(|o| o.display().to_string());
        (head.into_iter().chain(proxy).chain(options))
            .chain(std::iter::once("--".to_owned()))
            .chain(direct_cmd.iter().cloned())
            .collect()
    };
    let gateway_cmd = proxy_cmd(&["--socket".as_ref(), &path]);
    // What any process between the client and the server costs on this
    // machine: two `cat`s relaying the bytes, nothing parsed (the same two
    // extra hops as a proxy: client, relay, server, relay, client).
    let relay_cmd = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!("cat | {} | cat", server.display()),
    ];
    // The gateway deciding alone: the same rule as its `--policy`, nothing
    // at its socket (the engine in its own process, no journal): what one
    // process between client and server costs with the gateway's work in
    // it, the hops of a console hosting the gateway.
    std::fs::write(dir.path().join("p.json"), rules).unwrap();
    let (policy, nobody) = (dir.path().join("p.json"), dir.path().join("nobody.sock"));
    let alone_cmd = proxy_cmd(&["--policy".as_ref(), &policy, "--socket".as_ref(), &nobody]);
    let echo_path = dir.path().join("echo.sock");
    echo_console(&echo_path);
    let hops_cmd = vec![
        "env".to_owned(),
        format!("TETHER_BENCH_HOPS={}", echo_path.display()),
        format!("TETHER_BENCH_HOPS_SERVER={}", server.display()),
        std::env::current_exe().unwrap().display().to_string(),
    ];
    // A first session pins the server's tools: a tool seen for the first
    // time is asked whatever the policy says (and nobody answers here).
    runtime.block_on(async {
        let first_sight = connect(&gateway_cmd, &state).await;
        let _ = first_sight.peer().list_all_tools().await;
        let _ = first_sight.cancel().await;
    });
    let (direct, gateway, relay, floor, alone) = runtime.block_on(async {
        (
            connect(&direct_cmd, &state).await,
            connect(&gateway_cmd, &state).await,
            connect(&relay_cmd, &state).await,
            connect(&hops_cmd, &state).await,
            connect(&alone_cmd, &state).await,
        )
    });
    // Timed in this order, interleaved.
    let paths = [&floor, &relay, &direct, &gateway, &alone];
    for _ in 0..50 {
        for path in paths {
            runtime.block_on(echo(path));
        }
    }

    // TETHER_SUMMARY_ONLY=1 skips criterion's sampling (for profiling).
    if std::env::var_os("TETHER_SUMMARY_ONLY").is_none() {
        let mut criterion = Criterion::default()
            .sample_size(50)
            .measurement_time(Duration::from_secs(5))
            .configure_from_args();
        let mut group = criterion.benchmark_group("mcp tools/call echo, a rule decides");
        group.bench_function("direct", |b| b.iter(|| runtime.block_on(echo(&direct))));
        group.bench_function("through tether mcp proxy", |b| {
            b.iter(|| runtime.block_on(echo(&gateway)))
        });
        group.finish();
    }

    // Each call timed on its own, the paths in turn; the CPU time the
    // hosted gateway (the link's thread) and the gateway deciding alone
    // (its process) spend on them, from the kernel's accounting.
    let link_thread = thread_named("tether-link");
    let alone_process = child_with_argument(&nobody.display().to_string());
    let cpu_before = (
        link_thread.as_deref().map(cpu_time),
        alone_process.as_deref().map(cpu_time),
    );
    let mut samples: [Vec<Duration>; 5] = Default::default();
    for _ in 0..1000 {
        for (path, times) in paths.iter().zip(&mut samples) {
            let start = Instant::now();
            runtime.block_on(echo(path));
            times.push(start.elapsed());
        }
    }
    let cpu_after = (
        link_thread.as_deref().map(cpu_time),
        alone_process.as_deref().map(cpu_time),
    );
    let [
        mut floor_samples,
        mut relay_samples,
        mut direct_samples,
        mut gateway_samples,
        mut alone_samples,
    ] = samples;
    let (d50, d99) = (
        percentile(&mut direct_samples, 0.5),
        percentile(&mut direct_samples, 0.99),
    );
    let (g50, g99) = (
        percentile(&mut gateway_samples, 0.5),
        percentile(&mut gateway_samples, 0.99),
    );
    println!(
        "SUMMARY mcp tools/call echo (rule-decided), 1000 calls each, interleaved: direct p50 {d50:.2?} p99 {d99:.2?}; through the gateway p50 {g50:.2?} p99 {g99:.2?}; added p50 {:.2?} p99 {:.2?} (goal: under 1 ms at p50)",
        g50.saturating_sub(d50),
        g99.saturating_sub(d99)
    );
    println!(
        "SUMMARY mcp: gateway p50 = {:.2}x direct (a rule decides, the journal on; goal: at most 1.5x)",
        g50.as_secs_f64() / d50.as_secs_f64()
    );
    let a50 = percentile(&mut alone_samples, 0.5);
    println!(
        "SUMMARY mcp: the gateway deciding alone (its --policy, no console, no journal: one process between client and server) p50 {a50:.2?} = {:.2}x direct",
        a50.as_secs_f64() / d50.as_secs_f64()
    );
    let r50 = percentile(&mut relay_samples, 0.5);
    println!(
        "SUMMARY mcp: a relay of two `cat`s between client and server (any process in between, nothing parsed) p50 {r50:.2?} = {:.2}x direct; the gateway adds {:.2?} over it",
        r50.as_secs_f64() / d50.as_secs_f64(),
        g50.saturating_sub(r50)
    );
    let f50 = percentile(&mut floor_samples, 0.5);
    println!(
        "SUMMARY mcp: the floor of a gateway that asks a console before and after each call (the design before the console hosted it; its hops through an echo, nothing parsed) p50 {f50:.2?} = {:.2}x direct; the gateway adds {:.2?} over it",
        f50.as_secs_f64() / d50.as_secs_f64(),
        g50.saturating_sub(f50)
    );
    println!(
        "SUMMARY mcp: gateway p50 = {:.2}x the floor (what deciding, recording and MCP cost over those hops)",
        g50.as_secs_f64() / f50.as_secs_f64()
    );
    if let ((Some(hosted_0), Some(alone_0)), (Some(hosted_1), Some(alone_1))) = (cpu_before, cpu_after) {
        let per_call = |before: Duration, after: Duration| after.saturating_sub(before) / 1000;
        println!(
            "SUMMARY mcp: CPU a call (the kernel's count): the hosted gateway (the console's link thread) {:.1?}, the gateway deciding alone (its whole process) {:.1?}",
            per_call(hosted_0, hosted_1),
            per_call(alone_0, alone_1)
        );
    }
    // Each path 1,000 times back to back, nothing else between two calls:
    // what a call costs while its code and data are still in the caches.
    let back_to_back = |client: &Client| {
        let mut times = Vec::with_capacity(1000);
        for _ in 0..1000 {
            let start = Instant::now();
            runtime.block_on(echo(client));
            times.push(start.elapsed());
        }
        percentile(&mut times, 0.5)
    };
    let direct_warm = back_to_back(&direct);
    let link_before = link_thread.as_deref().map(cpu_time);
    let gateway_warm = back_to_back(&gateway);
    if let (Some(link), Some(before)) = (link_thread.as_deref(), link_before) {
        println!(
            "SUMMARY mcp: back to back (nothing between two calls): direct p50 {direct_warm:.2?}, the hosted gateway p50 {gateway_warm:.2?} = {:.2}x, its CPU a call {:.1?}",
            gateway_warm.as_secs_f64() / direct_warm.as_secs_f64(),
            cpu_time(link).saturating_sub(before) / 1000
        );
    }
    runtime.block_on(async {
        let _ = floor.cancel().await;
        let _ = direct.cancel().await;
        let _ = gateway.cancel().await;
        let _ = relay.cancel().await;
        let _ = alone.cancel().await;
    });
    stop.cancel();
}
