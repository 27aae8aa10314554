//! `tether serve`: the console with the agent link open, in the terminal or
//! headless.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_tools::{ApprovalRequest, BoxError, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::agents::link::{self, Link, socket};
use crate::cli::ServeArgs;
use crate::files::policy::Policy;
use crate::files::scenario::ApprovalScript;
use crate::files::source::FileErrors;
use crate::session::approval::ConsoleAnswerer;
use crate::session::provenance::DecisionLog;
use crate::session::replay::{DEFAULT_SCRIPTED_TIMEOUT, scripted_answer};
use crate::session::signals;
use crate::tui::app::{App, AppEvent, AppEventSender, Command, HeaderInfo, HeldTool, ScopeEntry};

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
    let path = args.socket.clone().unwrap_or_else(socket::default_path);
    let listener = socket::bind(&path).await?;
    let journal = match &args.journal {
        Some(p) => Some(Arc::new(crate::session::journal::JournalWriter::open(
            p,
            args.history.journal_max_bytes(),
        )?)),
        None => None,
    };
    let stop = CancellationToken::new();
    if args.headless {
        let log = DecisionLog::default();
        let registry = ToolRegistry::new();
        let _policy = crate::session::policy::install(&registry, &policy, &log);
        let default = args.answer;
        let answer_log = log.clone();
        let _answerer = registry.set_approval_answerer(move |request: ApprovalRequest| {
            let log = answer_log.clone();
            async move {
                Ok::<_, BoxError>(
                    scripted_answer(&request, ApprovalScript::Named(default), DEFAULT_SCRIPTED_TIMEOUT, &log).await,
                )
            }
        });
        let (printer, mut printed) = tokio::sync::mpsc::unbounded_channel();
        let mut link = Link::new(registry, log);
        link.journal = journal;
        link.outcomes = Some(printer);
        writeln!(out, "{}", serde_json::json!({"listening": path.display().to_string()}))?;
        out.flush()?;
        let server = link::serve_on_own_thread(Arc::new(link), listener, stop.clone())?;
        loop {
            tokio::select! {
                line = printed.recv() => match line {
                    Some(line) => {
                        writeln!(out, "{}", crate::sanitize::json_line(&line))?;
                        out.flush()?;
                    }
                    None => break,
                },
                _ = signals::terminated() => break,
            }
        }
        stop.cancel();
        let _ = tokio::task::spawn_blocking(move || server.join()).await;
        let _ = std::fs::remove_file(&path);
        return Ok(ExitCode::SUCCESS);
    }

    let (events, mut receiver) = AppEventSender::new();
    let log = crate::session::provenance::DecisionLog::default();
    let registry = ToolRegistry::new();
    let mut handles = crate::session::observer::attach(&registry, &events);
    let mut policy_handles = crate::session::policy::install(&registry, &policy, &log);
    let reload_log = log.clone();
    let mut link = Link::new(registry.clone(), log.clone());
    link.journal = journal;
    link.events = Some(events.clone());
    let info = HeaderInfo {
        title: format!("serving {}", path.display()),
        source: path.display().to_string(),
        policy: args.policy.as_ref().map(|p| p.display().to_string()),
        journal: args.journal.as_ref().map(|p| p.display().to_string()),
        agents: Some(0),
    };
    let mut app = App::new(
        registry.clone(),
        ScopeEntry::tree(std::slice::from_ref(&link.root)),
        info,
        Instant::now(),
    );
    app.decisions = Some(log.clone());
    handles.push(registry.set_approval_answerer(ConsoleAnswerer {
        events: events.clone(),
        timeout: approval_timeout,
        always: Arc::clone(&app.always),
        log,
        registry: registry.clone(),
    }));
    app.batches = crate::tui::app::History::new(args.history.limits());
    app.journal = link.journal.as_ref().map(|j| j.reader());
    app.note(format!("listening for agents on {}", path.display()));
    let link = Arc::new(link);
    let server = link::serve_on_own_thread(Arc::clone(&link), listener, stop.clone())?;
    let policy_path: Option<PathBuf> = args.policy.clone();
    let mut guard = crate::tui::terminal::TerminalGuard::enter()?;
    let input = crossterm::event::EventStream::new();
    let result =
        crate::tui::console::run_loop(
            &mut guard.terminal,
            &mut app,
            input,
            &mut receiver,
            |command, app| match command {
                Command::KeepRule(rule) => {
                    let (message, reload) = crate::session::always::persist::keep_into(policy_path.as_deref(), &rule);
                    app.note(crate::sanitize::escape(&message));
                    if reload {
                        reload_policy(&registry, &mut policy_handles, policy_path.as_deref(), &reload_log, app);
                    }
                }
                Command::ReloadPolicy => {
                    reload_policy(&registry, &mut policy_handles, policy_path.as_deref(), &reload_log, app);
                }
                Command::RunNextBatch => app.note("serving: agents run their own batches"),
                Command::ApproveDefinition(held) => approve_definition(&link, &events, *held),
                Command::Quit | Command::Suspend => {}
            },
        )
        .await;
    drop(guard);
    stop.cancel();
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::task::spawn_blocking(move || server.join()),
    )
    .await;
    let _ = std::fs::remove_file(&path);
    drop((policy_handles, handles));
    result.map(|()| ExitCode::SUCCESS)
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

/// Re-reads the policy file; the new rules go in before the old ones leave,
/// and a file with errors changes nothing.
fn reload_policy(
    registry: &ToolRegistry,
    handles: &mut Vec<tether_tools::Registration>,
    path: Option<&std::path::Path>,
    log: &DecisionLog,
    app: &mut App,
) {
    match path.map(|p| (p, Policy::load(p))) {
        Some((p, Ok(policy))) => {
            let old = std::mem::replace(handles, crate::session::policy::install(registry, &policy, log));
            drop(old);
            app.update(AppEvent::PolicyReloaded {
                path: p.display().to_string(),
                rules: policy.rules.len(),
            });
        }
        Some((_, Err(errors))) => app.update(AppEvent::PolicyRejected {
            message: errors.first().map(ToString::to_string).unwrap_or_default(),
        }),
        None => app.update(AppEvent::PolicyRejected {
            message: "no policy file was given (--policy)".into(),
        }),
    }
}
