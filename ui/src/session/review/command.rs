//! A command reviewer: `sh -c COMMAND`, the call as one JSON object on
//! stdin, one JSON object on stdout. It runs in a process group of its
//! own ([`Group::spawn`]), killed when the review ends, whichever way: the
//! caller's timeout drops the future, and what `sh` started ends with it,
//! not only `sh`.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::Answer;
use crate::session::process_group::Group;

/// More than any answer needs; a reviewer printing past it has failed.
const MAX_OUTPUT: u64 = 64 * 1024;

/// Runs the reviewer on `call`; `Err` says why it gave no answer.
pub async fn review(command: &str, call: &Value) -> Result<Answer, String> {
    let (mut child, group) = Group::spawn(
        tokio::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .map_err(|e| format!("could not start sh: {e}"))?;
    let input = format!("{call}\n");
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut stderr = child.stderr.take().ok_or("no stderr")?;
    let write = async {
        if let Some(stdin) = stdin.as_mut() {
            // A reviewer that answers without reading all of it closes
            // the pipe: that is no failure.
            let _ = stdin.write_all(input.as_bytes()).await;
        }
        drop(stdin.take());
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut stdout_cut = (&mut stdout).take(MAX_OUTPUT + 1);
    let mut stderr_cut = (&mut stderr).take(MAX_OUTPUT);
    let read = async {
        let (o, e) = tokio::join!(stdout_cut.read_to_end(&mut out), stderr_cut.read_to_end(&mut err));
        o.and(e)
    };
    let ((), read) = tokio::join!(write, read);
    read.map_err(|e| format!("could not read its output: {e}"))?;
    let status = child.wait().await.map_err(|e| format!("could not wait for it: {e}"))?;
    group.ended();
    if !status.success() {
        let code = status.code().map_or_else(|| "a signal".to_owned(), |c| c.to_string());
        let said = String::from_utf8_lossy(&err);
        let said = said.trim();
        return Err(if said.is_empty() {
            format!("it exited with {code}")
        } else {
            format!("it exited with {code}: {}", first_line(said))
        });
    }
    if out.len() as u64 > MAX_OUTPUT {
        return Err(format!("it printed more than {MAX_OUTPUT} bytes"));
    }
    Answer::parse(&String::from_utf8_lossy(&out))
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    crate::sanitize::escape(&line.chars().take(200).collect::<String>())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn alive(pid: &str) -> bool {
        // A killed process nobody reaped yet is a zombie (`Z`): not alive.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| stat.rsplit(')').next().map(|rest| !rest.trim_start().starts_with('Z')))
            .unwrap_or(false)
    }

    /// A reviewer that times out takes what it started in the background
    /// with it, not only its `sh`.
    #[tokio::test]
    async fn a_timed_out_reviewer_leaves_no_process_behind() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let pidfile = dir.path().join("pid");
        let command = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let call = serde_json::json!({"tool": "Bash"});
        let reviewed = tokio::time::timeout(Duration::from_millis(500), review(&command, &call)).await;
        assert!(reviewed.is_err(), "no answer in time");
        let pid = std::fs::read_to_string(&pidfile).unwrap_or_else(|e| panic!("{e}"));
        let pid = pid.trim();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while alive(pid) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(pid), "the reviewer's background `sleep` ({pid}) still runs");
    }
}
