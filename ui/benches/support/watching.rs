//! The console's throughput with a web device watching against headless
//! (`cargo bench --bench web`): batches of 2,000 calls the policy allows,
//! sent by `tether send`, against `tether serve --headless` and against
//! `tether serve --headless --web` with a paired device's live updates
//! (`/events`) open and read, the two alternating and each pair's order
//! swapped; and the console's own CPU a call on each side.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::paired::Paired;
use super::{TETHER, free_port};

/// Calls in a throughput batch, and batches (pairs of blocks) timed.
pub const CALLS: usize = 2_000;
pub const BLOCKS: usize = 51;

/// A policy that allows every call, in `dir`.
pub fn allow_all(dir: &Path) -> PathBuf {
    let policy = dir.join("allow.json");
    std::fs::write(&policy, r#"{"default": "allow", "rules": []}"#).unwrap();
    policy
}

/// The batch file of [`CALLS`] calls of a tool that returns at once, in `dir`.
pub fn noop_batch(dir: &Path) -> PathBuf {
    let calls: Vec<_> = (0..CALLS)
        .map(|i| json!({"id": format!("c{i}"), "name": "noop", "arguments": "{}"}))
        .collect();
    let batch = dir.join("batch.json");
    let text =
        json!({"session": {"session_id": "bench"}, "tools": [{"name": "noop", "body": {"return": 1}}], "calls": calls});
    std::fs::write(&batch, text.to_string()).unwrap();
    batch
}

/// `tether serve --headless --policy allow-all.json` (and `extra`) on a
/// socket in `dir`, once it listens.
fn serve_allowing(dir: &Path, name: &str, extra: &[String]) -> (Child, PathBuf) {
    let policy = allow_all(dir);
    let socket = dir.join(format!("{name}.sock"));
    let mut child = Command::new(TETHER)
        .args(["serve", "--headless", "--socket"])
        .arg(&socket)
        .arg("--policy")
        .arg(&policy)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("listening"), "{first}");
    // Its outcome lines are read, as whatever runs it headless reads them
    // (a pipe left full would stop serve printing, and its cost).
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    (child, socket)
}

/// The CPU time `pid` used so far (user and system), in clock ticks.
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's `(name)`: utime and stime are the 12th and 13th.
    let after = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12)
}

/// One batch of [`CALLS`] allowed calls through `tether send`: its time;
/// the CPU the console (`pid`) spent on it is added to `cpu`.
pub fn throughput_batch(batch: &Path, socket: &Path, (pid, cpu): (u32, &mut u64)) -> Duration {
    let before = cpu_ticks(pid);
    let started = Instant::now();
    let status = Command::new(TETHER)
        .arg("send")
        .arg(batch)
        .arg("--socket")
        .arg(socket)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let took = started.elapsed();
    *cpu += cpu_ticks(pid) - before;
    took
}

/// Throughput with a web device watching against headless.
pub fn run(rt: &tokio::runtime::Runtime) {
    let dir = tempfile::tempdir().unwrap();
    let batch = noop_batch(dir.path());
    let (mut plain, plain_socket) = serve_allowing(dir.path(), "plain", &[]);
    let port = free_port();
    let web_args = vec!["--web".to_owned(), format!("127.0.0.1:{port}")];
    let (mut web, web_socket) = serve_allowing(dir.path(), "web", &web_args);
    let mut stderr = BufReader::new(web.stderr.take().unwrap());
    let code = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve ended");
        if let Some(rest) = line.strip_prefix("pairing code ") {
            break rest[..6].to_owned();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let base = format!("http://127.0.0.1:{port}");
    let paired = Command::new(TETHER)
        .args(["web", "pair", "--code", &code, "--socket"])
        .arg(&web_socket)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&paired.stdout);
    let token = said
        .lines()
        .find(|l| l.starts_with("http"))
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let cookie = rt.block_on(async {
        let response = http
            .post(format!("{base}/pair"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("sec-fetch-site", "same-origin")
            .body(format!("token={token}&name=watcher"))
            .send()
            .await
            .unwrap();
        let set = response.headers()["set-cookie"].to_str().unwrap().to_owned();
        set[..set.find(';').unwrap()].to_owned()
    });
    // The device's live updates stay open, and are read, while the batches
    // run (on a thread of their own, as a phone reads them).
    let (opened, open) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut events = reqwest::Client::new()
                .get(format!("{base}/events"))
                .header("cookie", &cookie)
                .send()
                .await
                .unwrap();
            opened.send(events.status().as_u16()).unwrap();
            let mut read = 0;
            while let Ok(Some(chunk)) = events.chunk().await {
                read += chunk.len();
            }
            read
        })
    });
    assert_eq!(open.recv().unwrap(), 200, "the page's live updates are open");
    let (plain_pid, web_pid) = (plain.id(), web.id());
    let (mut plain_cpu, mut web_cpu) = (0, 0);
    let _ = throughput_batch(&batch, &plain_socket, (plain_pid, &mut plain_cpu));
    let _ = throughput_batch(&batch, &web_socket, (web_pid, &mut web_cpu));
    let (mut plain_cpu, mut web_cpu) = (0, 0);
    // Which side goes first alternates, so neither is always the warmer.
    let mut web_first = false;
    let result = Paired::run(BLOCKS, || {
        web_first = !web_first;
        if web_first {
            let watched = throughput_batch(&batch, &web_socket, (web_pid, &mut web_cpu));
            (
                throughput_batch(&batch, &plain_socket, (plain_pid, &mut plain_cpu)),
                watched,
            )
        } else {
            let headless = throughput_batch(&batch, &plain_socket, (plain_pid, &mut plain_cpu));
            (headless, throughput_batch(&batch, &web_socket, (web_pid, &mut web_cpu)))
        }
    });
    // The console's own CPU a call, which the machine's other load hardly
    // moves (the wall-clock figures above it do).
    let tick_us = 1e6 / 100.0;
    let per_call = |ticks: u64| ticks as f64 * tick_us / (BLOCKS * CALLS) as f64;
    println!(
        "web: the console's CPU a call, with a web device watching {:.2} µs, headless {:.2} µs: {:.3}× ({BLOCKS} batches each, clock ticks of 10 ms)",
        per_call(web_cpu),
        per_call(plain_cpu),
        per_call(web_cpu) / per_call(plain_cpu).max(f64::MIN_POSITIVE),
    );
    let (q1, q3) = result.quartiles();
    let per_sec = |d: Duration| CALLS as f64 / d.as_secs_f64();
    println!(
        "web: throughput with a web device watching {:.0} calls/s, headless {:.0} calls/s: {:.3}× headless (medians); per-pair throughput ratio watched/headless median {:.3}, quartiles {q1:.3}–{q3:.3}; {BLOCKS} pairs of {CALLS}-call batches",
        per_sec(result.second),
        per_sec(result.first),
        result.first.as_secs_f64() / result.second.as_secs_f64(),
        result.ratio(),
    );
    for child in [&mut plain, &mut web] {
        let _ = child.kill();
        let _ = child.wait();
    }
    // The stream ends with the console.
    let _ = reader.join();
}
