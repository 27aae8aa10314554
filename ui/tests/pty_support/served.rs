//! `tether serve` as the end-to-end tests start it, on a socket in a
//! directory of its own, and `tether send` to it: one fixture for every
//! test that serves, in a terminal or headless.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};

use super::Console;

/// Where a served console runs: a pseudo-terminal, or headless.
pub enum Run {
    /// `tether serve …` in a pseudo-terminal, its screen parsed.
    Console(Console),
    /// `tether serve --headless …`, its stdout read line by line.
    Headless(Headless),
}

/// A headless `tether serve`, killed when dropped.
pub struct Headless {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Drop for Headless {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running `tether serve`, its socket and the directory both live in
/// (dropped after the console: fields drop in order).
pub struct Served {
    pub run: Run,
    pub socket: PathBuf,
    pub dir: tempfile::TempDir,
}

/// A policy that asks for every call of `tool` (a glob), with `reason`.
pub fn asking(tool: &str, reason: &str) -> String {
    serde_json::json!({"rules": [{"id": "ask", "stage": "pre-execute", "match": {"tool": tool},
        "action": {"type": "ask", "reason": reason}}]})
    .to_string()
}

/// Strings from `&str`s, as [`Console::spawn`] takes them.
pub fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

impl Served {
    /// A fresh directory with `files` written into it (name, text): the
    /// policies and batches a test serves with.
    pub fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    /// `tether serve --socket DIR/console.sock ARGS` in a pseudo-terminal
    /// (with a journal, see [`Console::spawn`]), once it is listening.
    /// `{dir}` in an argument is the directory.
    pub fn console(dir: tempfile::TempDir, args: &[&str]) -> Served {
        Self::console_sized(dir, args, None)
    }

    /// `tether serve --policy DIR/ask.json ARGS` in a pseudo-terminal, the
    /// policy asking for every call of `tool`.
    pub fn asking(tool: &str, args: &[&str]) -> Served {
        let dir = Self::dir_with(&[("ask.json", &asking(tool, &format!("{tool} is asked")))]);
        let mut all = vec!["--policy", "{dir}/ask.json"];
        all.extend_from_slice(args);
        Self::console(dir, &all)
    }

    /// As [`Served::console`], at `rows` × `cols` when given.
    pub fn console_sized(dir: tempfile::TempDir, args: &[&str], size: Option<(u16, u16)>) -> Served {
        Self::console_after(dir, &[], args, size)
    }

    /// `tether GLOBAL… serve --socket DIR/console.sock ARGS`: global options
    /// written before the subcommand, as an alias would.
    pub fn console_after(dir: tempfile::TempDir, global: &[&str], args: &[&str], size: Option<(u16, u16)>) -> Served {
        let socket = dir.path().join("console.sock");
        let mut all = expand(dir.path(), global);
        all.extend(strings(&["serve", "--socket", socket.to_str().unwrap()]));
        all.extend(expand(dir.path(), args));
        let console = Console::spawn_sized(None, &all, true, size.unwrap_or(super::SIZE));
        console.wait_for("listening for agents");
        Served {
            run: Run::Console(console),
            socket,
            dir,
        }
    }

    /// `tether serve --headless --socket DIR/console.sock ARGS`, once it
    /// has said it is listening. `{dir}` in an argument is the directory.
    pub fn headless(dir: tempfile::TempDir, args: &[&str]) -> Served {
        let socket = dir.path().join("console.sock");
        let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
            .args(["serve", "--headless", "--socket"])
            .arg(&socket)
            .args(expand(dir.path(), args))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert!(first.contains("listening"), "{first}");
        Served {
            run: Run::Headless(Headless { child, stdout }),
            socket,
            dir,
        }
    }

    /// The console in its pseudo-terminal.
    pub fn screen(&mut self) -> &mut Console {
        match &mut self.run {
            Run::Console(console) => console,
            Run::Headless(_) => panic!("a headless console has no screen"),
        }
    }

    /// The console in its pseudo-terminal, to look at.
    pub fn sees(&self) -> &Console {
        match &self.run {
            Run::Console(console) => console,
            Run::Headless(_) => panic!("a headless console has no screen"),
        }
    }

    /// Quits the console in its pseudo-terminal (see [`Console::quit`]): its journal.
    pub fn quit(self) -> Vec<serde_json::Value> {
        match self.run {
            Run::Console(console) => console.quit(),
            Run::Headless(_) => panic!("quit is for a console in a terminal; stop a headless one"),
        }
    }

    /// Writes `batch` to `name` in the directory and sends it: the agent.
    pub fn send_json(&self, name: &str, batch: &serde_json::Value) -> Child {
        let path = self.write(name, &batch.to_string());
        self.send(&path)
    }

    /// A path in the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `text` to `name` in the directory.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `tether send BATCH --socket …`, started.
    pub fn send(&self, batch: &Path) -> Child {
        Command::new(env!("CARGO_BIN_EXE_tether"))
            .arg("send")
            .arg(batch)
            .arg("--socket")
            .arg(&self.socket)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `tether send BATCH --socket …`, to its end.
    pub fn send_output(&self, batch: &Path) -> Output {
        self.send(batch).wait_with_output().unwrap()
    }

    /// The headless console's process id.
    pub fn pid(&self) -> u32 {
        match &self.run {
            Run::Headless(headless) => headless.child.id(),
            Run::Console(console) => console.child.process_id().unwrap(),
        }
    }

    /// Sends the signal `name` (`HUP`, `TERM`) to the console.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.pid().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Reads the headless console's stderr until a line holds `text`; that line.
    pub fn stderr_line(&mut self, text: &str) -> String {
        let Run::Headless(headless) = &mut self.run else {
            panic!("a console in a terminal has no stderr of its own");
        };
        let stderr = headless.child.stderr.as_mut().unwrap();
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            let n = std::io::Read::read(stderr, &mut byte).unwrap();
            assert!(n > 0, "stderr ended before a line with {text:?}");
            if byte[0] != b'\n' {
                line.push(byte[0]);
                continue;
            }
            let got = String::from_utf8_lossy(&line).into_owned();
            if got.contains(text) {
                return got;
            }
            line.clear();
        }
    }

    /// Stops a headless console with SIGTERM; what it wrote on stdout and
    /// stderr, and its exit status. Its directory stays until it is dropped.
    pub fn stop(&mut self) -> Output {
        self.signal("TERM");
        let Run::Headless(Headless { child, stdout }) = &mut self.run else {
            panic!("stop is for a headless console");
        };
        let status = child.wait().unwrap();
        let mut rest = Vec::new();
        std::io::Read::read_to_end(stdout, &mut rest).unwrap();
        let mut stderr = Vec::new();
        std::io::Read::read_to_end(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        Output {
            status,
            stdout: rest,
            stderr,
        }
    }
}

fn expand(dir: &Path, args: &[&str]) -> Vec<String> {
    let dir = dir.display().to_string();
    args.iter().map(|a| a.replace("{dir}", &dir)).collect()
}
