//! The interactive console: the event loop and the controller that runs
//! replay batches and reloads the policy.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::Event;
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tether_tools::Registration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::files::inputs::Replayable;
use crate::files::policy::Policy;
use crate::session::approval::ConsoleAnswerer;
use crate::session::journal::{JournalWriter, ReloadedBy};
use crate::session::observer::{self, UiSink};
use crate::session::progress::BatchProgress;
use crate::session::replay::Session;
use crate::tui::app::{
    App, AppEvent, AppEventReceiver, AppEventSender, Command, HeaderInfo, HistoryLimits, ScopeEntry,
};
use crate::tui::terminal::FrameSync;
use crate::tui::view;

/// The shortest time between two drains of engine events (about 60 frames a second).
pub const FRAME: Duration = Duration::from_millis(16);

/// The longest: a slow screen still moves four times a second.
pub const SLOWEST_FRAME: Duration = Duration::from_millis(250);

/// How long to wait before the next drain, given what the last one cost the
/// console (applying the events and drawing the frame) and how many screens
/// draw in this process (the console and each attached one): at least
/// [`FRAME`], and long enough that the screens' own work together stays
/// under a fortieth of a core while events stream in, however many are
/// attached. On a loaded machine a frame costs more, and the screen then
/// moves less often instead of taking CPU from the engine.
pub fn frame_interval(work: Duration, screens: usize) -> Duration {
    let screens = u32::try_from(screens.max(1)).unwrap_or(u32::MAX);
    work.saturating_mul(40)
        .saturating_mul(screens)
        .clamp(FRAME, SLOWEST_FRAME)
}

/// The screens drawing in this process now.
static DRAWING: AtomicUsize = AtomicUsize::new(0);

/// One screen counted in [`DRAWING`] for as long as its loop runs.
struct Drawing;

impl Drawing {
    fn start() -> Self {
        DRAWING.fetch_add(1, Ordering::Relaxed);
        Self
    }
}

impl Drop for Drawing {
    fn drop(&mut self) {
        DRAWING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs the app until it quits: input, engine events and a tick, drawing
/// after each. Pending engine events are drained in one go before a frame,
/// so a flood of updates costs one frame, and the engine never waits.
pub async fn run_loop<B, S>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    mut input: S,
    events: &mut AppEventReceiver,
    mut on_command: impl FnMut(Command, &mut App),
) -> anyhow::Result<()>
where
    B: Backend + FrameSync,
    S: Stream<Item = io::Result<Event>> + Unpin,
{
    let _drawing = Drawing::start();
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    // Engine events are drained at most once a frame: between drains the
    // senders only push, without waking anyone.
    let mut next_drain = tokio::time::Instant::now();
    loop {
        app.tick(Instant::now());
        let size = terminal.size()?;
        app.screen = (size.width, size.height);
        app.batch_page = view::areas(ratatui::layout::Rect::new(0, 0, size.width, size.height))
            .batch
            .height
            .saturating_sub(3) as usize;
        let drawn = Instant::now();
        terminal.backend_mut().begin_frame()?;
        terminal.draw(|frame| view::draw(app, frame))?;
        terminal.backend_mut().end_frame()?;
        if !app.alerts.is_empty() {
            // Rung once the requests are on screen, one ring per frame.
            let alerts = std::mem::take(&mut app.alerts);
            let bytes = app.notify.bytes(alerts.len(), &alerts[0].tool, &alerts[0].scope);
            if !bytes.is_empty() {
                terminal.backend_mut().ring(&bytes)?;
            }
        }
        let drawing = drawn.elapsed();
        tokio::select! {
            maybe = input.next() => match maybe {
                Some(Ok(Event::Key(key))) => {
                    // A key is judged at the time it came (`ANSWER_GUARD`).
                    app.tick(Instant::now());
                    match app.handle_key(key) {
                        Some(Command::Suspend) => {
                            crate::tui::terminal::suspend()?;
                            terminal.clear()?;
                        }
                        Some(command) => on_command(command, app),
                        None => {}
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => return Err(error.into()),
                None => break,
            },
            Some(batch) = async {
                tokio::time::sleep_until(next_drain).await;
                events.recv_many().await
            } => {
                let applying = Instant::now();
                app.tick(applying);
                for event in batch {
                    app.update(event);
                }
                // The frame about to be drawn is about as dear as the last.
                next_drain = tokio::time::Instant::now()
                    + frame_interval(applying.elapsed() + drawing, DRAWING.load(Ordering::Relaxed));
            }
            _ = tick.tick() => {}
        }
        if app.quit {
            break;
        }
    }
    Ok(())
}

/// What the console needs to run a replay.
pub struct ReplayConsole {
    pub session: Arc<Session>,
    pub events: AppEventSender,
    pub journal: Option<Arc<JournalWriter>>,
    pub policy_path: Option<PathBuf>,
    pub stop: CancellationToken,
    next_batch: usize,
    running: Arc<AtomicBool>,
    task: Option<JoinHandle<()>>,
    _handles: Vec<Registration>,
}

impl ReplayConsole {
    /// Loads the replay into a registry with the console attached.
    pub fn new(
        loaded: Replayable,
        policy_path: Option<PathBuf>,
        journal: Option<Arc<JournalWriter>>,
        approval_timeout: Duration,
        events: AppEventSender,
        notify: Option<crate::session::notify::NotifyCommand>,
    ) -> anyhow::Result<(Self, App)> {
        let policy_note = loaded.policy_note();
        let session = Arc::new(Session::new(loaded.scenario, None)?);
        if let Some(journal) = &journal {
            journal.record_decisions_from(&session.log);
            journal.record_declarations_from(&session.registry);
        }
        let mut handles = observer::attach(&session.registry, &events);
        // A replay shows what reviewers recorded unless told to call them
        // (`call_reviewers_live`).
        session.set_reviewing(crate::session::review::Reviewing {
            mode: session.recorded_reviews(),
            events: Some(events.clone()),
            ..Default::default()
        });
        if let Some(policy) = &loaded.policy {
            session.set_policy(policy);
        }
        let scopes: Vec<_> = session.scopes.values().cloned().collect();
        let info = HeaderInfo {
            title: session.scenario.title().to_owned(),
            source: loaded.source.clone(),
            policy: loaded
                .policy
                .as_ref()
                .filter(|p| p.path.is_some())
                .map(Policy::header_text),
            journal: None,
            agents: None,
            attach: None,
        };
        let mut app = App::new(
            session.registry.clone(),
            ScopeEntry::tree(&scopes),
            info,
            Instant::now(),
        );
        handles.push(session.registry.set_approval_answerer(ConsoleAnswerer {
            events: events.clone(),
            timeout: approval_timeout,
            always: Arc::clone(&app.always),
            log: session.log.clone(),
            registry: session.registry.clone(),
            notify,
            waiting: Default::default(),
            escalation: Default::default(),
        }));
        // The bundled demo's policy is compiled in: there is no file to keep a rule in.
        app.keep_into = policy_path.as_ref().map(|p| p.display().to_string());
        // A policy found beside the scenario, not named with --policy (a
        // bundled demo's, in the repository), is not rewritten by a key.
        if let Some(beside) = &loaded.policy_beside {
            app.keep_into = None;
            app.keep_refused = Some(format!(
                "s keeps no rule in {}: it was found beside the scenario, not given with --policy (copy it and pass --policy COPY to keep rules)",
                beside.display()
            ));
        }
        app.decisions = Some(session.log.clone());
        app.pending_batches = Some(session.scenario.batches.len());
        if let Some(description) = &session.scenario.description {
            app.note(description.clone());
        }
        app.note(format!(
            "loaded {}: {} batches; press r to run the next",
            loaded.source,
            session.scenario.batches.len()
        ));
        if let Some(note) = &policy_note {
            app.note(note.clone());
        }
        Ok((
            Self {
                session,
                events,
                journal,
                policy_path,
                stop: CancellationToken::new(),
                next_batch: 0,
                running: Arc::default(),
                task: None,
                _handles: handles,
            },
            app,
        ))
    }

    /// `--review live`: the policy's reviewers are called again instead of
    /// answering with what the journal recorded.
    pub fn call_reviewers_live(&self) {
        self.session.set_reviewing(crate::session::review::Reviewing {
            events: Some(self.events.clone()),
            ..Default::default()
        });
    }

    /// Starts the next batch (or, with `all`, every remaining one in turn).
    pub fn run_next(&mut self, app: &mut App, all: bool) {
        let total = self.session.scenario.batches.len();
        if self.running.load(Ordering::SeqCst) {
            app.note("a batch is still running");
            return;
        }
        if self.next_batch >= total {
            app.note("every batch has run");
            return;
        }
        let first = self.next_batch;
        let last = if all { total } else { first + 1 };
        self.next_batch = last;
        app.pending_batches = Some(total - last);
        app.batches.expect(total);
        let session = Arc::clone(&self.session);
        let events = self.events.clone();
        let journal = self.journal.clone();
        let running = Arc::clone(&self.running);
        let stop = self.stop.clone();
        running.store(true, Ordering::SeqCst);
        self.task = Some(tokio::spawn(async move {
            for index in first..last {
                if stop.is_cancelled() {
                    break;
                }
                let scope = session.batch_scope(index);
                let spec = &session.scenario.batches[index];
                let progress = Arc::new(BatchProgress::new(spec.calls.len(), Instant::now()));
                events.send(AppEvent::BatchStarted {
                    batch: index,
                    label: spec.label.clone().unwrap_or_else(|| format!("batch {}", index + 1)),
                    scope: scope.map(|s| s.id()),
                    scope_label: scope.and_then(|s| s.label()).unwrap_or("global").to_owned(),
                    calls: session.calls_for_screen(index),
                    progress: Some(Arc::clone(&progress)),
                    max_parallelism: session.max_parallelism(index),
                });
                let sink = UiSink::new(index, progress, events.clone(), journal.clone());
                let reports = session.run_batch_until(index, Some(&sink), &stop).await;
                events.send(AppEvent::Trails {
                    batch: index,
                    trails: reports.into_iter().map(|r| r.trail).collect(),
                });
                // The screen says the run is over once this event is drawn,
                // so `r` must already be accepted by then.
                if index + 1 == last || stop.is_cancelled() {
                    running.store(false, Ordering::SeqCst);
                }
                events.send(AppEvent::BatchFinished { batch: index });
            }
            running.store(false, Ordering::SeqCst);
        }));
    }

    /// Re-reads the policy file for `by`; a file with errors changes
    /// nothing. The journal records either.
    pub fn reload_policy(&self, by: ReloadedBy) {
        let event =
            crate::session::policy::reload(self.policy_path.as_deref(), by, self.journal.as_deref(), |policy| {
                self.session.set_policy(policy);
            });
        self.events.send(event);
    }

    /// Cancels what runs and waits (briefly) so the journal records every
    /// outcome.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            if tokio::time::timeout(Duration::from_secs(5), task).await.is_err() {
                tracing::warn!("the running batch did not finish within 5 s of quitting");
            }
        }
    }
}

/// Runs the replay console in the real terminal.
pub async fn run_replay(
    loaded: Replayable,
    policy_path: Option<PathBuf>,
    (journal_path, journal_max_bytes): (Option<PathBuf>, Option<u64>),
    approval_timeout: Duration,
    (auto, review): (bool, crate::session::review::ReviewReplay),
    history: HistoryLimits,
    (notify, notify_cmd): (crate::session::notify::TerminalNotify, Option<String>),
) -> anyhow::Result<()> {
    let journal = match &journal_path {
        Some(path) => Some(Arc::new(JournalWriter::open(
            path,
            journal_max_bytes,
            crate::session::journal::JournalHeader::new(policy_path.as_deref(), approval_timeout),
        )?)),
        None => None,
    };
    let (events, mut receiver) = AppEventSender::new();
    let reader = journal.as_ref().map(|j| j.reader());
    let command = notify_cmd
        .map(|command| crate::session::notify::NotifyCommand::new(command, String::new(), Some(events.clone())));
    let (mut console, mut app) = ReplayConsole::new(loaded, policy_path, journal, approval_timeout, events, command)?;
    if review == crate::session::review::ReviewReplay::Live {
        console.call_reviewers_live();
    }
    app.notify = notify.with_env();
    app.batches = crate::tui::app::History::new(history);
    app.journal = reader;
    app.info.journal = journal_path.map(|p| p.display().to_string());
    // The terminal (and its panic hook) is taken before any batch runs, so a
    // body's panic never reaches the shell's screen.
    let mut guard = crate::tui::terminal::TerminalGuard::enter()?;
    if auto {
        console.run_next(&mut app, true);
    }
    let input = crossterm::event::EventStream::new();
    let result = run_loop(
        &mut guard.terminal,
        &mut app,
        input,
        &mut receiver,
        |command, app| match command {
            Command::RunNextBatch => console.run_next(app, false),
            Command::ReloadPolicy => console.reload_policy(crate::tui::keys::reloaded_by_key()),
            Command::KeepRule(rule) => {
                let (message, reload) =
                    crate::session::always::persist::keep_into(console.policy_path.as_deref(), &rule);
                app.note(crate::sanitize::escape(&message));
                if reload {
                    console.reload_policy(crate::tui::keys::reloaded_by_keeping());
                }
            }
            Command::ApproveDefinition(_) => app.note("a replay has no MCP gateway to approve to"),
            Command::PairWeb => app.note("pairing a phone or browser is for `tether serve --web`"),
            Command::Quit | Command::Suspend => {}
        },
    )
    .await;
    drop(guard);
    console.shutdown().await;
    result
}
