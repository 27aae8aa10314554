//! What a serving session does for a key pressed on any of its screens (the
//! main console or one attached), and the door attached consoles come in by.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tether_tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

use crate::agents::link::Link;
use crate::cli::ServeArgs;
use crate::session::journal::ReloadedBy;
use crate::session::provenance::DecisionLog;
use crate::session::screens::ScreenHub;
use crate::tui::app::{App, AppEvent, AppEventSender, Command, HeldTool, ScreenRole};
use crate::tui::remote;

/// Opens the door: its one-time code is what attaching and `tether web
/// pair` ask for. With `listener` (`--attach`), consoles come in by it: the
/// door builds each one's screen like `template` and runs its keys'
/// commands through `controller`. Without (`--web` alone), only pairing
/// asks for its code, and no console can attach.
pub(super) fn open_door(
    args: &ServeArgs,
    hub: &ScreenHub,
    events: &AppEventSender,
    template: &App,
    controller: &Arc<Controller>,
    listener: Option<tokio::net::UnixListener>,
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
    if let Some(listener) = listener {
        tokio::spawn(remote::serve(Arc::clone(&door), listener, stop.clone()));
    }
    Ok(door)
}

/// What a key asks of a serving session, from any of its screens.
pub(super) struct Controller {
    registry: ToolRegistry,
    policy_handles: Mutex<Vec<tether_tools::Registration>>,
    policy_path: Option<PathBuf>,
    link: Arc<Link>,
    events: AppEventSender,
    log: DecisionLog,
    /// The answering page, with `--web`: `W` pairs a device with it.
    web: std::sync::OnceLock<Arc<crate::web::Web>>,
}

impl Controller {
    pub(super) fn new(
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
            web: std::sync::OnceLock::new(),
        })
    }

    /// `W` pairs phones and browsers with `web` from now on.
    pub(super) fn pair_with(&self, web: &Arc<crate::web::Web>) {
        let _ = self.web.set(Arc::clone(web));
    }

    pub(super) fn run(&self, command: Command, app: &mut App) {
        match command {
            Command::KeepRule(rule) => {
                let (message, reload) = crate::session::always::persist::keep_into(self.policy_path.as_deref(), &rule);
                app.note(crate::sanitize::escape(&message));
                if reload {
                    self.reload_policy(crate::tui::keys::reloaded_by_keeping());
                }
            }
            Command::ReloadPolicy => {
                self.reload_policy(crate::tui::keys::reloaded_by_key());
            }
            Command::RunNextBatch => app.note("serving: agents run their own batches"),
            Command::ApproveDefinition(held) => approve_definition(&self.link, &self.events, *held),
            Command::PairWeb => match self.web.get().map(|web| web.pairing_link()) {
                Some(Ok(url)) => {
                    let qr = crate::web::qr_code(&url).lines().map(str::to_owned).collect();
                    app.overlay = crate::tui::app::Overlay::Pairing { url, qr };
                }
                Some(Err(error)) => app.note(format!("no pairing link could be drawn: {error}")),
                None => app.note("W pairs a phone or browser with `tether serve --web` (this console has no web page)"),
            },
            Command::Quit | Command::Suspend => {}
        }
    }

    /// Re-reads the policy file for `by`; the new rules go in before the
    /// old ones leave, and a file with errors changes nothing. The journal
    /// records either, and every screen is told; so is the caller.
    pub(super) fn reload_policy(&self, by: ReloadedBy) -> AppEvent {
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
