//! The hook bridges against the real agents: Claude Code and Codex (the
//! versions pinned in `.ci/run`), each driven by a scripted model server
//! (`hook_support/mock_model.rs`), with the bridge installed by `tether hook
//! install --write` into a temporary home and `tether serve --headless`
//! deciding. Every case asserts on effects — whether the file the tool
//! writes exists, what the model server received — never on the bridge's
//! own output.
//!
//! The CLIs are looked up in `$TETHER_CI_CACHE/npm/node_modules/.bin`
//! (default `~/.cache/tether-ci`). Missing, the tests fail when `CI` is set
//! and are skipped with a message otherwise. At most two agents run at once:
//! on two cores more only makes each slower.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/mock_model.rs"]
mod mock_model;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mock_model::{MockModel, Script};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const SECRET: &str = "SECRET-4242-8686";

/// Stands for the project directory (made by each run) in a scripted step.
const PROJECT: &str = "@PROJECT@";

const POLICY: &str = r#"{"rules": [
  {"id": "no-policy-denied", "stage": "pre-execute", "match": {"args": [{"pointer": "/command", "regex": "policy-denied"}]}, "action": {"type": "deny", "reason": "POLICY-SAYS-NO"}},
  {"id": "ask-a-human", "stage": "pre-execute", "match": {"args": [{"pointer": "/command", "regex": "needs-approval"}]}, "action": {"type": "ask", "reason": "a file is written"}},
  {"id": "no-secrets", "stage": "post-execute", "result": {"regex": "SECRET-[0-9]+"}, "action": {"type": "block", "reason": "WITHHELD-BY-TETHER: the result holds a secret"}}
]}"#;

static AGENT_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Agent {
    ClaudeCode,
    Codex,
}

/// How the console answers, or no console at all.
#[derive(Clone, Copy, Debug)]
enum Console {
    Answer(&'static str),
    NotRunning,
}

fn cli_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("TETHER_CI_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tether-ci"),
        PathBuf::from,
    );
    let bin = cache.join("npm/node_modules/.bin");
    if bin.join("claude").exists() && bin.join("codex").exists() {
        return Some(bin);
    }
    let message = format!(
        "the real agents are not installed in {} (npm install --prefix {} @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0)",
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

fn tether() -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
}

/// `tether serve --headless` on a socket in `dir`; its printed lines are kept.
struct Serve {
    _child: tokio::process::Child,
    lines: Arc<Mutex<Vec<Value>>>,
}

async fn serve(dir: &Path, answer: &str) -> Serve {
    let mut child = tether()
        .arg("--log-dir")
        .arg(dir.join("logs"))
        .args(["serve", "--headless", "--answer", answer, "--socket"])
        .arg(dir.join("console.sock"))
        .arg("--policy")
        .arg(dir.join("policy.json"))
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
struct Run {
    dir: tempfile::TempDir,
    model: MockModel,
    decisions: Vec<Value>,
    output: String,
}

impl Run {
    fn project(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn file_exists(&self, name: &str) -> bool {
        self.project().join(name).exists()
    }

    /// Whether some request to the model carried `text`.
    fn model_saw(&self, text: &str) -> bool {
        self.model.requests().iter().any(|(_, body)| body.contains(text))
    }

    fn explain(&self) -> String {
        let requests: Vec<String> = self
            .model
            .requests()
            .iter()
            .map(|(p, b)| format!("{p}: {b:.600}"))
            .collect();
        format!(
            "console printed: {:#?}\nagent printed (tail): {}\nmodel requests: {requests:#?}",
            self.decisions,
            &self.output[self.output.len().saturating_sub(3000)..]
        )
    }
}

fn env_path() -> std::ffi::OsString {
    std::env::var_os("PATH").unwrap_or_default()
}

/// Installs the bridge into a temporary home, starts the console (or not)
/// and runs the agent on one scripted tool call.
async fn run(agent: Agent, console: Console, step: Value) -> Option<Run> {
    let bin = cli_dir()?;
    let dir = tempfile::tempdir().unwrap();
    let (home, proj) = (dir.path().join("home"), dir.path().join("proj"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("secret.txt"), format!("token={SECRET}\n")).unwrap();
    std::fs::write(dir.path().join("policy.json"), POLICY).unwrap();
    let step: Value = serde_json::from_str(&step.to_string().replace(PROJECT, &proj.to_string_lossy())).unwrap();
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
    let codex_home = home.join("codex_home");
    let mut install = tether();
    install
        .env_clear()
        .env("PATH", env_path())
        .env("HOME", &home)
        .args(["hook", "install", "--write", "--socket"])
        .arg(dir.path().join("console.sock"));
    match agent {
        Agent::ClaudeCode => {
            install.arg("claude-code");
        }
        Agent::Codex => {
            std::fs::create_dir_all(&codex_home).unwrap();
            std::fs::write(
                codex_home.join("config.toml"),
                format!(
                    "# the scripted model\nmodel = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n",
                    model.port
                ),
            )
            .unwrap();
            install.env("CODEX_HOME", &codex_home).args(["codex", "--trust"]);
        }
    }
    let installed = install.output().await.unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let serve = match console {
        Console::Answer(answer) => Some(serve(dir.path(), answer).await),
        Console::NotRunning => None,
    };
    let _slot = AGENT_SLOTS.acquire().await.unwrap();
    let mut command = match agent {
        Agent::ClaudeCode => {
            let mut c = tokio::process::Command::new(bin.join("claude"));
            c.env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", model.port))
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
            c.env("CODEX_HOME", &codex_home).env("MOCK_API_KEY", "dummy").args([
                "exec",
                "--skip-git-repo-check",
                "-s",
                "workspace-write",
                "do the thing",
            ]);
            c
        }
    };
    command
        .env_remove("CI")
        .env("PATH", env_path())
        .env("HOME", &home)
        .current_dir(&proj)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let started = Instant::now();
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("the agent finished within 180 s")
        .unwrap();
    eprintln!("{agent:?} {console:?}: the agent ran {:.1?}", started.elapsed());
    let output = format!(
        "{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
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

/// Claude Code records each hook's duration in the session transcript.
fn report_hook_durations(home: &Path) {
    let mut found = Vec::new();
    let mut stack = vec![home.join(".claude/projects")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                for line in std::fs::read_to_string(&path).unwrap_or_default().lines() {
                    let line: Value = serde_json::from_str(line).unwrap_or_default();
                    let attachment = &line["attachment"];
                    if let Some(ms) = attachment["durationMs"].as_u64() {
                        found.push(format!("{}={ms}ms", attachment["hookEvent"].as_str().unwrap_or("hook")));
                    }
                }
            }
        }
    }
    eprintln!("HOOK-TIMING claude-code transcript durationMs: {}", found.join(" "));
}

fn bash(agent: Agent, command: &str) -> Value {
    match agent {
        Agent::ClaudeCode => json!({"name": "Bash", "input": {"command": command, "description": "scripted"}}),
        Agent::Codex => json!({"name": "exec_command", "arguments": {"cmd": command}}),
    }
}

async fn approved_call_runs(agent: Agent) {
    let Some(run) = run(
        agent,
        Console::Answer("approve"),
        bash(agent, "echo approved > out.txt # needs-approval"),
    )
    .await
    else {
        return;
    };
    assert!(run.file_exists("out.txt"), "{}", run.explain());
    assert!(
        run.decisions
            .iter()
            .any(|d| d["hook"] == "PreToolUse" && d["decided_by"] == "human"),
        "the console's human decided: {}",
        run.explain()
    );
}

async fn refused_call_never_runs(agent: Agent, console: Console, command: &str, reason: &str) {
    let Some(run) = run(agent, console, bash(agent, command)).await else {
        return;
    };
    assert!(!run.file_exists("out.txt"), "the tool ran: {}", run.explain());
    assert!(
        run.model_saw(reason),
        "the model never read {reason:?}: {}",
        run.explain()
    );
}

async fn secret_never_reaches_the_model(agent: Agent, step: Value) {
    let Some(run) = run(agent, Console::Answer("approve"), step).await else {
        return;
    };
    assert!(
        run.decisions
            .iter()
            .any(|d| d["hook"] == "PostToolUse" && d["code"] == "BLOCKED"),
        "the console withheld the result: {}",
        run.explain()
    );
    assert!(run.model.model_requests().len() >= 2, "{}", run.explain());
    assert!(
        !run.model_saw(SECRET),
        "the secret reached the model: {}",
        run.explain()
    );
    assert!(run.model_saw("WITHHELD-BY-TETHER"), "{}", run.explain());
}

const REJECTED: &str = "rejected by the approver";
const TIMED_OUT: &str = "approval timed out";
const DOWN: &str = "the Tether console is not running (start `tether serve`)";
const ASKED: &str = "echo hi > out.txt # needs-approval";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_an_approved_call() {
    approved_call_runs(Agent::ClaudeCode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_runs_a_rejected_call_and_the_model_reads_why() {
    refused_call_never_runs(Agent::ClaudeCode, Console::Answer("reject"), ASKED, REJECTED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_runs_a_call_whose_approval_timed_out() {
    refused_call_never_runs(Agent::ClaudeCode, Console::Answer("timeout"), ASKED, TIMED_OUT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_runs_a_call_when_the_console_is_down() {
    refused_call_never_runs(Agent::ClaudeCode, Console::NotRunning, "echo hi > out.txt", DOWN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_runs_a_call_policy_denies() {
    let command = "echo hi > out.txt # policy-denied";
    refused_call_never_runs(Agent::ClaudeCode, Console::Answer("approve"), command, "POLICY-SAYS-NO").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_shows_the_model_a_blocked_bash_result() {
    secret_never_reaches_the_model(Agent::ClaudeCode, bash(Agent::ClaudeCode, "cat secret.txt")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_never_shows_the_model_a_blocked_read_result() {
    secret_never_reaches_the_model(
        Agent::ClaudeCode,
        json!({"name": "Read", "input": {"file_path": format!("{PROJECT}/secret.txt")}}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_runs_an_approved_call() {
    approved_call_runs(Agent::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_runs_a_rejected_call_and_the_model_reads_why() {
    refused_call_never_runs(Agent::Codex, Console::Answer("reject"), ASKED, REJECTED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_runs_a_call_whose_approval_timed_out() {
    refused_call_never_runs(Agent::Codex, Console::Answer("timeout"), ASKED, TIMED_OUT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_runs_a_call_when_the_console_is_down() {
    refused_call_never_runs(Agent::Codex, Console::NotRunning, "echo hi > out.txt", DOWN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_runs_a_call_policy_denies() {
    let command = "echo hi > out.txt # policy-denied";
    refused_call_never_runs(Agent::Codex, Console::Answer("approve"), command, "POLICY-SAYS-NO").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_never_shows_the_model_a_blocked_result() {
    secret_never_reaches_the_model(Agent::Codex, bash(Agent::Codex, "cat secret.txt")).await;
}

/// Codex's own view of the installed hooks: `codex app-server` `hooks/list`
/// shows every one of them trusted, with the hash `--trust` wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_lists_the_hooks_installed_with_trust_as_trusted() {
    use tokio::io::AsyncWriteExt;
    let Some(bin) = cli_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let codex_home = dir.path().join("codex_home");
    let installed = tether()
        .env_clear()
        .env("PATH", env_path())
        .env("HOME", dir.path())
        .env("CODEX_HOME", &codex_home)
        .args(["hook", "install", "codex", "--write", "--trust"])
        .output()
        .await
        .unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let _slot = AGENT_SLOTS.acquire().await.unwrap();
    let mut server = tokio::process::Command::new(bin.join("codex"))
        .arg("app-server")
        .env_clear()
        .env("PATH", env_path())
        .env("HOME", dir.path())
        .env("CODEX_HOME", &codex_home)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap()).lines();
    for frame in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "tether-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [dir.path()]}}),
    ] {
        stdin.write_all(format!("{frame}\n").as_bytes()).await.unwrap();
    }
    let listed = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let line = stdout
                .next_line()
                .await
                .unwrap()
                .expect("app-server answered hooks/list");
            let frame: Value = serde_json::from_str(&line).unwrap_or_default();
            if frame["id"] == 2 {
                return frame;
            }
        }
    })
    .await
    .unwrap();
    let hooks: Vec<&Value> = listed["result"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["hooks"].as_array().unwrap())
        .collect();
    assert_eq!(hooks.len(), 3, "{listed:#}");
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    for hook in hooks {
        assert_eq!(hook["trustStatus"], "trusted", "{hook:#}");
        assert!(hook["command"].as_str().unwrap().contains(" hook codex "), "{hook:#}");
        assert!(config.contains(hook["currentHash"].as_str().unwrap()), "{hook:#}");
    }
}
