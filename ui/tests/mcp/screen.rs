//! The console in a pseudo-terminal (a real `tether serve`, keys in, the
//! screen parsed back with `vt100`) and a client whose observations are read
//! as it prints them: for the tests where the human acts in the console
//! while an MCP client waits.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::Value;

use super::support::Setup;

const DEADLINE: Duration = Duration::from_secs(30);

pub fn journal_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The journal's result of each call of `tool`, in order.
pub fn results_of(journal: &Path, tool: &str) -> Vec<Value> {
    journal_text(journal)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "tool/result" && e["name"] == tool)
        .collect()
}

/// The console in a pseudo-terminal: keys in, the screen parsed back.
pub struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Box<dyn std::io::Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

const BEGIN_FRAME: &[u8] = b"\x1b[?2026h";
const END_FRAME: &[u8] = b"\x1b[?2026l";

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Screen {
    pub fn serve(dir: &Path, socket: &Path, journal: &Path) -> Screen {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 140,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_tether"));
        cmd.arg("serve");
        cmd.arg("--socket");
        cmd.arg(socket);
        cmd.arg("--journal");
        cmd.arg(journal);
        cmd.arg("--log-dir");
        cmd.arg(dir);
        // Only the pinning rules ask: calls no rule decides run.
        cmd.arg("--policy");
        cmd.arg(super::support::write_policy(dir, &serde_json::json!([])));
        cmd.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(40, 140, 0)));
        let screen = Arc::clone(&parser);
        std::thread::spawn(move || {
            let _master = pair.master;
            // Whole frames only (they come between synchronized-update
            // marks), so no assertion reads half of one.
            let (mut pending, mut in_frame) = (Vec::new(), false);
            let mut buf = [0_u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                pending.extend_from_slice(&buf[..n]);
                loop {
                    let mark = if in_frame { END_FRAME } else { BEGIN_FRAME };
                    let Some(at) = find(&pending, mark) else { break };
                    let end = if in_frame { at + mark.len() } else { at };
                    screen.lock().unwrap().process(&pending[..end]);
                    pending.drain(..end);
                    if !in_frame {
                        pending.drain(..mark.len());
                        screen.lock().unwrap().process(mark);
                    }
                    in_frame = !in_frame;
                }
            }
        });
        Screen { parser, writer, child }
    }

    pub fn contents(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    pub fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let screen = self.contents();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {text:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Types as a person would: not while a request that just reached the
    /// screen is highlighted (the console ignores answer keys then).
    pub fn keys(&mut self, keys: &str) {
        let deadline = Instant::now() + DEADLINE;
        while self.contents().contains("◆ new request") {
            assert!(Instant::now() < deadline, "the new request stayed highlighted");
            std::thread::sleep(Duration::from_millis(25));
        }
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The client's observations, line by line, as it prints them.
pub fn spawn_client(s: &Setup, scenario: &str, args: &[&str], server: &[String]) -> (Child, mpsc::Receiver<Value>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut command = vec![
        "/usr/bin/env".to_owned(),
        format!("MARK_DIR={}", s.dir.path().display()),
    ];
    command.extend(server.iter().cloned());
    let mut child = Command::new(&s.tools.python)
        .arg(script)
        .arg(scenario)
        .args(args)
        .arg("--")
        .args(&command)
        .env("XDG_STATE_HOME", s.dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str(&line).unwrap_or(Value::String(line)));
        }
    });
    (child, rx)
}

/// The next line of `kind` the client prints (earlier ones of other kinds skipped).
pub fn next_seen(lines: &mpsc::Receiver<Value>, kind: &str, client: &mut Child) -> Value {
    loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line["kind"] == kind => return line,
            Ok(line) if ["initialize", "tools"].contains(&line["kind"].as_str().unwrap_or_default()) => {}
            other => {
                let _ = client.kill();
                let mut stderr = String::new();
                let _ = client.stderr.take().unwrap().read_to_string(&mut stderr);
                panic!("expected {kind}, got {other:?}; the client's stderr:\n{stderr}");
            }
        }
    }
}
