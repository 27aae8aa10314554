//! Review finding F4 through the real `tether hook claude-code` and `tether
//! hook codex` bridges against a console holding the starter policy (its
//! human rejects whatever is asked): commands that leak when zsh runs them
//! (`=ls` is a path outside the project, `^x.txt` with EXTENDED_GLOB and
//! GLOB_DOTS is every other name, `.env` too) are not allowed, as a string
//! and as the `["zsh", "-lc", SCRIPT]` argv Codex sends; a fish script is
//! allowed by no rule. The control: each harms when the real zsh runs it,
//! and a plain read is still allowed through both bridges.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/link_console.rs"]
mod link_console;

use std::path::Path;
use std::process::{Command, Stdio};

use link_console::Asker;
use serde_json::{Value, json};
use tether_console::files::policy::Starter;

const SECRET: &str = "SECRET-F4-zsh";

/// A project with a secret at its top and one two levels down.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("a/b")).unwrap();
    std::fs::write(p.join("a/b/credentials.json"), format!("{SECRET}\n")).unwrap();
    std::fs::write(p.join(".env"), format!("KEY={SECRET}\n")).unwrap();
    std::fs::write(p.join("x.txt"), "x\n").unwrap();
    dir
}

/// Commands zsh runs harmfully, each with the options under which it
/// does, as the agent sends them (a string, or an argv).
fn leaks() -> Vec<(Value, &'static [&'static str])> {
    vec![
        (json!("head -c 4 =ls"), &[]),
        (json!("cat =ls"), &[]),
        (json!("cat ^x.txt"), &["extendedglob", "globdots"]),
        (json!("cat **.json"), &["globstarshort"]),
        (json!(["zsh", "-lc", "head -c 4 =ls"]), &[]),
        (json!(["zsh", "-lc", "cat =ls"]), &[]),
        (json!(["zsh", "-lc", "cat ^x.txt"]), &["extendedglob", "globdots"]),
        (json!(["fish", "-c", "cat **.json"]), &[]),
    ]
}

/// The bridge's answer to one Bash call whose `command` is `command`
/// (string or argv), and whether the agent would run it.
async fn allowed(agent: &str, socket: &Path, command: &Value, cwd: &Path) -> bool {
    let mut input: Value = serde_json::from_str(&bridge::fixture(&format!("{agent}-pre-bash.json"))).unwrap();
    input["tool_input"]["command"] = command.clone();
    input["cwd"] = json!(cwd);
    let printed = bridge::hook_raw(agent, socket, &input.to_string(), &[]).await;
    let answer = printed.answer();
    match agent {
        "claude-code" => answer["hookSpecificOutput"]["permissionDecision"] == "allow",
        _ => answer.get("hookSpecificOutput").is_none() && answer.get("decision").is_none() && printed.status == 0,
    }
}

/// What the real zsh prints running `command` in `cwd` with `options`.
fn zsh(command: &Value, options: &[&str], cwd: &Path) -> Option<String> {
    let zsh = ["/usr/bin/zsh", "/bin/zsh"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let (program, script) = match command {
        Value::String(script) => ("zsh", script.as_str()),
        Value::Array(argv) => (argv[0].as_str().unwrap(), argv[2].as_str().unwrap()),
        _ => unreachable!(),
    };
    if program != "zsh" {
        return Some(String::new());
    }
    let mut run = Command::new(zsh);
    run.arg("-f");
    for option in options {
        run.args(["-o", option]);
    }
    let out = run
        .args(["-c", script])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Some(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zsh_forms_that_leak_are_not_allowed_through_either_bridge() {
    let project = project();
    let cwd = project.path();
    // The control: each harms under the real zsh (an ELF's magic bytes, a
    // secret printed), so no case passes by testing nothing.
    let mut checked = 0;
    for (command, options) in leaks() {
        let Some(printed) = zsh(&command, options, cwd) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have zsh (.ci/run installs it)"
            );
            eprintln!("skipped the zsh control: no zsh at /usr/bin/zsh");
            break;
        };
        if command.is_array() && command[0] != "zsh" {
            continue;
        }
        assert!(
            printed.contains(SECRET) || printed.contains("ELF"),
            "{command} with {options:?} harms under zsh: {printed}"
        );
        checked += 1;
    }
    assert!(checked == 0 || checked == 7, "{checked} controls");
    for (agent, starter) in [("claude-code", Starter::ClaudeCode), ("codex", Starter::Codex)] {
        let console = link_console::start(&starter.text(), Asker::Rejecting).await;
        for (command, _) in leaks() {
            assert!(
                !allowed(agent, &console.path, &command, cwd).await,
                "{agent} allowed {command}"
            );
        }
        // Plain reads still run unasked, as a string and as zsh's argv.
        for plain in [
            json!("cat x.txt"),
            json!(["zsh", "-lc", "cat x.txt"]),
            json!("grep -n '^x' x.txt"),
        ] {
            assert!(
                allowed(agent, &console.path, &plain, cwd).await,
                "{agent} did not allow {plain}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unquoted_search_runs_where_every_name_is_safe_and_a_listing_through_a_links_dotdot_does_not() {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("outside");
    std::fs::create_dir_all(outside.join("inner")).unwrap();
    std::fs::write(outside.join(format!("{SECRET}.txt")), "x\n").unwrap();
    let p = root.path().join("p");
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::create_dir_all(p.join("docs")).unwrap();
    std::fs::write(p.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(p.join("x.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink("../../outside/inner", p.join("docs/link")).unwrap();
    let listing = json!("echo docs/link/../*");
    // The control: bash opens `docs/link/..` as the kernel walks it, the
    // parent of the link's target, and prints its names.
    let out = Command::new("bash")
        .args(["-c", listing.as_str().unwrap()])
        .current_dir(&p)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains(SECRET));
    for (agent, starter) in [("claude-code", Starter::ClaudeCode), ("codex", Starter::Codex)] {
        let console = link_console::start(&starter.text(), Asker::Rejecting).await;
        assert!(
            !allowed(agent, &console.path, &listing, &p).await,
            "{agent} allowed {listing}"
        );
        // `^fn` is `docs src x.txt` under EXTENDED_GLOB, each safe as grep's
        // pattern and as a file, in any order.
        for search in [
            json!("grep ^fn src/main.rs"),
            json!(["zsh", "-lc", "grep -n ^use src/main.rs"]),
        ] {
            assert!(
                allowed(agent, &console.path, &search, &p).await,
                "{agent} did not allow {search}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_sees_the_words_zsh_makes_of_braces() {
    let project = project();
    let cwd = project.path();
    // The control: zsh with BRACE_CCL passes `--force`.
    if let Some(printed) = zsh(&json!("print -r -- --forc{e}"), &["braceccl"], cwd) {
        assert_eq!(printed.trim(), "--force");
    }
    let policy = r#"{"default": "allow", "rules": [
        {"id": "no-force-push", "stage": "pre-execute", "match": {"tool": "Bash", "command": ["git push --force *"]}, "action": {"type": "deny", "reason": "no force pushing"}}
    ]}"#;
    let console = link_console::start(policy, Asker::Rejecting).await;
    for agent in ["claude-code", "codex"] {
        for command in [
            json!("git push --forc{e} origin main"),
            json!("git push --force origin main"),
        ] {
            assert!(
                !allowed(agent, &console.path, &command, cwd).await,
                "{agent} allowed {command}"
            );
        }
        assert!(allowed(agent, &console.path, &json!("git push origin main"), cwd).await);
    }
}
