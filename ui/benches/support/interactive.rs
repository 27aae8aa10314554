//! The interactive console's throughput with `--web` against without
//! (`cargo bench --bench web`): `tether serve` drawing its screen in a
//! pseudo-terminal (200×50, read as a terminal reads it), once plain and
//! once with `--web` and no page open, batches of 2,000 calls the policy
//! allows sent by `tether send`, the two alternating and each pair's order
//! swapped; and the console's own CPU a call on each side.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use super::paired::Paired;
use super::watching::{BLOCKS, CALLS, allow_all, noop_batch, throughput_batch};
use super::{TETHER, free_port};

/// `tether serve` in a pseudo-terminal of its own.
struct Console {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
    socket: PathBuf,
    pid: u32,
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Console {
    /// `tether serve --socket DIR/NAME.sock --policy allow-all.json EXTRA`,
    /// drawing into a pseudo-terminal whose output is read (and dropped),
    /// once its socket takes connections.
    fn serve(dir: &Path, name: &str, extra: &[String]) -> Console {
        let socket = dir.join(format!("{name}.sock"));
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 50,
                cols: 200,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(TETHER);
        cmd.arg("serve");
        cmd.arg("--socket");
        cmd.arg(&socket);
        cmd.arg("--policy");
        cmd.arg(allow_all(dir));
        cmd.arg("--log-dir");
        cmd.arg(dir.join(name));
        cmd.args(extra);
        cmd.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0_u8; 16 * 1024];
            while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
        });
        let pid = child.process_id().unwrap();
        let started = Instant::now();
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "{name} never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Console {
            child,
            _master: pair.master,
            socket,
            pid,
        }
    }
}

/// Throughput of the interactive console with `--web` against without.
pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let batch = noop_batch(dir.path());
    let plain = Console::serve(dir.path(), "plain", &[]);
    let web_args = vec!["--web".to_owned(), format!("127.0.0.1:{}", free_port())];
    let web = Console::serve(dir.path(), "web", &web_args);
    let (mut plain_cpu, mut web_cpu) = (0, 0);
    let _ = throughput_batch(&batch, &plain.socket, (plain.pid, &mut plain_cpu));
    let _ = throughput_batch(&batch, &web.socket, (web.pid, &mut web_cpu));
    let (mut plain_cpu, mut web_cpu) = (0, 0);
    // Which side goes first alternates, so neither is always the warmer.
    let mut web_first = false;
    // `TETHER_BENCH_PAIRS=5` for a quick look.
    let pairs = std::env::var("TETHER_BENCH_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(BLOCKS);
    let result = Paired::run(pairs, || {
        web_first = !web_first;
        if web_first {
            let with_web = throughput_batch(&batch, &web.socket, (web.pid, &mut web_cpu));
            (
                throughput_batch(&batch, &plain.socket, (plain.pid, &mut plain_cpu)),
                with_web,
            )
        } else {
            let without = throughput_batch(&batch, &plain.socket, (plain.pid, &mut plain_cpu));
            (without, throughput_batch(&batch, &web.socket, (web.pid, &mut web_cpu)))
        }
    });
    let tick_us = 1e6 / 100.0;
    let per_call = |ticks: u64| ticks as f64 * tick_us / (pairs * CALLS) as f64;
    println!(
        "web: the interactive console's CPU a call, with --web {:.2} µs, without {:.2} µs: {:.3}× ({pairs} batches each, clock ticks of 10 ms)",
        per_call(web_cpu),
        per_call(plain_cpu),
        per_call(web_cpu) / per_call(plain_cpu).max(f64::MIN_POSITIVE),
    );
    let (q1, q3) = result.quartiles();
    let per_sec = |d: Duration| CALLS as f64 / d.as_secs_f64();
    println!(
        "web: the interactive console's throughput with --web {:.0} calls/s, without {:.0} calls/s: {:.3}× (medians); per-pair throughput ratio with/without median {:.3}, quartiles {q1:.3}–{q3:.3}; {pairs} pairs of {CALLS}-call batches",
        per_sec(result.second),
        per_sec(result.first),
        result.first.as_secs_f64() / result.second.as_secs_f64(),
        result.ratio(),
    );
}
