//! Screens over a socket (`tether serve --attach`): each attached console is
//! an [`App`] like the main one, fed by the same [`ScreenHub`] and drawn by
//! the same views and event loop, in this process. Only its terminal is
//! elsewhere: the frames go to `tether attach` as the bytes a terminal reads,
//! and its keys and size come back. The attach socket is beside the agents'
//! (`PATH.attach`), a connection to it is of this user only (the peer's uid),
//! and it must first give the one-time code shown on the main console: an
//! agent runs as the same user, but cannot read the human's screen.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Position, Size};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::session::events::{AppEvent, AppEventSender, AttachStatus};
use crate::session::journal::JournalWriter;
use crate::session::screens::ScreenHub;
use crate::tui::app::{App, Command};

mod backend;
mod slowdown;
use backend::{FrameBuffer, RemoteBackend, tokio_stream_from};
pub use slowdown::{FIRST_DELAY, FORGET_AFTER, SLOWEST, Slowdown, delay_after};

/// How long a new connection has to say `console/attach`.
const HELLO_DEADLINE: Duration = Duration::from_secs(30);

/// Where `tether attach` finds the console serving on `socket`.
pub fn attach_path(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".attach");
    PathBuf::from(name)
}

/// A fresh one-time code: six digits from the system's random source.
pub fn new_code() -> io::Result<String> {
    let mut bytes = [0_u8; 4];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(format!("{:06}", u32::from_le_bytes(bytes) % 1_000_000))
}

/// What an attach must prove: `None` only when no code could be drawn (the
/// system's random source failed), and then nobody can attach.
type Gate = Option<String>;

/// Builds an attached console's screen: `(name, read_only)`.
pub type MakeScreen = Box<dyn Fn(Arc<str>, bool) -> App + Send + Sync>;

/// Runs what a key on an attached console asks of the session.
pub type RunCommand = Arc<dyn Fn(Command, &mut App) + Send + Sync>;

/// The door attached consoles come through.
pub struct AttachDoor {
    hub: ScreenHub,
    /// Where every attach and detach is recorded, naming the console.
    journal: Option<Arc<JournalWriter>>,
    events: AppEventSender,
    gate: Mutex<Gate>,
    /// Codes are checked one at a time, each wrong one's delay included, so
    /// connections made side by side cannot guess side by side.
    slowdown: Slowdown,
    attached: Mutex<Vec<String>>,
    /// Set once its socket is served: until then its code only pairs.
    attaching: AtomicBool,
    next: AtomicUsize,
    make_screen: MakeScreen,
    run_command: RunCommand,
}

/// Why an attach was refused, as `tether attach` prints it.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A wrong code (or one already used); the answer waited `waited`, and
    /// the serving console shows a new code.
    WrongCode { waited: Duration },
    /// No code could be drawn.
    NoCode,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::WrongCode { waited } => write!(
                f,
                "wrong attach code; the serving console shows a new one (each wrong code in a row waits longer: \
                 this one {} s, the next {} s)",
                waited.as_secs(),
                (*waited * 2).min(SLOWEST).as_secs()
            ),
            Refusal::NoCode => write!(
                f,
                "attaching is unavailable: no attach code could be drawn (see the serving console's log)"
            ),
        }
    }
}

impl AttachDoor {
    pub fn new(
        hub: ScreenHub,
        journal: Option<Arc<JournalWriter>>,
        events: AppEventSender,
        make_screen: MakeScreen,
        run_command: RunCommand,
    ) -> io::Result<Self> {
        let door = Self {
            hub,
            journal,
            events,
            gate: Mutex::new(Some(new_code()?)),
            slowdown: Slowdown::default(),
            attached: Mutex::new(Vec::new()),
            attaching: AtomicBool::new(false),
            next: AtomicUsize::new(2),
            make_screen,
            run_command,
        };
        door.announce();
        Ok(door)
    }

    /// Records a console's coming or going in the journal; a failure is
    /// logged (the attach itself goes on: the journal is the calls' record).
    fn record(&self, event: &str, fields: Value) {
        let (Some(journal), Value::Object(fields)) = (&self.journal, fields) else {
            return;
        };
        if let Err(error) = journal.record_event(event, fields) {
            tracing::warn!(%error, event, "could not journal an attached console");
        }
    }

    /// The code the next attach must give (`None` when none could be drawn).
    pub fn code(&self) -> Option<String> {
        lock(&self.gate).clone()
    }

    fn announce(&self) {
        let status = AttachStatus {
            code: self.code(),
            attached: lock(&self.attached).clone(),
            attaching: self.attaching.load(Ordering::Relaxed),
        };
        self.events.send(AppEvent::AttachChanged(status));
    }

    /// Checks a code, one attach at a time. The right one is used up (a new
    /// one is shown). A wrong one is used up too — every code is drawn
    /// anew, so wrong tries teach nothing — and its answer waits
    /// [`delay_after`] the wrong codes in a row so far, holding every other
    /// attach behind it. Attaching is never locked: the human reads the
    /// current code and attaches, however many wrong ones came before.
    pub async fn check(&self, given: &str) -> Result<(), Refusal> {
        let turn = self.slowdown.turn().await;
        let same = {
            let mut gate = lock(&self.gate);
            let Some(code) = &*gate else {
                return Err(Refusal::NoCode);
            };
            // Same time whatever matches: the comparison does not stop early.
            let same =
                code.len() == given.len() && code.bytes().zip(given.bytes()).fold(0, |d, (a, b)| d | (a ^ b)) == 0;
            *gate = new_code().ok();
            same
        };
        if same {
            turn.right();
            self.announce();
            return Ok(());
        }
        let late = turn.wrong();
        self.events.send(AppEvent::Note(format!(
            "a wrong attach code was given: a new code is shown (answered after {} s; the next wrong one waits {} s)",
            late.wait.as_secs(),
            (late.wait * 2).min(SLOWEST).as_secs()
        )));
        self.announce();
        let waited = late.wait_out().await;
        Err(Refusal::WrongCode { waited })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Accepts attached consoles until `stop` fires; each ends when its client
/// detaches or goes away, or with the serve.
pub async fn serve(door: Arc<AttachDoor>, listener: UnixListener, stop: CancellationToken) {
    door.attaching.store(true, Ordering::Relaxed);
    door.announce();
    let ours = crate::agents::link::socket::our_uid();
    let mut screens = tokio::task::JoinSet::new();
    loop {
        let stream = tokio::select! {
            () = stop.cancelled() => break,
            Some(_) = screens.join_next(), if !screens.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "accepting an attach failed");
                    continue;
                }
            },
        };
        match stream.peer_cred() {
            Ok(cred) if crate::agents::link::socket::peer_allowed(cred.uid(), ours) => {}
            Ok(cred) => {
                door.events
                    .send(AppEvent::Note(format!("refused an attach from uid {}", cred.uid())));
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, "could not read an attach's credentials; refused");
                continue;
            }
        }
        let (door, stop) = (Arc::clone(&door), stop.clone());
        screens.spawn(async move {
            if let Err(error) = attached(door, stream, stop).await {
                tracing::info!(%error, "an attached console ended");
            }
        });
    }
    // Each screen says goodbye to its client before the serve goes on to stop.
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while screens.join_next().await.is_some() {}
    })
    .await;
}

/// The first line of an attach: `console/attach`.
#[derive(Debug, serde::Deserialize)]
struct Hello {
    code: String,
    #[serde(default)]
    tty: Option<String>,
    #[serde(default)]
    view: bool,
    cols: u16,
    rows: u16,
}

async fn attached(door: Arc<AttachDoor>, stream: UnixStream, stop: CancellationToken) -> anyhow::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let first = tokio::time::timeout(HELLO_DEADLINE, lines.next_line())
        .await
        .map_err(|_| anyhow::anyhow!("no console/attach within 30 s"))??
        .unwrap_or_default();
    let request: Value = serde_json::from_str(&first).unwrap_or(Value::Null);
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let hello = match (
        request["method"].as_str(),
        serde_json::from_value::<Hello>(request["params"].clone()),
    ) {
        (Some("console/attach"), Ok(hello)) => hello,
        _ => {
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": "expected console/attach {code, tty, view, cols, rows}"}});
            write.write_all(format!("{error}\n").as_bytes()).await?;
            return Ok(());
        }
    };
    if let Err(refusal) = door.check(hello.code.trim()).await {
        let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": refusal.to_string()}});
        write.write_all(format!("{error}\n").as_bytes()).await?;
        return Ok(());
    }
    let n = door.next.fetch_add(1, Ordering::Relaxed);
    let tty = hello.tty.as_deref().map(crate::sanitize::escape);
    let name: Arc<str> = Arc::from(match &tty {
        Some(tty) => format!("attach {n} ({tty})"),
        None => format!("attach {n}"),
    });
    let welcome = json!({"jsonrpc": "2.0", "id": id, "result": {"name": &*name, "view": hello.view}});
    write.write_all(format!("{welcome}\n").as_bytes()).await?;
    lock(&door.attached).push(name.to_string());
    door.record(
        "console/attach",
        json!({"console": &*name, "view": hello.view, "tty": tty}),
    );
    door.events.send(AppEvent::Note(format!(
        "{name} attached{}",
        if hello.view { " (view only)" } else { "" }
    )));
    door.announce();

    let size = Arc::new(Mutex::new(Size::new(hello.cols.max(1), hello.rows.max(1))));
    let (frames, mut outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(bytes) = outgoing.recv().await {
            let frame = json!({"jsonrpc": "2.0", "method": "screen/frame", "params": {"data": String::from_utf8_lossy(&bytes)}});
            if write.write_all(format!("{frame}\n").as_bytes()).await.is_err() {
                break;
            }
        }
        write
    });
    let (keys, input) = mpsc::unbounded_channel::<io::Result<Event>>();
    let reader_size = Arc::clone(&size);
    let reader = tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["method"] != "screen/input" {
                continue;
            }
            let Ok(event) = serde_json::from_value::<Event>(message["params"]["event"].clone()) else {
                continue;
            };
            if let Event::Resize(cols, rows) = event {
                *lock(&reader_size) = Size::new(cols.max(1), rows.max(1));
            }
            if keys.send(Ok(event)).is_err() {
                break;
            }
        }
    });

    let mut app = (door.make_screen)(Arc::clone(&name), hello.view);
    let mut subscription = door.hub.subscribe();
    let buffer = FrameBuffer::default();
    let backend = RemoteBackend {
        inner: CrosstermBackend::new(buffer.clone()),
        buffer,
        size,
        cursor: Position::ORIGIN,
        frames: frames.clone(),
    };
    let mut terminal = Terminal::new(backend)?;
    let run_command = Arc::clone(&door.run_command);
    let input = tokio_stream_from(input);
    let ended = tokio::select! {
        result = crate::tui::console::run_loop(&mut terminal, &mut app, input, &mut subscription.events, |command, app| run_command(command, app)) => {
            result.err().map_or_else(|| "detached".to_owned(), |e| format!("ended: {e}"))
        }
        () = stop.cancelled() => "tether serve stopped".to_owned(),
    };
    // Its half-typed reason goes with it; the requests stay with the others.
    drop((app, subscription, terminal));
    reader.abort();
    lock(&door.attached).retain(|n| *n != *name);
    door.record("console/detach", json!({"console": &*name, "why": &ended}));
    door.events.send(AppEvent::Note(format!("{name} {ended}")));
    door.announce();
    drop(frames);
    if let Ok(mut write) = writer.await {
        let closed = json!({"jsonrpc": "2.0", "method": "screen/closed", "params": {"reason": ended}});
        let _ = write.write_all(format!("{closed}\n").as_bytes()).await;
        let _ = write.shutdown().await;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
