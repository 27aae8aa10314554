//! `tether attach`: this terminal shows the screen of a running `tether
//! serve --attach`. The screen itself runs in the serving process (the same
//! `App` and views as its own console); this side only hands over keys and
//! the terminal's size, and writes the frames it gets back.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use crossterm::event::{Event, EventStream, KeyEventKind};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use super::EXIT_BAD_INPUT;
use crate::agents::link::socket;
use crate::cli::AttachArgs;
use crate::tui::remote::attach_path;

pub async fn run(args: &AttachArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let socket = args.socket.clone().unwrap_or_else(socket::default_path);
    let path = attach_path(&socket);
    let stream = match UnixStream::connect(&path).await {
        Ok(stream) => stream,
        Err(error) => {
            writeln!(
                out,
                "tether attach: no console to attach to at {} ({error}).\n\
                 Start one with `tether serve --attach` (and the same --socket, if you gave one).",
                socket.display()
            )?;
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    let code = match &args.code {
        Some(code) => code.clone(),
        None => ask_code(out)?,
    };
    // Not knowing the size yet is no reason to refuse a code: the screen
    // takes the terminal (and says if there is none) once the code is good.
    let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    let hello = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "console/attach",
        "params": {"code": code, "tty": tty_name(), "view": args.view, "cols": cols, "rows": rows},
    });
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    write.write_all(format!("{hello}\n").as_bytes()).await?;
    let answer: Value = match lines.next_line().await? {
        Some(line) => serde_json::from_str(&line).unwrap_or(Value::Null),
        None => Value::Null,
    };
    if let Some(message) = answer["error"]["message"].as_str() {
        writeln!(out, "tether attach: {message}")?;
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let Some(name) = answer["result"]["name"].as_str().map(str::to_owned) else {
        writeln!(out, "tether attach: the console did not answer the attach")?;
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    };

    let guard = crate::tui::terminal::TerminalGuard::enter()?;
    let mut input = EventStream::new();
    let mut screen = std::io::stdout();
    let ended = loop {
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => {
                    let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
                    match message["method"].as_str() {
                        Some("screen/frame") => {
                            let data = message["params"]["data"].as_str().unwrap_or_default();
                            screen.write_all(data.as_bytes())?;
                            screen.flush()?;
                        }
                        Some("screen/closed") => {
                            break message["params"]["reason"].as_str().unwrap_or("closed").to_owned();
                        }
                        _ => {}
                    }
                }
                Ok(None) | Err(_) => break "tether serve stopped".to_owned(),
            },
            event = input.next() => match event {
                Some(Ok(event)) => {
                    let keep = match &event {
                        Event::Key(key) => key.kind == KeyEventKind::Press,
                        Event::Resize(..) | Event::Paste(_) => true,
                        _ => false,
                    };
                    if keep {
                        let frame = json!({"jsonrpc": "2.0", "method": "screen/input", "params": {"event": event}});
                        if write.write_all(format!("{frame}\n").as_bytes()).await.is_err() {
                            break "tether serve stopped".to_owned();
                        }
                    }
                }
                Some(Err(error)) => break format!("reading the terminal failed: {error}"),
                None => break "the terminal closed".to_owned(),
            },
        }
    };
    drop(guard);
    let said = if ended == "detached" {
        format!("{name}: detached from {}", socket.display())
    } else {
        format!("{name}: {ended} ({})", socket.display())
    };
    writeln!(out, "{}", crate::sanitize::escape(&said))?;
    Ok(ExitCode::SUCCESS)
}

/// Asks for the code on the terminal (it is not echoed anywhere else).
fn ask_code(out: &mut dyn Write) -> anyhow::Result<String> {
    write!(out, "attach code (shown in the header of the serving console): ")?;
    out.flush()?;
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("reading the attach code")?;
    Ok(line.trim().to_owned())
}

/// `pts/5`: the terminal this runs in, for "answered by attach 2 (pts/5)".
fn tty_name() -> Option<String> {
    let target = std::fs::read_link("/proc/self/fd/0").ok()?;
    let name = target.to_str()?.strip_prefix("/dev/")?.to_owned();
    Some(name)
}
