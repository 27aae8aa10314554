//! `tether serve`: the console with the agent link open, in the terminal or
//! headless.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tether_tools::{ApprovalRequest, BoxError, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::agents::link::{self, Link, socket};
use crate::cli::{ServeAnswer, ServeArgs};
use crate::files::policy::Policy;
use crate::files::scenario::ApprovalScript;
use crate::files::source::FileErrors;
use crate::session::always::AlwaysRules;
use crate::session::approval::ConsoleAnswerer;
use crate::session::journal::ReloadedBy;
use crate::session::notify::NotifyCommand;
use crate::session::provenance::DecisionLog;
use crate::session::replay::{DEFAULT_SCRIPTED_TIMEOUT, scripted_answer};
use crate::session::screens::ScreenHub;
use crate::session::signals;
use crate::tui::app::{
    App, AppEvent, AppEventReceiver, AppEventSender, Command, HeaderInfo, HeldTool, ScopeEntry, ScreenRole,
};
use crate::tui::remote;

/// Runs until Ctrl+C (headless) or `q` (console).
pub async fn run(args: &ServeArgs, approval_timeout: Duration, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let policy = match &args.policy {
        Some(path) => match Policy::load(path) {
            Ok(policy) => Some(policy),
            Err(errors) => {
                writeln!(out, "{}", FileErrors(errors))?;
                return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
            }
        },
        // Without a file the implicit rules still run: a held MCP tool is
        // denied and an unpinned one asked (headless: `--answer` answers).
        None => None,
    };
    let policy = policy.unwrap_or_else(Policy::implicit_only);
    if args.answer == ServeAnswer::Attached && !(args.headless && args.attach) {
        writeln!(
            out,
            "tether serve: --answer attached is for --headless --attach (approvals wait for a console attached with `tether attach`)"
        )?;
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    }
    let path = args.socket.clone().unwrap_or_else(socket::default_path);
    socket_dir_ready(&path, args.socket.is_some())?;
    let listener = socket::bind(&path).await?;
    let attach_listener = if args.attach {
        let at = remote::attach_path(&path);
        Some((socket::bind(&at).await?, at))
    } else {
        None
    };
    let journal = match &args.console.journal {
        Some(p) => Some(Arc::new(crate::session::journal::JournalWriter::open(
            p,
            args.console.history.journal_max_bytes(),
            crate::session::journal::JournalHeader::new(args.policy.as_deref(), approval_timeout),
        )?)),
        None => None,
    };
    let stop = CancellationToken::new();
    let (events, receiver) = AppEventSender::new();
    let notify_command = args
        .console
        .notify
        .notify_cmd
        .clone()
        .map(|command| NotifyCommand::new(command, path.display().to_string(), Some(events.clone())));
    let log = DecisionLog::default();
    let registry = ToolRegistry::new();
    // Reviews are told to the screens (the header counts them).
    let reviewing = crate::session::review::Reviewing {
        events: Some(events.clone()),
        ..Default::default()
    };
    let policy_handles = crate::session::policy::install_with(&registry, &policy, &log, &reviewing);
    let policy_text = policy.header_text();
    if let Some(journal) = &journal {
        journal.record_declarations_from(&registry);
    }
    let mut link = Link::new(registry.clone(), log.clone());
    link.journal = journal;
    let always = AlwaysRules::default();
    let answerer = ConsoleAnswerer {
        events: events.clone(),
        timeout: approval_timeout,
        always: always.clone(),
        log: log.clone(),
        registry: registry.clone(),
        notify: notify_command,
        waiting: Default::default(),
    };
    let info = HeaderInfo {
        title: format!("serving {}", path.display()),
        source: path.display().to_string(),
        policy: args.policy.as_ref().map(|_| policy_text.clone()),
        journal: args.console.journal.as_ref().map(|p| p.display().to_string()),
        agents: Some(0),
        attach: None,
    };
    if args.headless {
        let result = headless(
            args,
            &path,
            (link, listener),
            (answerer, policy_text),
            (events, receiver),
            attach_listener,
            policy_handles,
            stop,
            out,
        )
        .await;
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(remote::attach_path(&path));
        return result;
    }

    let mut handles = crate::session::observer::attach(&registry, &events);
    link.events = Some(events.clone());
    let mut app = App::new(
        registry.clone(),
        ScopeEntry::tree(std::slice::from_ref(&link.root)),
        info.clone(),
        Instant::now(),
    );
    app.decisions = Some(log.clone());
    app.always = always;
    app.notify = args.console.notify.notify.with_env();
    handles.push(registry.set_approval_answerer(answerer));
    app.batches = crate::tui::app::History::new(args.console.history.limits());
    app.journal = link.journal.as_ref().map(|j| j.reader());
    app.note(format!("listening for agents on {}", path.display()));
    let link = Arc::new(link);
    let controller = Controller::new(&registry, policy_handles, args, &link, &events, log);
    let server = link::serve_on_own_thread(Arc::clone(&link), listener, stop.clone())?;
    // With --attach, every screen (this one too) is fed by the hub.
    let (mut subscription, mut receiver, door) = match attach_listener {
        Some((listener, at)) => {
            let hub = ScreenHub::spawn(receiver);
            let door = open_door(args, &hub, &events, &app, &controller, listener, &stop)?;
            app.note(format!(
                "attach from another terminal: tether attach --socket {}",
                path.display()
            ));
            tracing::info!(attach = %at.display(), "attaching is open");
            (Some(hub.subscribe()), None, Some(door))
        }
        None => (None, Some(receiver), None),
    };
    let mut guard = crate::tui::terminal::TerminalGuard::enter()?;
    let input = crossterm::event::EventStream::new();
    let events_in = match (&mut subscription, &mut receiver) {
        (Some(subscription), _) => &mut subscription.events,
        (None, Some(receiver)) => receiver,
        (None, None) => anyhow::bail!("the console has no events to read"),
    };
    let run = Arc::clone(&controller);
    let result = crate::tui::console::run_loop(&mut guard.terminal, &mut app, input, events_in, |command, app| {
        run.run(command, app)
    })
    .await;
    drop(guard);
    stop.cancel();
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::task::spawn_blocking(move || server.join()),
    )
    .await;
    let _ = std::fs::remove_file(&path);
    if door.is_some() {
        let _ = std::fs::remove_file(remote::attach_path(&path));
    }
    drop((handles, controller, door));
    result.map(|()| ExitCode::SUCCESS)
}

/// Tether makes no directory the user named: a `--socket` in a missing
/// directory is refused with the directory named. Only its own default
/// directory is created (0700, by `socket::bind`), in a parent that exists.
fn socket_dir_ready(path: &std::path::Path, given: bool) -> anyhow::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let must_exist = if given {
        dir
    } else {
        dir.and_then(std::path::Path::parent)
    };
    match must_exist {
        Some(dir) if !dir.is_dir() => {
            let what = if given {
                format!("--socket {}", path.display())
            } else {
                "the default socket (under /run/user/UID or the temp dir)".to_owned()
            };
            anyhow::bail!(
                "{} does not exist, so {what} cannot be made there; Tether creates no directory you name:                  create it first or give another --socket",
                dir.display()
            )
        }
        _ => Ok(()),
    }
}

/// `tether serve --headless`: one JSON line per outcome on `out`; approvals
/// answered as `--answer` says, or (`attached`) by an attached console.
#[allow(clippy::too_many_arguments)]
async fn headless(
    args: &ServeArgs,
    path: &std::path::Path,
    (mut link, listener): (Link, tokio::net::UnixListener),
    (answerer, policy_text): (ConsoleAnswerer, String),
    (events, receiver): (AppEventSender, AppEventReceiver),
    attach_listener: Option<(tokio::net::UnixListener, PathBuf)>,
    policy_handles: Vec<tether_tools::Registration>,
    stop: CancellationToken,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let registry = link.registry.clone();
    let log = link.log.clone();
    let mut handles = Vec::new();
    match args.answer.scripted() {
        Some(default) => {
            let answer_log = log.clone();
            handles.push(registry.set_approval_answerer(move |request: ApprovalRequest| {
                let log = answer_log.clone();
                async move {
                    Ok::<_, BoxError>(
                        scripted_answer(&request, ApprovalScript::Named(default), DEFAULT_SCRIPTED_TIMEOUT, &log).await,
                    )
                }
            }));
        }
        None => handles.push(registry.set_approval_answerer(answerer)),
    }
    let (printer, mut printed) = tokio::sync::mpsc::unbounded_channel();
    link.outcomes = Some(printer);
    let mut door = None;
    let mut watcher = None;
    let attach_listener = match attach_listener {
        Some((attach, _)) => {
            // Attached consoles see the batches and answer what waits.
            handles.extend(crate::session::observer::attach(&registry, &events));
            link.events = Some(events.clone());
            Some(attach)
        }
        None => None,
    };
    let root = link.root.clone();
    let journal = link.journal.as_ref().map(|j| j.reader());
    let link = Arc::new(link);
    let controller = Controller::new(&registry, policy_handles, args, &link, &events, log.clone());
    if let Some(attach) = attach_listener {
        let hub = ScreenHub::spawn(receiver);
        watcher = Some(hub.subscribe());
        let info = HeaderInfo {
            title: format!("serving {} (headless)", path.display()),
            source: path.display().to_string(),
            policy: args.policy.as_ref().map(|_| policy_text.clone()),
            journal: args.console.journal.as_ref().map(|p| p.display().to_string()),
            agents: Some(0),
            attach: None,
        };
        let mut template = App::new(
            registry.clone(),
            ScopeEntry::tree(std::slice::from_ref(&root)),
            info,
            Instant::now(),
        );
        template.decisions = Some(log.clone());
        template.journal = journal;
        door = Some(open_door(args, &hub, &events, &template, &controller, attach, &stop)?);
    } else {
        drop(receiver);
    }
    // The policy in force (its file, or none) and its default, as the
    // console's header says them.
    writeln!(
        out,
        "{}",
        serde_json::json!({"listening": path.display().to_string(), "policy": policy_text})
    )?;
    out.flush()?;
    let server = link::serve_on_own_thread(link, listener, stop.clone())?;
    let notify = args.console.notify.notify.with_env();
    let mut code_said = None;
    let mut hangups = signals::Hangups::new();
    loop {
        tokio::select! {
            line = printed.recv() => match line {
                Some(line) => {
                    writeln!(out, "{}", crate::sanitize::json_line(&line))?;
                    out.flush()?;
                }
                None => break,
            },
            Some(told) = async { match &mut watcher { Some(w) => w.events.recv_many().await, None => std::future::pending().await } } => {
                // Headless, the terminal serve runs in is stderr's.
                let mut err = std::io::stderr();
                for event in told {
                    match event {
                        AppEvent::AttachChanged(status) if status.code != code_said => {
                            let line = match &status.code {
                                Some(code) => format!("attach code {code}: tether attach --socket {} --code {code}", path.display()),
                                None => "attaching locked: three wrong codes were given".to_owned(),
                            };
                            writeln!(err, "{line}")?;
                            code_said = status.code;
                        }
                        AppEvent::ApprovalRequested(prompt) => {
                            err.write_all(&notify.bytes(1, &prompt.tool, &prompt.scope_label))?;
                            writeln!(err, "approval waiting: {} ({}) in {}", crate::sanitize::escape(&prompt.tool), crate::sanitize::escape(&prompt.call_id), crate::sanitize::escape(&prompt.scope_label))?;
                        }
                        _ => {}
                    }
                }
            }
            () = hangups.next() => {
                // A daemon's convention: SIGHUP reads the policy file again.
                let line = match controller.reload_policy(ReloadedBy::Signal) {
                    AppEvent::PolicyReloaded { path, rules, .. } => format!("policy reloaded on SIGHUP: {path}, {rules} rules"),
                    AppEvent::PolicyRejected { message } => format!("policy not reloaded on SIGHUP, the policy before stays in force: {message}"),
                    _ => String::new(),
                };
                writeln!(std::io::stderr(), "{}", crate::sanitize::escape(&line))?;
            }
            _ = signals::terminated() => break,
        }
    }
    stop.cancel();
    let _ = tokio::task::spawn_blocking(move || server.join()).await;
    drop((handles, door, watcher, controller));
    Ok(ExitCode::SUCCESS)
}

/// Opens attaching: the door builds each attached console's screen like
/// `template` and runs its keys' commands through `controller`.
fn open_door(
    args: &ServeArgs,
    hub: &ScreenHub,
    events: &AppEventSender,
    template: &App,
    controller: &Arc<Controller>,
    listener: tokio::net::UnixListener,
    stop: &CancellationToken,
) -> anyhow::Result<Arc<remote::AttachDoor>> {
    let registry = template.registry.clone();
    let scopes = template.scopes.clone();
    let mut info = template.info.clone();
    info.agents = Some(0);
    let decisions = template.decisions.clone();
    let always = template.always.clone();
    let limits = args.console.history.limits();
    let notify = args.console.notify.notify;
    let journal = template.journal.clone();
    // Every console counts its events' times from when serve started, so a
    // line reads the same on each screen.
    let started = template.started;
    let make_screen: remote::MakeScreen = Box::new(move |name, read_only| {
        let mut app = App::new(registry.clone(), scopes.clone(), info.clone(), Instant::now());
        app.started = started;
        app.me = name;
        app.role = ScreenRole::Attached { read_only };
        app.decisions = decisions.clone();
        app.always = always.clone();
        app.notify = notify;
        app.batches = crate::tui::app::History::new(limits);
        app.journal = journal.clone();
        app
    });
    let run = Arc::clone(controller);
    let door = Arc::new(remote::AttachDoor::new(
        hub.clone(),
        controller.link.journal.clone(),
        events.clone(),
        make_screen,
        Arc::new(move |command, app| run.run(command, app)),
    )?);
    tokio::spawn(remote::serve(Arc::clone(&door), listener, stop.clone()));
    Ok(door)
}

/// What a key asks of a serving session, from any of its screens.
struct Controller {
    registry: ToolRegistry,
    policy_handles: Mutex<Vec<tether_tools::Registration>>,
    policy_path: Option<PathBuf>,
    link: Arc<Link>,
    events: AppEventSender,
    log: DecisionLog,
}

impl Controller {
    fn new(
        registry: &ToolRegistry,
        policy_handles: Vec<tether_tools::Registration>,
        args: &ServeArgs,
        link: &Arc<Link>,
        events: &AppEventSender,
        log: DecisionLog,
    ) -> Arc<Self> {
        Arc::new(Self {
            registry: registry.clone(),
            policy_handles: Mutex::new(policy_handles),
            policy_path: args.policy.clone(),
            link: Arc::clone(link),
            events: events.clone(),
            log,
        })
    }

    fn run(&self, command: Command, app: &mut App) {
        match command {
            Command::KeepRule(rule) => {
                let (message, reload) = crate::session::always::persist::keep_into(self.policy_path.as_deref(), &rule);
                app.note(crate::sanitize::escape(&message));
                if reload {
                    self.reload_policy(ReloadedBy::KeptRule);
                }
            }
            Command::ReloadPolicy => {
                self.reload_policy(ReloadedBy::Key);
            }
            Command::RunNextBatch => app.note("serving: agents run their own batches"),
            Command::ApproveDefinition(held) => approve_definition(&self.link, &self.events, *held),
            Command::Quit | Command::Suspend => {}
        }
    }

    /// Re-reads the policy file for `by`; the new rules go in before the
    /// old ones leave, and a file with errors changes nothing. The journal
    /// records either, and every screen is told; so is the caller.
    fn reload_policy(&self, by: ReloadedBy) -> AppEvent {
        let event = crate::session::policy::reload(
            self.policy_path.as_deref(),
            by,
            self.link.journal.as_deref(),
            |policy| {
                let reviewing = crate::session::review::Reviewing {
                    events: Some(self.events.clone()),
                    ..Default::default()
                };
                let new = crate::session::policy::install_with(&self.registry, policy, &self.log, &reviewing);
                let old = std::mem::replace(
                    &mut *self.policy_handles.lock().unwrap_or_else(PoisonError::into_inner),
                    new,
                );
                drop(old);
            },
        );
        self.events.send(event.clone());
        event
    }
}

/// Tells the MCP gateway that holds a tool that the human approved its new
/// definition, and shows its answer. The approval goes over the link and
/// the gateway writes its own pin file: the console writes nowhere an agent
/// chose (see `agents::mcp::held`).
fn approve_definition(link: &Arc<Link>, events: &AppEventSender, held: HeldTool) {
    let (link, events) = (Arc::clone(link), events.clone());
    tokio::spawn(async move {
        // The definition the human was shown goes with its name: the gateway
        // pins those bytes, and only if its server still defines them.
        let params = serde_json::json!({
            "server": held.server, "tool": held.tool, "hash": held.hash, "definition": held.changed,
        });
        // An agent that never answers must not keep this task forever.
        let asked = link.ask_agent(&held.scope, "mcp/approve", params);
        let answer = tokio::time::timeout(Duration::from_secs(30), asked)
            .await
            .unwrap_or_else(|_| Err("the gateway did not answer within 30 s".into()));
        let note = match answer {
            Ok(_) => format!(
                "approved the new definition of {} in {}: its next call goes through the pipeline",
                held.tool, held.server
            ),
            Err(message) => format!("{} in {} stays held: {message}", held.tool, held.server),
        };
        events.send(AppEvent::Note(crate::sanitize::escape(&note)));
    });
}
