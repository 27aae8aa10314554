//! The web page's answer path against the terminal's key path, in the same
//! run (docs/web.md, docs/performance.md): the time from an Approve POST
//! to the agent's outcome, and from a `y` pressed on an attached console to
//! the agent's outcome. One `tether serve --headless --web --attach`
//! serves both; the agent is `tether send` with one asked call; each pair
//! times one call answered each way, alternating which goes first. The
//! clock starts when the answer leaves (the POST is sent, the key is
//! written to the attach socket) and stops when the agent prints its
//! outcome.
//!
//! Then the throughput with a web device watching against headless
//! (support/watching.rs), and the interactive console's with `--web`
//! against without (support/interactive.rs; `-- interactive` runs it alone).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "support/paired.rs"]
mod paired;
use paired::Paired;
#[path = "support/interactive.rs"]
mod interactive;
#[path = "support/watching.rs"]
mod watching;

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

const PAIRS: usize = 15;

pub const TETHER: &str = env!("CARGO_BIN_EXE_tether");

struct Serve {
    child: Child,
    socket: PathBuf,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The batch file of one asked call `id`.
fn batch(dir: &Path, id: &str) -> PathBuf {
    let path = dir.join(format!("{id}.json"));
    let batch = json!({"session": {"session_id": "bench"}, "tools": [{"name": "poke", "body": {"return": 1}}],
                       "calls": [{"id": id, "name": "poke", "arguments": "{}"}]});
    std::fs::write(&path, batch.to_string()).unwrap();
    path
}

/// `tether send` with the call `id`, and the receiver of its outcome line.
fn agent(serve: &Serve, id: &str) -> (Child, mpsc::Receiver<Instant>) {
    let mut child = Command::new(TETHER)
        .arg("send")
        .arg(batch(serve._dir.path(), id))
        .arg("--socket")
        .arg(&serve.socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, outcome) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let _ = sender.send(Instant::now());
    });
    (child, outcome)
}

fn main() {
    // `cargo bench --bench web -- interactive`: that part alone.
    if std::env::args().any(|a| a == "interactive") {
        interactive::run();
        return;
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("ask.json");
    std::fs::write(
        &policy,
        r#"{"rules": [{"id": "ask", "stage": "pre-execute", "match": {"tool": "poke"}, "action": {"type": "ask"}}]}"#,
    )
    .unwrap();
    let socket = dir.path().join("c.sock");
    let port = free_port();
    let mut child = Command::new(TETHER)
        .args([
            "serve",
            "--headless",
            "--answer",
            "attached",
            "--attach",
            "--notify",
            "none",
        ])
        .arg("--socket")
        .arg(&socket)
        .arg("--policy")
        .arg(&policy)
        .args(["--web", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // The first code pairs the web device, the next attaches the console.
    let mut next_code = move || loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve ended");
        if let Some(rest) = line.strip_prefix("attach code ") {
            return rest[..6].to_owned();
        }
    };
    let pair_code = next_code();
    let serve = Serve {
        child,
        socket,
        base: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    };
    let paired = Command::new(TETHER)
        .args(["web", "pair", "--code", &pair_code, "--socket"])
        .arg(&serve.socket)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&paired.stdout);
    let link = said.lines().find(|l| l.starts_with("http")).unwrap().to_owned();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let token = link.rsplit('/').next().unwrap().to_owned();
    let cookie = rt.block_on(async {
        let response = http
            .post(format!("{}/pair", serve.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("sec-fetch-site", "same-origin")
            .body(format!("token={token}&name=bench"))
            .send()
            .await
            .unwrap();
        let set = response.headers()["set-cookie"].to_str().unwrap().to_owned();
        set[..set.find(';').unwrap()].to_owned()
    });

    // An attached console, its frames read on a thread of their own.
    let code = next_code();
    let stream = UnixStream::connect(tether_console::tui::remote::attach_path(&serve.socket)).unwrap();
    let mut keys = stream.try_clone().unwrap();
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "console/attach",
                       "params": {"code": code, "tty": "bench", "view": false, "cols": 160, "rows": 48}});
    writeln!(keys, "{hello}").unwrap();
    let (frames_to, frames) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if frames_to.send(line).is_err() {
                break;
            }
        }
    });
    let key = json!({"jsonrpc": "2.0", "method": "screen/input",
                     "params": {"event": Event::Key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE))}});

    let mut n = 0;
    let mut web = |serve: &Serve| -> Duration {
        n += 1;
        let id = format!("w{n}");
        let (mut child, outcome) = agent(serve, &id);
        let binding = rt.block_on(async {
            loop {
                let page = http
                    .get(format!("{}/", serve.base))
                    .header("cookie", &cookie)
                    .send()
                    .await
                    .unwrap();
                let html = page.text().await.unwrap();
                if html.contains(&format!("call {id}<")) {
                    let at = html.find("name=\"b\" value=\"").unwrap() + 16;
                    return html[at..at + html[at..].find('"').unwrap()].to_owned();
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        let started = Instant::now();
        rt.block_on(async {
            let answered = http
                .post(format!("{}/answer", serve.base))
                .header("cookie", &cookie)
                .header("sec-fetch-site", "same-origin")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!("b={binding}&decision=approve"))
                .send()
                .await
                .unwrap();
            assert_eq!(answered.status().as_u16(), 200);
        });
        let done = outcome.recv().unwrap();
        child.wait().unwrap();
        done - started
    };
    let mut m = 0;
    let mut terminal = |serve: &Serve| -> Duration {
        m += 1;
        let id = format!("k{m}");
        let (mut child, outcome) = agent(serve, &id);
        // Waiting, as the page shows (a frame sends only the cells that
        // changed, so the id is not found whole in one).
        rt.block_on(async {
            while !http
                .get(format!("{}/", serve.base))
                .header("cookie", &cookie)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
                .contains(&format!("call {id}<"))
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        // The console ignores answer keys for 400 ms after a request
        // reaches the screen (tether_console::tui::app::ANSWER_GUARD).
        std::thread::sleep(tether_console::tui::app::ANSWER_GUARD + Duration::from_millis(100));
        while frames.try_recv().is_ok() {}
        let started = Instant::now();
        writeln!(keys, "{key}").unwrap();
        let done = outcome.recv().unwrap();
        child.wait().unwrap();
        done - started
    };
    let mut first_web = true;
    let result = Paired::run(PAIRS, || {
        first_web = !first_web;
        if first_web {
            let w = web(&serve);
            (w, terminal(&serve))
        } else {
            let t = terminal(&serve);
            (web(&serve), t)
        }
    });
    let (q1, q3) = result.quartiles();
    drop(serve);
    watching::run(&rt);
    println!(
        "web: Approve POST to the agent's outcome, p50 {:.2} ms; terminal key (attached console) to the agent's outcome, p50 {:.2} ms; per-pair ratio web/key median {:.2}× (quartiles {q1:.2}–{q3:.2}), {PAIRS} pairs",
        result.first.as_secs_f64() * 1e3,
        result.second.as_secs_f64() * 1e3,
        result.ratio(),
    );
    interactive::run();
}
