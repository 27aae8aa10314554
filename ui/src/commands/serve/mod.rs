//! `tether serve`: the console with the agent link open, in the terminal or
//! headless.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

use crate::agents::link::{self, Link, socket};
use crate::cli::{ServeAnswer, ServeArgs};
use crate::files::policy::Policy;
use crate::files::source::FileErrors;
use crate::session::always::AlwaysRules;
use crate::session::approval::ConsoleAnswerer;
use crate::session::notify::NotifyCommand;
use crate::session::provenance::DecisionLog;
use crate::session::screens::ScreenHub;
use crate::tui::app::{App, AppEventSender, HeaderInfo, ScopeEntry};
use crate::tui::remote;

mod controller;
mod headless;
mod unapprovable;
use controller::{Controller, open_door};
use headless::headless;

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
    let web_on = args.web.web.is_some();
    if args.answer == ServeAnswer::Attached && !(args.headless && (args.attach || web_on)) {
        writeln!(
            out,
            "tether serve: --answer attached is for --headless with --attach or --web (approvals wait for a console attached with `tether attach`, or a paired web device)"
        )?;
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    }
    let path = args.socket.clone().unwrap_or_else(socket::default_path);
    socket_dir_ready(&path, args.socket.is_some())?;
    let listener = socket::bind(&path).await?;
    // Only --attach binds the attach socket. --web opens the door without
    // it (pairing asks for the door's one-time code), so a page watching
    // costs serve no screen's feed of every call.
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
    let web = match crate::web::server::Pending::new(&args.web, &path, journal.clone(), events.clone()).await {
        Ok(web) => web,
        Err(error) => {
            let _ = std::fs::remove_file(&path);
            if args.attach {
                let _ = std::fs::remove_file(remote::attach_path(&path));
            }
            writeln!(out, "tether serve: {error:#}")?;
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    };
    let web_base: Option<Arc<str>> = web.as_ref().map(|w| Arc::from(w.bound.base.as_str()));
    let notify_command = args.console.notify.notify_cmd.clone().map(|command| {
        let mut command = NotifyCommand::new(command, path.display().to_string(), Some(events.clone()));
        command.web.clone_from(&web_base);
        command
    });
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
    // Stdio MCP gateways hand themselves to the console (`mcp/host`).
    link.mcp_host = Some(crate::agents::mcp::host::handler());
    let always = AlwaysRules::default();
    let answerer = ConsoleAnswerer {
        events: events.clone(),
        timeout: approval_timeout,
        always: always.clone(),
        log: log.clone(),
        registry: registry.clone(),
        notify: notify_command,
        waiting: Default::default(),
        escalation: crate::session::approval::Escalation {
            remind_after: args.remind_after,
            escalate: args
                .escalate_after
                .zip(args.escalate_cmd.clone())
                .map(|(after, command)| {
                    let mut command = NotifyCommand::new(command, path.display().to_string(), Some(events.clone()));
                    command.web.clone_from(&web_base);
                    (after, command)
                }),
        },
    };
    let web_header = web
        .as_ref()
        .map(|w| format!(" · {}", w.bound.header_text()))
        .unwrap_or_default();
    let info = HeaderInfo {
        title: format!("serving {}{web_header}", path.display()),
        source: path.display().to_string(),
        policy: args.policy.as_ref().map(|_| policy_text.clone()),
        journal: args.console.journal.as_ref().map(|p| p.display().to_string()),
        agents: Some(0),
        attach: None,
    };
    let unapprovable = unapprovable::warnings(&policy, args);
    if args.headless {
        for line in &unapprovable {
            writeln!(std::io::stderr(), "tether serve: {line}")?;
        }
        let result = headless(
            args,
            &path,
            (link, listener),
            (
                answerer,
                policy_text,
                crate::session::review::problems(&policy.reviewers),
            ),
            (events, receiver),
            (attach_listener, web),
            policy_handles,
            stop,
            out,
        )
        .await;
        let _ = std::fs::remove_file(&path);
        if args.attach {
            let _ = std::fs::remove_file(remote::attach_path(&path));
        }
        if web_on {
            let _ = std::fs::remove_file(crate::web::control::control_path(&path));
        }
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
    for line in unapprovable {
        app.note(line);
    }
    let link = Arc::new(link);
    let controller = Controller::new(&registry, policy_handles, args, &link, &events, log);
    let server = link::serve_on_own_thread(Arc::clone(&link), listener, stop.clone())?;
    let mut web_tasks = Vec::new();
    // With --attach or --web, every screen (this one too) is fed by the hub,
    // and the page is given the approvals' events.
    let (mut subscription, mut receiver, door) = if attach_listener.is_some() || web.is_some() {
        let hub = ScreenHub::spawn(receiver);
        let (listener, at) = attach_listener.unzip();
        let door = open_door(args, &hub, &events, &app, &controller, listener, &stop)?;
        if let Some(web) = web {
            controller.pair_with(&web.web);
            app.note(format!(
                "answering from a phone or browser: {} (W, or `tether web pair`, pairs one)",
                web.bound.base
            ));
            web_tasks = web.open(&hub, &door, &stop);
        }
        if let Some(at) = at {
            app.note(format!(
                "attach from another terminal: tether attach --socket {}",
                path.display()
            ));
            tracing::info!(attach = %at.display(), "attaching is open");
        }
        (Some(hub.subscribe()), None, Some(door))
    } else {
        (None, Some(receiver), None)
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
    if args.attach {
        let _ = std::fs::remove_file(remote::attach_path(&path));
    }
    if web_on {
        let _ = std::fs::remove_file(crate::web::control::control_path(&path));
    }
    for task in web_tasks {
        task.abort();
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
