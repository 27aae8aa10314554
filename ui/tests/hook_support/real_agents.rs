//! Running a real agent with the bridge installed: a temporary home, the
//! scripted model, `tether serve --headless` and the agent's CLI.
// Each test file that runs agents uses its own part of this harness.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::mock_model::{MockModel, Script};

#[path = "agent_home.rs"]
mod agent_home;
pub use agent_home::{agent_dirs, install, printed, report_hook_durations};

pub const SECRET: &str = "SECRET-4242-8686";

/// Stands for the project directory (made by each run) in a scripted step.
pub const PROJECT: &str = "@PROJECT@";

/// Calls no rule names run, so each run shows what its own rules and
/// answers do.
pub const POLICY: &str = r#"{"default": "allow", "rules": [
  {"id": "no-policy-denied", "stage": "pre-execute", "match": {"args": [{"pointer": "/command", "regex": "policy-denied"}]}, "action": {"type": "deny", "reason": "POLICY-SAYS-NO"}},
  {"id": "escalation-asks", "stage": "pre-execute", "match": {"args": [{"pointer": "/description", "regex": "ESCALATE"}]}, "action": {"type": "ask", "reason": "the sandbox is left"}},
  {"id": "ask-a-human", "stage": "pre-execute", "match": {"args": [{"pointer": "/command", "regex": "needs-approval"}]}, "action": {"type": "ask", "reason": "a file is written"}},
  {"id": "no-secrets", "stage": "post-execute", "result": {"regex": "SECRET-[0-9]+"}, "action": {"type": "block", "reason": "WITHHELD-BY-TETHER: the result holds a secret"}}
]}"#;

pub static AGENT_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
}

/// How the console answers, or no console at all.
#[derive(Clone, Copy, Debug)]
pub enum Console {
    Answer(&'static str),
    NotRunning,
}

pub fn cli_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("TETHER_CI_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tether-ci"),
        PathBuf::from,
    );
    let bin = cache.join("npm/node_modules/.bin");
    if bin.join("claude").exists() && bin.join("codex").exists() {
        return Some(bin);
    }
    let message = format!(
        "the real agents are not installed in {} (npm install --prefix {} @anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0)",
        bin.display(),
        cache.join("npm").display()
    );
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run the real agents: {message}"
    );
    eprintln!("SKIPPED: {message}");
    None
}

/// The Claude Code CLI to run: `TETHER_CLAUDE_CODE` when set (CI runs the
/// Claude Code tests a second time against the older pin kept in its own
/// npm prefix), else the one in `bin` (the current pin).
pub fn claude_code(bin: &Path) -> PathBuf {
    let Some(chosen) = std::env::var_os("TETHER_CLAUDE_CODE").filter(|c| !c.is_empty()) else {
        return bin.join("claude");
    };
    let chosen = PathBuf::from(chosen);
    assert!(
        chosen.exists(),
        "TETHER_CLAUDE_CODE names {}, which does not exist",
        chosen.display()
    );
    chosen
}

pub fn tether() -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
}

/// `tether serve --headless` on a socket in `dir`; its printed lines are kept.
pub struct Serve {
    _child: tokio::process::Child,
    lines: Arc<Mutex<Vec<Value>>>,
}

pub async fn serve(dir: &Path, answer: &str) -> Serve {
    let mut child = tether()
        .arg("--log-dir")
        .arg(dir.join("logs"))
        .args(["serve", "--headless", "--answer", answer, "--socket"])
        .arg(dir.join("console.sock"))
        .arg("--policy")
        .arg(dir.join("policy.json"))
        .arg("--journal")
        .arg(dir.join("journal.jsonl"))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = stdout.next_line().await.unwrap().unwrap();
    assert!(first.contains("listening"), "{first}");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&lines);
    tokio::spawn(async move {
        while let Ok(Some(line)) = stdout.next_line().await {
            kept.lock()
                .unwrap()
                .push(serde_json::from_str(&line).unwrap_or(json!(line)));
        }
    });
    Serve { _child: child, lines }
}

/// One agent run, after the fact.
pub struct Run {
    pub dir: tempfile::TempDir,
    pub model: MockModel,
    pub decisions: Vec<Value>,
    pub output: String,
}

impl Run {
    pub fn project(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    pub fn file_exists(&self, name: &str) -> bool {
        self.project().join(name).exists()
    }

    /// Whether some request to the model carried `text`.
    pub fn model_saw(&self, text: &str) -> bool {
        self.model.requests().iter().any(|(_, body)| body.contains(text))
    }

    /// The console's journal, a record a line.
    pub fn journal(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("journal.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn explain(&self) -> String {
        let requests: Vec<String> = self
            .model
            .requests()
            .iter()
            .map(|(p, b)| format!("{p}: {b:.600}"))
            .collect();
        format!(
            "console printed: {:#?}\nagent printed (tail): {}\nmodel requests: {requests:#?}",
            self.decisions,
            &self.output[tail_start(&self.output, 3000)..]
        )
    }
}

/// Where the last `len` bytes of `text` start, moved forward to a
/// character's start (the agent prints `—` and the like).
fn tail_start(text: &str, len: usize) -> usize {
    let mut start = text.len().saturating_sub(len);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    start
}

/// The agent's CLI as the tests start it: the scripted model on
/// `model_port`, a home of its own, in `proj`, its output collected (Claude
/// Code is the pin `claude_code` names; Codex runs `codex_args`).
pub fn agent_command(
    agent: Agent,
    bin: &Path,
    model_port: u16,
    (home, proj, codex_home): (&Path, &Path, &Path),
    codex_args: &[&str],
) -> tokio::process::Command {
    let mut command = match agent {
        Agent::ClaudeCode => {
            let mut c = tokio::process::Command::new(claude_code(bin));
            c.env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{model_port}"))
                .env("ANTHROPIC_API_KEY", "dummy")
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                .args([
                    "-p",
                    "do the thing",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--include-hook-events",
                ]);
            c
        }
        Agent::Codex => {
            let mut c = tokio::process::Command::new(bin.join("codex"));
            c.env("CODEX_HOME", codex_home)
                .env("MOCK_API_KEY", "dummy")
                .args(codex_args)
                .arg("do the thing");
            c
        }
    };
    command
        .env_remove("CI")
        .env("PATH", env_path())
        .env("HOME", home)
        .current_dir(proj)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

pub fn env_path() -> std::ffi::OsString {
    std::env::var_os("PATH").unwrap_or_default()
}

/// How `codex exec` runs: the default (approval policy never, sandboxed
/// writes), or `--approve-for-me`, where escalations raise PermissionRequest.
pub const CODEX_EXEC: &[&str] = &["exec", "--skip-git-repo-check", "-s", "workspace-write"];
pub const CODEX_APPROVE_FOR_ME: &[&str] = &["exec", "--skip-git-repo-check", "--approve-for-me"];

/// Installs the bridge into a temporary home, starts the console (or not)
/// and runs the agent on one scripted tool call.
pub async fn run(agent: Agent, console: Console, step: Value) -> Option<Run> {
    run_codex_as(CODEX_EXEC, agent, console, step).await
}

pub async fn run_codex_as(codex_args: &[&str], agent: Agent, console: Console, step: Value) -> Option<Run> {
    run_under(POLICY, codex_args, agent, console, step).await
}

/// A private key in the agent's home (`HOME_DIR/.ssh/id_rsa` in a step):
/// a test can check it never reaches the model.
pub const PRIVATE_KEY: &str = "PRIVATE-KEY-7d1f";

/// The step's `HOME_DIR` is the agent's temporary home.
pub const HOME_DIR: &str = "/HOME-OF-THE-AGENT";

/// [`run_codex_as`] with the console deciding under `policy`.
pub async fn run_under(policy: &str, codex_args: &[&str], agent: Agent, console: Console, step: Value) -> Option<Run> {
    run_script(policy, codex_args, agent, console, script_for(agent, step)).await
}

/// The scripted model's one `step`, in `agent`'s API.
pub fn script_for(agent: Agent, step: Value) -> Script {
    match agent {
        Agent::ClaudeCode => Script {
            anthropic: vec![step],
            ..Script::default()
        },
        Agent::Codex => Script {
            openai: vec![step],
            ..Script::default()
        },
    }
}

/// [`run_under`] with a whole script (several turns, a subagent's own).
pub async fn run_script(
    policy: &str,
    codex_args: &[&str],
    agent: Agent,
    console: Console,
    script: Script,
) -> Option<Run> {
    run_configured(policy, codex_args, agent, console, script, "").await
}

/// Codex's configuration for its subagent tools (`spawn_agent`, `wait_agent`
/// in the `collaboration` namespace), off by default in 0.171.0.
pub const CODEX_SUBAGENTS: &str = "[features]\nmulti_agent_v2 = true\n\n[agents]\nenabled = true\n";

/// [`run_script`], with `codex_config` added to Codex's `config.toml`.
pub async fn run_configured(
    policy: &str,
    codex_args: &[&str],
    agent: Agent,
    console: Console,
    script: Script,
    codex_config: &str,
) -> Option<Run> {
    let extra = Extra {
        prepare: &|_| {},
        claude_args: &[],
    };
    run_prepared(policy, codex_args, agent, console, script, codex_config, extra).await
}

/// What a run adds to the usual: files put in the project before the agent
/// starts, and arguments after Claude Code's own (`--tools Bash,Grep`).
pub struct Extra<'a> {
    pub prepare: &'a dyn Fn(&Path),
    pub claude_args: &'a [&'a str],
}

/// [`run_configured`], with [`Extra`].
pub async fn run_prepared(
    policy: &str,
    codex_args: &[&str],
    agent: Agent,
    console: Console,
    script: Script,
    codex_config: &str,
    extra: Extra<'_>,
) -> Option<Run> {
    let bin = cli_dir()?;
    let (dir, home, proj) = agent_dirs(policy);
    std::fs::write(proj.join("secret.txt"), format!("token={SECRET}\n")).unwrap();
    (extra.prepare)(&proj);
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), format!("{PRIVATE_KEY}\n")).unwrap();
    let placed = |steps: Vec<Value>| -> Vec<Value> {
        steps
            .into_iter()
            .map(|step| {
                let step = step
                    .to_string()
                    .replace(PROJECT, &proj.to_string_lossy())
                    .replace(HOME_DIR, &home.to_string_lossy());
                serde_json::from_str(&step).unwrap()
            })
            .collect()
    };
    let model = MockModel::start(Script {
        anthropic: placed(script.anthropic),
        openai: placed(script.openai),
        subagent: placed(script.subagent),
    })
    .await;
    let codex_home = home.join("codex_home");
    let socket = dir.path().join("console.sock");
    install(agent, (&home, &codex_home), &socket, model.port, codex_config).await;
    let serve = match console {
        Console::Answer(answer) => Some(serve(dir.path(), answer).await),
        Console::NotRunning => None,
    };
    let _slot = AGENT_SLOTS.acquire().await.unwrap();
    let mut command = agent_command(agent, &bin, model.port, (&home, &proj, &codex_home), codex_args);
    if agent == Agent::ClaudeCode {
        command.args(extra.claude_args);
    }
    let started = Instant::now();
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("the agent finished within 180 s")
        .unwrap();
    eprintln!("{agent:?} {console:?}: the agent ran {:.1?}", started.elapsed());
    let output = printed(&output);
    if agent == Agent::ClaudeCode {
        report_hook_durations(&home);
    }
    // The console prints a decision as soon as it is made; the agent is done.
    let decisions = serve.map(|s| s.lines.lock().unwrap().clone()).unwrap_or_default();
    Some(Run {
        dir,
        model,
        decisions,
        output,
    })
}
