//! A real agent whose calls are answered by a person at the console: `tether
//! serve` in a pseudo-terminal (the shared pty harness) instead of
//! `--headless --answer`, the bridge installed against its socket, and the
//! test's keys typed while the agent waits — for answers no script gives,
//! such as an edit before approving.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::mock_model::MockModel;
use crate::pty_support;
use crate::real_agents::*;

/// One run answered on screen, after the fact.
pub struct ScreenRun {
    pub run: Run,
    /// The console's journal, read after it quit.
    pub journal: Vec<Value>,
}

/// Runs `agent` on one scripted `step` under `policy`, with `tether serve`
/// in a terminal; `answer` types at it (from a blocking thread) while the
/// agent waits.
pub async fn run_on_screen(
    agent: Agent,
    policy: &str,
    step: Value,
    answer: impl FnOnce(&mut pty_support::Console) + Send + 'static,
) -> Option<ScreenRun> {
    let bin = cli_dir()?;
    let (dir, home, proj) = agent_dirs(policy);
    let model = MockModel::start(script_for(agent, step)).await;
    let socket = dir.path().join("console.sock");
    let codex_home = home.join("codex_home");
    install(agent, (&home, &codex_home), &socket, model.port, "").await;
    let mut console = serve_in_terminal(dir.path(), &[]);
    let _slot = AGENT_SLOTS.acquire().await.unwrap();
    let mut command = agent_command(agent, &bin, model.port, (&home, &proj, &codex_home), CODEX_EXEC);
    let agent_run = command.spawn().unwrap();
    let console = tokio::task::spawn_blocking(move || {
        answer(&mut console);
        console
    })
    .await
    .unwrap();
    let output = finished(agent_run).await;
    let journal = tokio::task::spawn_blocking(move || console.quit()).await.unwrap();
    Some(ScreenRun {
        run: Run {
            dir,
            model,
            decisions: Vec::new(),
            output,
        },
        journal,
    })
}

/// Two runs of an agent, after the fact.
pub struct TwoRuns {
    pub dir: tempfile::TempDir,
    /// What each run printed (stdout, then stderr).
    pub outputs: [String; 2],
    /// The console's journal, read after it quit.
    pub journal: Vec<Value>,
}

impl TwoRuns {
    pub fn project(&self) -> std::path::PathBuf {
        self.dir.path().join("proj")
    }
}

/// Runs `agent` twice in one project against one `tether serve` in a
/// terminal (its approvals time out after `timeout` seconds): each run a new
/// agent session, each with a scripted model of its own making the call in
/// `steps`. `answer` types at the console during the first run only.
pub async fn two_runs_on_screen(
    agent: Agent,
    policy: &str,
    steps: [Value; 2],
    timeout: &str,
    answer: impl FnOnce(&mut pty_support::Console) + Send + 'static,
) -> Option<TwoRuns> {
    let bin = cli_dir()?;
    let (dir, home, proj) = agent_dirs(policy);
    let socket = dir.path().join("console.sock");
    let codex_home = home.join("codex_home");
    let mut console = serve_in_terminal(dir.path(), &["--approval-timeout", timeout]);
    let mut outputs = Vec::new();
    let mut answer = Some(answer);
    for step in steps {
        let model = MockModel::start(script_for(agent, step)).await;
        install(agent, (&home, &codex_home), &socket, model.port, "").await;
        let _slot = AGENT_SLOTS.acquire().await.unwrap();
        let mut command = agent_command(agent, &bin, model.port, (&home, &proj, &codex_home), CODEX_EXEC);
        let agent_run = command.spawn().unwrap();
        console = match answer.take() {
            Some(answer) => tokio::task::spawn_blocking(move || {
                answer(&mut console);
                console
            })
            .await
            .unwrap(),
            None => console,
        };
        outputs.push(finished(agent_run).await);
    }
    let journal = tokio::task::spawn_blocking(move || console.quit()).await.unwrap();
    let [first, second] = <[String; 2]>::try_from(outputs).unwrap();
    Some(TwoRuns {
        dir,
        outputs: [first, second],
        journal,
    })
}

/// `tether GLOBAL… serve --socket DIR/console.sock --policy
/// DIR/policy.json` in a terminal, once it listens.
fn serve_in_terminal(dir: &Path, global: &[&str]) -> pty_support::Console {
    let (socket, policy) = (dir.join("console.sock"), dir.join("policy.json"));
    let mut args = global.to_vec();
    args.extend([
        "serve",
        "--socket",
        socket.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    let console = pty_support::Console::spawn(&pty_support::strings(&args), true);
    console.wait_for("listening for agents");
    console
}

/// What the agent printed, once it ends (within 180 s).
async fn finished(agent_run: tokio::process::Child) -> String {
    let output = tokio::time::timeout(Duration::from_secs(180), agent_run.wait_with_output())
        .await
        .expect("the agent finished within 180 s")
        .unwrap();
    printed(&output)
}
