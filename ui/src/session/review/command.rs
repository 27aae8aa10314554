//! A command reviewer: `sh -c COMMAND`, the call as one JSON object on
//! stdin, one JSON object on stdout. The caller's timeout drops the future,
//! and dropping it kills the process (`kill_on_drop`).

use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::Answer;

/// More than any answer needs; a reviewer printing past it has failed.
const MAX_OUTPUT: u64 = 64 * 1024;

/// Runs the reviewer on `call`; `Err` says why it gave no answer.
pub async fn review(command: &str, call: &Value) -> Result<Answer, String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
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
