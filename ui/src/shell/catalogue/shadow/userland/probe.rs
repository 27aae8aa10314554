//! `NAME --version`, run once per name and console process: what it
//! answers, and whether that is the answer a given implementation gives.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::super::super::bsd::Probe;

/// What `NAME --version` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// It ran: whether it succeeded, its exit status as shown, and the
    /// first line of each output.
    Ran {
        success: bool,
        status: String,
        out: Option<String>,
        err: Option<String>,
    },
    /// It could not be run, or not within the time allowed.
    Failed(String),
}

impl Answer {
    /// The first line a GNU program prints, or why there is none.
    pub(crate) fn gnu_line(&self, name: &str) -> Result<String, String> {
        match self {
            Answer::Failed(why) => Err(why.clone()),
            Answer::Ran {
                success: true,
                out: Some(line),
                ..
            } => Ok(line.clone()),
            Answer::Ran {
                status,
                out: Some(line),
                err: None,
                ..
            } => Err(format!("`{name} --version` failed ({status}): `{line}`")),
            Answer::Ran { status, err, .. } => Err(format!(
                "`{name} --version` says `{}` ({status})",
                err.as_deref().unwrap_or("nothing")
            )),
        }
    }

    /// Whether it is the answer macOS's program gives.
    pub(super) fn is(&self, probe: Probe) -> bool {
        match (self, probe) {
            (
                Answer::Ran {
                    success: false,
                    out: None,
                    err: Some(err),
                    ..
                },
                Probe::Refuses(expected),
            ) => err == expected,
            (
                Answer::Ran {
                    success: true,
                    out: Some(out),
                    ..
                },
                Probe::Prints(expected),
            ) => out.starts_with(expected),
            _ => false,
        }
    }
}

/// How long `NAME --version` may take.
const LIMIT: Duration = Duration::from_secs(2);

/// What `name --version` answers: the file `found`, where it is known
/// (run under its name, as bash runs it), else whatever `PATH` finds.
pub(super) fn version(name: &str, found: Option<&Path>) -> Answer {
    match run(name, found) {
        Ok(answer) => answer,
        Err(why) => Answer::Failed(why),
    }
}

fn run(name: &str, found: Option<&Path>) -> Result<Answer, String> {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(found.map_or(Path::new(name), |f| f));
    command
        .arg0(name)
        .arg("--version")
        .env_clear()
        .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
        .env("LC_ALL", "C")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("`{name} --version` cannot be run: {e}"))?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let read = |from: Option<&mut dyn Read>| {
            let mut out = Vec::new();
            if let Some(from) = from {
                let _ = from.take(4096).read_to_end(&mut out);
            }
            first_line(&out)
        };
        let out = read(stdout.as_mut().map(|s| s as &mut dyn Read));
        let err = read(stderr.as_mut().map(|s| s as &mut dyn Read));
        let _ = done.send((out, err));
    });
    let read = finished.recv_timeout(LIMIT);
    if read.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| format!("`{name} --version`: {e}"))?;
    let (out, err) = read.map_err(|_| format!("`{name} --version` took more than {} s", LIMIT.as_secs()))?;
    Ok(Answer::Ran {
        success: status.success(),
        status: status.to_string(),
        out,
        err,
    })
}

fn first_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.chars().take(120).collect())
}
