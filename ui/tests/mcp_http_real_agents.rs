//! The MCP gateway over Streamable HTTP with the real agents: `tether mcp
//! proxy --http` in front of server-filesystem, added to Claude Code and
//! Codex with their own `mcp add` commands and the gateway's bearer token,
//! `tether serve --headless --answer reject` as the console, the scripted
//! model server as the model. The model writes two files: the policy allows
//! one, asks about the other and the console rejects it. Asserted on
//! effects: which file exists, what the model read next, the journal.
//!
//! Missing tools fail the test under `CI=true` and skip it elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/agents.rs"]
mod agents;
#[path = "mcp/http_support.rs"]
mod http_support;
#[path = "hook_support/mock_model.rs"]
mod mock_model;
#[path = "hook_support/real_agents.rs"]
mod real_agents;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use agents::*;
use serde_json::Value;

/// The token both agents are configured with (the gateway takes it from
/// `TETHER_MCP_TOKEN`, as a user's configuration that survives restarts).
const TOKEN: &str = "tether-test-token-0123456789abcdef";

/// A run's directories, its console and the gateway on a free port.
struct Run {
    root: PathBuf,
    home: PathBuf,
    proj: PathBuf,
    journal: PathBuf,
    _console: tokio::process::Child,
    decisions: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    gateway: http_support::HttpGateway,
}

impl Run {
    async fn start(bin: &Path, dir: &Path) -> Run {
        let root = dir.canonicalize().unwrap();
        let (home, proj) = (root.join("home"), root.join("proj"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        let socket = root.join("console.sock");
        let (console, decisions) = console(&root, Some(&socket), &[]).await;
        let mut args = http_support::proxy_args(
            &root,
            &socket,
            &[
                bin.join("mcp-server-filesystem").display().to_string(),
                proj.display().to_string(),
            ],
        );
        // The server's name, as the agents' tool names carry it.
        let at = args.iter().position(|a| a == "--").unwrap();
        args.splice(at..at, ["--name".to_owned(), "fs".to_owned()]);
        let state = root.join("state").display().to_string();
        let gateway = http_support::http_gateway(&args, &[("XDG_STATE_HOME", &state), ("TETHER_MCP_TOKEN", TOKEN)]);
        assert!(gateway.banner.contains("from TETHER_MCP_TOKEN"), "{}", gateway.banner);
        Run {
            journal: root.join("journal.jsonl"),
            root,
            home,
            proj,
            _console: console,
            decisions,
            gateway,
        }
    }

    fn assert_effects(&self, requests: &[Value], explain: &dyn Fn() -> String) {
        assert_only_the_allowed_note_written(&self.proj, &self.journal, &self.decisions, requests, explain);
    }

    fn explain(&self, output: &Output, requests: &[Value]) -> String {
        format!(
            "gateway: {}\nstdout: {}\nstderr: {}\njournal: {}\nmodel requests: {}",
            self.gateway.url,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            std::fs::read_to_string(&self.journal).unwrap_or_default(),
            requests
                .iter()
                .map(|r| format!("{:.1200}", r.to_string()))
                .collect::<Vec<_>>()
                .join("\n")
        )
    }
}

fn succeeded(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_over_http_writes_only_what_the_console_allows() {
    let Some(bin) = bin_dir(&["claude", "mcp-server-filesystem"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = Run::start(&bin, dir.path()).await;
    let claude = real_agents::claude_code(&bin);

    // Claude Code's own syntax, as docs/console.md gives it.
    let added = Command::new(&claude)
        .env("HOME", &run.home)
        .env_remove("CI")
        .args(["mcp", "add", "--transport", "http", "fs", &run.gateway.url, "--header"])
        .arg(format!("Authorization: Bearer {TOKEN}"))
        .current_dir(&run.proj)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    succeeded(&added, "claude mcp add");

    let model = claude_writes_notes(&run.proj).await;
    let session = |port: u16| {
        tokio::process::Command::new(&claude)
            .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("MCP_TOOL_TIMEOUT", "150000")
            .env_remove("CI")
            .env("HOME", &run.home)
            .args(["-p", "write the notes", "--output-format", "stream-json", "--verbose"])
            .args(["--allowedTools", "mcp__fs__write_file"])
            .current_dir(&run.proj)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output()
    };
    let output = after_a_first_session("Claude Code", session, model.port).await;
    let requests = model.model_requests();
    let explain = || run.explain(&output, &requests);
    assert!(
        mock_model::offered(&requests, "mcp__fs__write_file"),
        "the model was offered the gateway's tool: {}",
        explain()
    );
    run.assert_effects(&requests, &explain);
}

/// Codex's `mcp add --url … --bearer-token-env-var`, and the server's
/// `default_tools_approval_mode = "approve"` (Codex otherwise asks its own
/// approval for a tool that is not read-only, which `codex exec` refuses
/// before the gateway sees the call: the console decides).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_over_http_writes_only_what_the_console_allows() {
    let Some(bin) = bin_dir(&["codex", "mcp-server-filesystem"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = Run::start(&bin, dir.path()).await;
    let codex_home = run.root.join("codex_home");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\n\
         base_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n",
    )
    .unwrap();
    let codex = |args: &[&str]| {
        let mut command = tokio::process::Command::new(bin.join("codex"));
        command
            .env_remove("CI")
            .env("HOME", &run.home)
            .env("CODEX_HOME", &codex_home)
            .env("MOCK_API_KEY", "dummy")
            .env("TETHER_MCP_TOKEN", TOKEN)
            .args(args)
            .current_dir(&run.proj)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    };
    let added = codex(&[
        "mcp",
        "add",
        "fs",
        "--url",
        &run.gateway.url,
        "--bearer-token-env-var",
        "TETHER_MCP_TOKEN",
    ])
    .output()
    .await
    .unwrap();
    succeeded(&added, "codex mcp add");

    let model = codex_writes_notes(&run.proj).await;
    let session = |port: u16| {
        let provider = format!("model_providers.mock.base_url=\"http://127.0.0.1:{port}/v1\"");
        codex(&[
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "-c",
            &provider,
            "-c",
            "mcp_servers.fs.default_tools_approval_mode=\"approve\"",
            "write the notes",
        ])
        .output()
    };
    let output = after_a_first_session("Codex", session, model.port).await;
    let requests = model.model_requests();
    let explain = || {
        format!(
            "{}\nconfig: {}",
            run.explain(&output, &requests),
            std::fs::read_to_string(codex_home.join("config.toml")).unwrap_or_default()
        )
    };
    run.assert_effects(&requests, &explain);
}
