//! Claude Code's `Grep` under the claude-code starter, through the real
//! `tether hook claude-code` bridge (review finding N18): Grep runs
//! `rg --hidden … --glob GLOB PATTERN PATH`, and a `--glob` reads the files
//! it names even where `.gitignore` and the hidden-file filter would skip
//! them. Each call is judged as the catalogue judges that rg command, and
//! each decision is checked against the real rg running the same argv: what
//! is allowed prints no secret, and what is asked does print it (so no case
//! passes by testing nothing).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/link_console.rs"]
mod link_console;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use link_console::{Asker, LinkConsole};
use serde_json::{Value, json};
use tether_console::files::policy::{AsCommand, Starter};
use tether_tools::ApprovalAnswer;

const SECRET: &str = "SEKRIT-1818-grep";

/// A git project with a gitignored `.env` holding the secret, and code.
fn project(gitignored: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir(p.join("src")).unwrap();
    std::fs::write(p.join("src/main.rs"), "fn main() { let API_KEY = 1; }\n").unwrap();
    std::fs::write(p.join("README.md"), "hello\n").unwrap();
    std::fs::write(p.join(".env"), format!("API_KEY={SECRET}\n")).unwrap();
    if gitignored {
        std::fs::write(p.join(".gitignore"), ".env\n").unwrap();
    }
    let status = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(p)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

/// What the bridge decided for one Grep call: allowed, or asked with the
/// reason the console's human saw (and rejected).
struct Decided {
    allowed: bool,
    asked: Option<String>,
    answer: Value,
}

async fn grep(console: &mut LinkConsole, cwd: &Path, input: Value) -> Decided {
    let mut payload: Value = serde_json::from_str(&bridge::fixture("claude-code-pre-grep.json")).unwrap();
    payload["tool_input"] = input;
    payload["cwd"] = json!(cwd);
    let socket = console.path.clone();
    let mut run =
        tokio::spawn(async move { bridge::hook_raw("claude-code", &socket, &payload.to_string(), &[]).await });
    let mut asked = None;
    let printed = tokio::select! {
        printed = &mut run => printed.unwrap(),
        pending = console.asked() => {
            asked = Some(pending.request.reason().unwrap_or_default().to_owned());
            let _ = pending.reply.send(ApprovalAnswer::Rejected { reason: Some("the human said no".into()) });
            run.await.unwrap()
        }
    };
    let answer = printed.json();
    Decided {
        allowed: answer["hookSpecificOutput"]["permissionDecision"] == "allow",
        asked,
        answer,
    }
}

/// What the real rg prints for the argv Claude Code runs for `input`, in
/// `cwd` (`None` where rg is not installed and this is not CI).
fn real_rg(cwd: &Path, input: &Value) -> Option<String> {
    let argv = AsCommand::ClaudeCodeGrep.argv(input).ok()?;
    match Command::new(&argv[0]).args(&argv[1..]).current_dir(cwd).output() {
        Ok(out) => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Err(_) if std::env::var_os("CI").is_some() => panic!("rg is not installed"),
        Err(_) => {
            eprintln!("skipped comparing with the real rg: it is not installed");
            None
        }
    }
}

fn abs(dir: &Path, rel: &str) -> PathBuf {
    dir.join(rel)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grep_whose_rg_would_read_a_secret_is_asked_and_an_ordinary_one_runs_unasked() {
    let mut console = link_console::start(&Starter::ClaudeCode.text(), Asker::Test).await;
    let p = project(true);
    let root = p.path().to_str().unwrap();
    // The review's calls: a glob naming the gitignored .env reads it.
    for input in [
        json!({"pattern": "API_KEY", "glob": ".env", "output_mode": "content"}),
        json!({"pattern": "API_KEY", "path": root, "glob": "*.env", "output_mode": "content"}),
        json!({"pattern": "API_KEY", "glob": "*.{env,rs}", "output_mode": "files_with_matches"}),
        json!({"pattern": "API_KEY", "glob": "src/**,.e*", "output_mode": "count"}),
        json!({"pattern": "API_KEY", "path": abs(p.path(), ".env"), "output_mode": "content"}),
    ] {
        let decided = grep(&mut console, p.path(), input.clone()).await;
        assert!(!decided.allowed, "{input} → {}", decided.answer);
        let reason = decided
            .asked
            .unwrap_or_else(|| panic!("{input} was not asked: {}", decided.answer));
        assert!(reason.contains("Grep runs `rg --hidden"), "{input}: {reason}");
        assert!(reason.contains(".env"), "{input}: {reason}");
        if let Some(printed) = real_rg(p.path(), &input) {
            // The control: rg read .env (and prints it where it prints lines).
            let content = input["output_mode"] == "content";
            assert!(
                printed.contains(if content { SECRET } else { ".env" }),
                "{input} did not read .env: {printed}"
            );
        }
    }
    // Ordinary searches: rg --hidden reads hidden files but skips what
    // .gitignore names, and .git is excluded by Claude Code's own globs.
    for input in [
        json!({"pattern": "fn main", "path": "src"}),
        json!({"pattern": "fn main"}),
        json!({"pattern": "API_KEY", "output_mode": "content", "-C": 2, "-i": true, "head_limit": 10}),
        json!({"pattern": "main", "path": root, "glob": "*.rs", "type": "rust", "output_mode": "count", "multiline": true}),
        json!({"pattern": "-x", "path": "README.md", "-n": false, "offset": 1}),
    ] {
        let decided = grep(&mut console, p.path(), input.clone()).await;
        assert!(decided.allowed, "{input} → {:?} {}", decided.asked, decided.answer);
        if let Some(printed) = real_rg(p.path(), &input) {
            assert!(!printed.contains(SECRET), "{input} printed the secret: {printed}");
        }
    }
    // A parameter nobody accounted for is asked, naming it.
    let decided = grep(&mut console, p.path(), json!({"pattern": "x", "follow": true})).await;
    assert!(!decided.allowed, "{}", decided.answer);
    assert!(
        decided.asked.as_deref().is_some_and(|r| r.contains("`follow`")),
        "{:?}",
        decided.asked
    );
    // Outside the project is asked too.
    let decided = grep(&mut console, p.path(), json!({"pattern": "root", "path": "/etc"})).await;
    assert!(!decided.allowed && decided.asked.is_some(), "{}", decided.answer);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_nothing_ignores_the_env_file_a_plain_content_search_is_asked() {
    let mut console = link_console::start(&Starter::ClaudeCode.text(), Asker::Test).await;
    let p = project(false);
    let input = json!({"pattern": "API_KEY", "output_mode": "content"});
    let decided = grep(&mut console, p.path(), input.clone()).await;
    assert!(!decided.allowed, "{}", decided.answer);
    let reason = decided.asked.unwrap();
    assert!(reason.contains("would reach .env"), "{reason}");
    if let Some(printed) = real_rg(p.path(), &input) {
        assert!(
            printed.contains(SECRET),
            "the control: rg --hidden read .env: {printed}"
        );
    }
    // A search kept to src reaches no secret.
    let decided = grep(&mut console, p.path(), json!({"pattern": "API_KEY", "path": "src"})).await;
    assert!(decided.allowed, "{:?} {}", decided.asked, decided.answer);
}

#[test]
fn tether_check_names_an_unknown_reading_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.json");
    std::fs::write(
        &file,
        "{\"rules\": [\n  {\"id\": \"g\", \"stage\": \"pre-execute\",\n   \"match\": {\"tool\": \"Grep\", \"as_command\": \"claude-code-grepp\", \"command\": [\"@read-only\"]},\n   \"action\": {\"type\": \"allow\"}}\n]}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("p.json:3:30: unknown as_command \"claude-code-grepp\": expected \"claude-code-grep\""),
        "{said}"
    );
}
