//! A real agent whose calls are answered by a person at the console: `tether
//! serve` in a pseudo-terminal (the shared pty harness) instead of
//! `--headless --answer`, the bridge installed against its socket, and the
//! test's keys typed while the agent waits — for answers no script gives,
//! such as an edit before approving.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::mock_model::{MockModel, Script};
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
    let dir = tempfile::tempdir().unwrap();
    let (home, proj) = (dir.path().join("home"), dir.path().join("proj"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(dir.path().join("policy.json"), policy).unwrap();
    let model = MockModel::start(match agent {
        Agent::ClaudeCode => Script {
            anthropic: vec![step],
            ..Script::default()
        },
        Agent::Codex => Script {
            openai: vec![step],
            ..Script::default()
        },
    })
    .await;
    let socket = dir.path().join("console.sock");
    let codex_home = home.join("codex_home");
    install(agent, &home, &codex_home, &socket, model.port).await;
    let mut console = pty_support::Console::spawn(
        &pty_support::strings(&[
            "serve",
            "--socket",
            socket.to_str().unwrap(),
            "--policy",
            dir.path().join("policy.json").to_str().unwrap(),
        ]),
        true,
    );
    console.wait_for("listening for agents");
    let _slot = AGENT_SLOTS.acquire().await.unwrap();
    let mut command = agent_command(agent, &bin, model.port, (&home, &proj, &codex_home), CODEX_EXEC);
    let agent_run = command.spawn().unwrap();
    let console = tokio::task::spawn_blocking(move || {
        answer(&mut console);
        console
    })
    .await
    .unwrap();
    let output = tokio::time::timeout(Duration::from_secs(180), agent_run.wait_with_output())
        .await
        .expect("the agent finished within 180 s")
        .unwrap();
    let output = format!(
        "{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
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

/// `tether hook install --write` for `agent` into `home`, against `socket`.
async fn install(agent: Agent, home: &Path, codex_home: &Path, socket: &Path, port: u16) {
    let mut install = tether();
    install
        .env_clear()
        .env("PATH", env_path())
        .env("HOME", home)
        .args(["hook", "install", "--write", "--socket"])
        .arg(socket);
    match agent {
        Agent::ClaudeCode => {
            install.arg("claude-code");
        }
        Agent::Codex => {
            std::fs::create_dir_all(codex_home).unwrap();
            std::fs::write(
                codex_home.join("config.toml"),
                format!(
                    "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n"
                ),
            )
            .unwrap();
            install.env("CODEX_HOME", codex_home).args(["codex", "--trust"]);
        }
    }
    let installed = install.output().await.unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
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
    let dir = tempfile::tempdir().unwrap();
    let (home, proj) = (dir.path().join("home"), dir.path().join("proj"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(dir.path().join("policy.json"), policy).unwrap();
    let socket = dir.path().join("console.sock");
    let codex_home = home.join("codex_home");
    let mut console = pty_support::Console::spawn(
        &pty_support::strings(&[
            "--approval-timeout",
            timeout,
            "serve",
            "--socket",
            socket.to_str().unwrap(),
            "--policy",
            dir.path().join("policy.json").to_str().unwrap(),
        ]),
        true,
    );
    console.wait_for("listening for agents");
    let mut outputs = Vec::new();
    let mut answer = Some(answer);
    for step in steps {
        let model = MockModel::start(match agent {
            Agent::ClaudeCode => Script {
                anthropic: vec![step],
                ..Script::default()
            },
            Agent::Codex => Script {
                openai: vec![step],
                ..Script::default()
            },
        })
        .await;
        install(agent, &home, &codex_home, &socket, model.port).await;
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
        let output = tokio::time::timeout(Duration::from_secs(180), agent_run.wait_with_output())
            .await
            .expect("the agent finished within 180 s")
            .unwrap();
        outputs.push(format!(
            "{}\n--- stderr\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let journal = tokio::task::spawn_blocking(move || console.quit()).await.unwrap();
    let [first, second] = <[String; 2]>::try_from(outputs).unwrap();
    Some(TwoRuns {
        dir,
        outputs: [first, second],
        journal,
    })
}
