//! `tether serve --headless`: no screen; one JSON line per outcome, approvals
//! answered as `--answer` says or by a console attached with `tether attach`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use tether_tools::{ApprovalRequest, BoxError};
use tokio_util::sync::CancellationToken;

use crate::agents::link::{self, Link};
use crate::cli::ServeArgs;
use crate::files::scenario::ApprovalScript;
use crate::session::approval::ConsoleAnswerer;
use crate::session::journal::ReloadedBy;
use crate::session::provenance::ReviewVerdict;
use crate::session::replay::{DEFAULT_SCRIPTED_TIMEOUT, scripted_answer};
use crate::session::screens::ScreenHub;
use crate::session::signals;
use crate::tui::app::{App, AppEvent, AppEventReceiver, AppEventSender, HeaderInfo, ScopeEntry};

use super::controller::{Controller, open_door};

/// `tether serve --headless`: one JSON line per outcome on `out`; approvals
/// answered as `--answer` says, or (`attached`) by an attached console.
#[allow(clippy::too_many_arguments)]
pub(super) async fn headless(
    args: &ServeArgs,
    path: &std::path::Path,
    (mut link, listener): (Link, tokio::net::UnixListener),
    (answerer, policy_text, reviewer_problems): (ConsoleAnswerer, String, Vec<(String, String)>),
    (events, receiver): (AppEventSender, AppEventReceiver),
    (attach_listener, web): (
        Option<(tokio::net::UnixListener, PathBuf)>,
        Option<crate::web::server::Pending>,
    ),
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
    let mut web_tasks = Vec::new();
    let mut web_base = None;
    let attach_listener = attach_listener.map(|(attach, _)| attach);
    if attach_listener.is_some() {
        // Attached consoles see the batches and answer what waits. (The
        // page alone is given only the approvals: no call's stages.)
        handles.extend(crate::session::observer::attach(&registry, &events));
        link.events = Some(events.clone());
    }
    let root = link.root.clone();
    let journal = link.journal.as_ref().map(|j| j.reader());
    let link = Arc::new(link);
    let controller = Controller::new(&registry, policy_handles, args, &link, &events, log.clone());
    // With a door (--attach or --web), serve reads the events from the hub
    // as a screen would; otherwise itself: a reviewer that fails is said on
    // stdout, not only in the journal.
    let mut receiver = Some(receiver);
    if attach_listener.is_some() || web.is_some() {
        let hub = ScreenHub::spawn(receiver.take().ok_or_else(|| anyhow::anyhow!("no events to read"))?);
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
        let opened = open_door(args, &hub, &events, &template, &controller, attach_listener, &stop)?;
        if let Some(web) = web {
            controller.pair_with(&web.web);
            web_base = Some(web.bound.base.clone());
            if web.bound.insecure {
                writeln!(std::io::stderr(), "{}", web.bound.header_text())?;
            }
            web_tasks = web.open(&hub, &opened, &stop);
        }
        door = Some(opened);
    }

    // SIGHUP reloads the policy from the moment serve says it listens: a
    // hangup right after that line must not end the daemon.
    let mut hangups = signals::Hangups::new();
    // SIGTERM and Ctrl+C likewise, and once: a stop that comes while a line
    // is written is kept, never lost between two turns of the loop.
    let mut terminations = signals::Terminations::new();
    // The policy in force (its file, or none) and its default, as the
    // console's header says them.
    writeln!(
        out,
        "{}",
        serde_json::json!({"listening": path.display().to_string(), "policy": policy_text, "web": web_base})
    )?;
    for (reviewer, why) in &reviewer_problems {
        tracing::error!(reviewer, %why, "the reviewer cannot work: each call routed to it is asked");
        let line = serde_json::json!({"reviewer": reviewer, "problem": why,
                                      "effect": "each call routed to it fails its review and is asked"});
        writeln!(out, "{}", crate::sanitize::json_line(&line))?;
    }
    out.flush()?;
    let server = link::serve_on_own_thread(link, listener, stop.clone())?;
    let notify = args.console.notify.notify.with_env();
    let mut code_said = None;
    loop {
        tokio::select! {
            // A stop goes first: lines still owed are not printed after it.
            biased;
            () = terminations.next() => break,
            line = printed.recv() => match line {
                Some(line) => {
                    writeln!(out, "{}", crate::sanitize::json_line(&line))?;
                    out.flush()?;
                }
                None => break,
            },
            Some(told) = async {
                match (&mut watcher, &mut receiver) {
                    (Some(w), _) => w.events.recv_many().await,
                    (None, Some(r)) => r.recv_many().await,
                    (None, None) => std::future::pending().await,
                }
            } => {
                // Headless, the terminal serve runs in is stderr's.
                let mut err = std::io::stderr();
                for event in told {
                    match event {
                        AppEvent::AttachChanged(status) if status.code != code_said => {
                            let line = match (&status.code, args.attach) {
                                (Some(code), true) => format!("attach code {code}: tether attach --socket {} --code {code}", path.display()),
                                // --web alone: the code is only pairing's.
                                (Some(code), false) => format!("pairing code {code}: tether web pair --socket {} --code {code}", path.display()),
                                (None, _) => "no code could be drawn: nothing can attach or pair (see the log)".to_owned(),
                            };
                            writeln!(err, "{line}")?;
                            code_said = status.code;
                        }
                        AppEvent::ApprovalReminder { id } => {
                            err.write_all(&notify.bytes(1, "", ""))?;
                            writeln!(err, "approval still waiting (reminder): request {id}")?;
                        }
                        AppEvent::Reviewed { reviewer, tool, call_id, verdict: ReviewVerdict::Failed, reason, .. } => {
                            let line = serde_json::json!({"review_failed": {
                                "reviewer": &*reviewer, "tool": tool, "call_id": call_id, "reason": reason,
                            }});
                            writeln!(out, "{}", crate::sanitize::json_line(&line))?;
                            out.flush()?;
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
        }
    }
    stop.cancel();
    let _ = tokio::task::spawn_blocking(move || server.join()).await;
    for task in web_tasks {
        task.abort();
    }
    drop((handles, door, watcher, controller));
    Ok(ExitCode::SUCCESS)
}
