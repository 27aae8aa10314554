//! Engine throughput with two consoles attached (`tether serve --headless
//! --attach`, two `tether attach`) against headless (docs/attach.md). The
//! attached side is the serving process's own: the session's events go to
//! the screen hub, the attach door serves each console over a Unix socket
//! (an `App` drawn by the event loop, its frames encoded onto the socket),
//! and two clients read the frames as `tether attach` does. Batches of
//! 2,000 no-op calls run 50 back to back (a second or so), headless and
//! attached blocks alternating. A block is timed until its last batch is
//! done: what the consoles have not drawn yet then (at most a frame's
//! worth) is drawn during the next block, a headless one, which it can only
//! slow down; waiting for their next frame instead would time the frame
//! pacing (up to 250 ms), not the throughput. At the end both consoles must
//! have drawn the last block, or the bench fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "support/attached.rs"]
mod attached;
#[path = "support/noops.rs"]
mod noops;
use noops::noop_batch;

#[path = "support/paired.rs"]
mod paired;
use paired::Paired;
use std::hint::black_box;
use std::io::{BufRead as _, BufReader, Write as _};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;
use tether_console::session::events::{AppEvent, AppEventSender};
use tether_console::session::observer;
use tether_console::session::replay::Session;
use tether_console::session::screens::ScreenHub;
use tether_console::tui::app::{App, HeaderInfo, ScopeEntry, ScreenRole};
use tether_console::tui::remote::{self, AttachDoor};
use tokio_util::sync::CancellationToken;

/// Batches run back to back in one sample.
const BLOCK: usize = 50;

/// Calls in a batch.
const CALLS: usize = 2_000;

/// Consoles attached.
const CONSOLES: usize = 2;

/// The end of a block, as a line of the events pane: its letters alternate
/// block by block, so the frame that shows one redraws all of them (only
/// changed cells are sent) and a client can find it in the bytes.
fn marker(block: usize) -> String {
    let letter = if block % 2 == 0 { 'Q' } else { 'Z' };
    std::iter::repeat_n(letter, 24).collect()
}

/// One attached console's terminal: sends the hello, then reads frames
/// until the socket closes, reporting each marker it sees drawn.
fn client(path: std::path::PathBuf, code: String, seen: mpsc::Sender<(usize, String)>, n: usize) {
    let stream = std::os::unix::net::UnixStream::connect(path).unwrap();
    let mut write = stream.try_clone().unwrap();
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "console/attach",
                       "params": {"code": code, "tty": format!("bench{n}"), "view": false, "cols": 200, "rows": 60}});
    writeln!(write, "{hello}").unwrap();
    let mut lines = BufReader::new(stream).lines();
    let welcome = lines.next().unwrap().unwrap();
    assert!(welcome.contains("\"result\""), "attached: {welcome}");
    let (even, odd) = (marker(0), marker(1));
    for line in lines {
        let Ok(line) = line else { break };
        for wanted in [&even, &odd] {
            if line.contains(wanted.as_str()) {
                let _ = seen.send((n, wanted.clone()));
            }
        }
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let headless = Session::new(noop_batch(CALLS, 16), None).unwrap();

    // The serving side, as `tether serve --headless --attach` builds it.
    let attached = Arc::new(Session::new(noop_batch(CALLS, 16), None).unwrap());
    let (events, receiver) = AppEventSender::new();
    let _handles = observer::attach(&attached.registry, &events);
    let dir = tempfile::tempdir().unwrap();
    let socket = remote::attach_path(&dir.path().join("console.sock"));
    let stop = CancellationToken::new();
    let (door, hub) = rt.block_on(async {
        let hub = ScreenHub::spawn(receiver);
        let registry = attached.registry.clone();
        let decisions = attached.log.clone();
        let make_screen: remote::MakeScreen = Box::new(move |name, read_only| {
            let mut app = App::new(
                registry.clone(),
                vec![ScopeEntry::global()],
                HeaderInfo::default(),
                Instant::now(),
            );
            app.me = name;
            app.role = ScreenRole::Attached { read_only };
            app.decisions = Some(decisions.clone());
            app
        });
        let door =
            Arc::new(AttachDoor::new(hub.clone(), None, events.clone(), make_screen, Arc::new(|_, _| {})).unwrap());
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        tokio::spawn(remote::serve(Arc::clone(&door), listener, stop.clone()));
        (door, hub)
    });
    let (seen_tx, seen) = mpsc::channel();
    let mut clients = Vec::new();
    for n in 0..CONSOLES {
        // Each attach uses the code once; the door draws the next.
        let code = door.code().unwrap();
        let (path, seen_tx) = (socket.clone(), seen_tx.clone());
        clients.push(std::thread::spawn(move || client(path, code, seen_tx, n)));
        // Set-up only: the next attach needs the code drawn after this one.
        while hub.screens() < n + 1 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    let run_headless = || {
        rt.block_on(async {
            black_box(headless.run_batch(0, None).await);
        })
    };
    let mut batch_number = 0;
    let mut run_attached = || {
        batch_number += 1;
        rt.block_on(attached::run_attached(&attached, batch_number, CALLS, &events))
    };
    let mut blocks = 0;
    let mut run_block = |with_consoles: bool| {
        let start = Instant::now();
        for _ in 0..BLOCK {
            if with_consoles {
                run_attached();
            } else {
                run_headless();
            }
        }
        let elapsed = start.elapsed();
        if with_consoles {
            blocks += 1;
            events.send(AppEvent::Note(marker(blocks)));
        }
        elapsed
    };
    run_block(false);
    run_block(true);
    let pairs: usize = std::env::var("TETHER_PAIRS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(15);
    let paired = Paired::run(pairs, || (run_block(false), run_block(true)));
    let (plain, with_consoles) = (paired.first, paired.second);
    let (low, high) = paired.quartiles();
    let calls = (CALLS * BLOCK) as f64;
    println!(
        "SUMMARY console: blocks of {BLOCK} batches of {CALLS} calls: headless median {plain:.3?} ({:.0} calls/s), {CONSOLES} attached consoles {with_consoles:.3?} ({:.0} calls/s, drawn as they come); paired median {:.2}x, quartiles {:.2}x-{:.2}x (goal: at least 0.95x)",
        calls / plain.as_secs_f64(),
        calls / with_consoles.as_secs_f64(),
        paired.ratio(),
        low,
        high,
    );
    println!(
        "SUMMARY console: two attached consoles = {:.2}x of headless",
        paired.ratio()
    );
    // Both consoles kept up: each drew the last block's marker.
    let last = marker(blocks);
    let mut drawn = [false; CONSOLES];
    while !drawn.iter().all(|d| *d) {
        let (n, text) = seen
            .recv_timeout(Duration::from_secs(60))
            .expect("both consoles drew the last block");
        drawn[n] |= text == last;
    }
    stop.cancel();
    drop(events);
    for client in clients {
        let _ = client.join();
    }
}
