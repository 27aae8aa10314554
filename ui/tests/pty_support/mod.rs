//! The pseudo-terminal harness the end-to-end tests share: the console is
//! started as a person would start it, keys go in, the screen is parsed back
//! with vt100 one whole frame at a time.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::Value;

pub mod replays;
pub mod served;
#[allow(unused_imports)]
pub use replays::{bash_calls, replay_written, shell_scenario};
#[allow(unused_imports)]
pub use served::{Served, asking, strings};

/// The terminal the tests use unless they say otherwise: rows, columns.
pub const SIZE: (u16, u16) = (40, 140);

pub struct Console {
    pub screen: Arc<Mutex<vt100::Parser>>,
    pub writer: Box<dyn Write + Send>,
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    pub master: Box<dyn portable_pty::MasterPty + Send>,
    /// Ends once the console's side of the terminal is closed and every
    /// byte it wrote has reached `screen`.
    pub reader: std::thread::JoinHandle<()>,
    pub _dir: tempfile::TempDir,
    pub journal: PathBuf,
}

pub fn demo(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../demos")
        .join(name)
        .display()
        .to_string()
}

/// The console writes each frame between synchronized-update marks; the
/// screen the tests read takes a frame only once it is whole, so no
/// assertion ever sees half of one (which under load it did).
#[derive(Default)]
pub struct Frames {
    pending: Vec<u8>,
    in_frame: bool,
}

pub const BEGIN_FRAME: &[u8] = b"\x1b[?2026h";
pub const END_FRAME: &[u8] = b"\x1b[?2026l";

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Frames {
    pub fn feed(&mut self, bytes: &[u8], parser: &Mutex<vt100::Parser>) {
        self.pending.extend_from_slice(bytes);
        loop {
            if self.in_frame {
                let Some(at) = find(&self.pending, END_FRAME) else {
                    return;
                };
                let end = at + END_FRAME.len();
                parser.lock().unwrap().process(&self.pending[..end]);
                self.pending.drain(..end);
                self.in_frame = false;
            } else if let Some(at) = find(&self.pending, BEGIN_FRAME) {
                parser.lock().unwrap().process(&self.pending[..at]);
                self.pending.drain(..at);
                self.in_frame = true;
            } else {
                // Output outside frames (the shell's own) goes through at
                // once, but for a tail that may be the start of a mark.
                let keep = (1..BEGIN_FRAME.len())
                    .rev()
                    .find(|&k| self.pending.len() >= k && self.pending.ends_with(&BEGIN_FRAME[..k]))
                    .unwrap_or(0);
                let upto = self.pending.len() - keep;
                parser.lock().unwrap().process(&self.pending[..upto]);
                self.pending.drain(..upto);
                return;
            }
        }
    }
}

/// What the prompt's title shows while answer keys are ignored.
pub const NEW_REQUEST: &str = "◆ new request";

/// What `q` asks when quitting would end something.
pub const QUIT_QUESTION: &str = "Quit Tether?";

/// Generous for a debug build on two loaded cores: a wait ends as soon as the
/// screen shows what it waits for, so this only bounds a real failure.
pub const DEADLINE: Duration = Duration::from_secs(30);

impl Console {
    pub fn start(extra: &[&str]) -> Console {
        let mut args = vec![
            "replay".to_owned(),
            demo("quickstart.json"),
            "--policy".to_owned(),
            demo("quickstart.policy.json"),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let console = Console::spawn(&args, true);
        console.wait_for("press r to run the next");
        console
    }

    pub fn spawn(args: &[String], with_journal: bool) -> Console {
        Console::spawn_under(None, args, with_journal)
    }

    /// Like [`Console::spawn`], run by `shell` (a command line that gets the
    /// console's path and arguments as `$0 "$@"`).
    pub fn spawn_under(shell: Option<&str>, args: &[String], with_journal: bool) -> Console {
        Console::spawn_sized(shell, args, with_journal, SIZE)
    }

    /// Like [`Console::spawn_under`], in a terminal of `(rows, cols)`.
    pub fn spawn_sized(shell: Option<&str>, args: &[String], with_journal: bool, (rows, cols): (u16, u16)) -> Console {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = match shell {
            Some(script) => {
                let mut cmd = CommandBuilder::new("bash");
                cmd.args(["--norc", "--noprofile", "-c", script, env!("CARGO_BIN_EXE_tether")]);
                cmd
            }
            None => CommandBuilder::new(env!("CARGO_BIN_EXE_tether")),
        };
        cmd.args(args);
        if with_journal {
            cmd.args(["--journal", journal.to_str().unwrap()]);
        }
        cmd.args(["--log-dir", dir.path().to_str().unwrap()]);
        cmd.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let parser = Arc::clone(&screen);
        let reader = std::thread::spawn(move || {
            let mut frames = Frames::default();
            let mut buf = [0_u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                frames.feed(&buf[..n], &parser);
            }
        });
        Console {
            screen,
            writer,
            child,
            master: pair.master,
            reader,
            _dir: dir,
            journal,
        }
    }

    /// Resizes the terminal as a window manager would: the screen the test
    /// reads first, then the pty, which sends the console `SIGWINCH`.
    pub fn resize(&self, rows: u16, cols: u16) {
        self.screen.lock().unwrap().set_size(rows, cols);
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    pub fn contents(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    pub fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let screen = self.contents();
            if ok(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(text, |s| s.contains(text))
    }

    /// Waits for the approval prompt of `call` itself. The batch's row and
    /// the detail pane name a call a frame or more before its request is
    /// asked, and a key typed then goes to the pane, not to the prompt: a
    /// test that waited for the call id alone typed into the batch pane
    /// under load (`pty_prompt.rs`, seen failing).
    pub fn wait_for_prompt(&self, call: &str) -> String {
        let field = format!("Call      {call}");
        self.wait_until(&format!("the prompt of {call}"), |s| {
            s.contains("Approval 1 of") && s.contains(&field)
        })
    }

    pub fn wait_gone(&self, text: &str) -> String {
        self.wait_until(&format!("{text} to go"), |s| !s.contains(text))
    }

    /// Types, as a person would: not while a request that just reached the
    /// screen is highlighted (the console ignores answer keys then).
    pub fn keys(&mut self, bytes: &str) {
        self.wait_gone(NEW_REQUEST);
        self.keys_now(bytes);
    }

    /// Types at once, even over a request that just arrived.
    pub fn keys_now(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    pub fn quit(self) -> Vec<Value> {
        self.quit_to_normal_screen().0
    }

    /// Waits for a console that ends by itself (an attached one whose serve
    /// stopped) and returns its exit and the screen it left.
    pub fn quit_after_serve(self) -> (u32, vt100::Screen) {
        let Console {
            mut child,
            screen,
            reader,
            master,
            ..
        } = self;
        let deadline = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the attached console did not end");
            std::thread::sleep(Duration::from_millis(25));
        };
        while !reader.is_finished() {
            assert!(Instant::now() < deadline, "its terminal was never closed");
            std::thread::sleep(Duration::from_millis(25));
        }
        reader.join().unwrap();
        drop(master);
        let screen = screen.lock().unwrap().screen().clone();
        (status.exit_code(), screen)
    }

    /// Quits, waits until the console's last byte is on the screen, and
    /// returns the journal and the screen the shell is left with.
    pub fn quit_to_normal_screen(mut self) -> (Vec<Value>, vt100::Screen) {
        self.keys("q");
        let deadline = Instant::now() + DEADLINE;
        let mut confirmed = false;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status:?}");
                break;
            }
            // With approvals waiting or agents connected, `q` asks first.
            if !confirmed && self.contents().contains(QUIT_QUESTION) {
                confirmed = true;
                self.keys_now("q");
            }
            assert!(
                Instant::now() < deadline,
                "the console did not exit:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
        let journal = std::fs::read_to_string(&self.journal)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let Console {
            screen, reader, master, ..
        } = self;
        // Reading ends when the console's side of the pty is closed; the
        // master is kept until then so no byte is lost.
        let deadline = Instant::now() + DEADLINE;
        while !reader.is_finished() {
            assert!(Instant::now() < deadline, "the console's terminal was never closed");
            std::thread::sleep(Duration::from_millis(25));
        }
        reader.join().unwrap();
        drop(master);
        let screen = screen.lock().unwrap().screen().clone();
        (journal, screen)
    }
}

pub fn result<'a>(journal: &'a [Value], call_id: &str) -> &'a Value {
    journal
        .iter()
        .find(|e| e["event"] == "tool/result" && e["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no result for {call_id} in {journal:#?}"))
}

/// Runs the reads, then starts the writes batch and waits for its prompt.
pub fn to_first_prompt(console: &mut Console) {
    console.keys("r");
    // `r` is taken again once the batch has finished, not when its last
    // outcome is drawn (the journal may still be writing it).
    console.wait_for("batch 1 finished");
    console.keys("r");
    // The key lines are the prompt's last rows: once they are on screen, the
    // whole prompt is (a frame can be read half-drawn).
    console.wait_until("the whole prompt", |s| {
        s.contains("Approval 1 of 1") && s.contains("(or a wider rule)")
    });
}

/// The outcome an agent (`tether send`) printed for its one call.
pub fn outcome(child: std::process::Child) -> Value {
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|o| o.get("call_id").is_some())
        .unwrap_or_else(|| panic!("no outcome in {stdout:?}"))
}
