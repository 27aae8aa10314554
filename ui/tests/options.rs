//! Options that can be written before or after the subcommand: the same
//! value wherever written, and refused (saying where they go) on a command
//! that would ignore them. Run through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty_support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pty_support::{Served, asking};
use serde_json::Value;

fn tether(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether")).args(args).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn approval_timeout_before_serve_applies_to_serve() {
    let dir = Served::dir_with(&[
        ("ask.json", &asking("remember", "remembering is asked")),
        (
            "batch.json",
            r#"{"session": {"session_id": "s1"}, "tools": [{"name": "remember", "body": {"return": 1}}],
            "calls": [{"id": "c1", "name": "remember", "arguments": "{}"}]}"#,
        ),
    ]);
    let mut served = Served::console_after(dir, &["--approval-timeout", "1"], &["--policy", "{dir}/ask.json"], None);
    let mut agent = served.send(&served.path("batch.json"));
    let console = served.screen();
    // Nobody answers: with the option applied the call fails after 1 s; the
    // default would hold it for 120 s, past this bound.
    let bound = Instant::now() + pty_support::DEADLINE;
    while agent.try_wait().unwrap().is_none() {
        if Instant::now() > bound {
            agent.kill().unwrap();
            panic!(
                "the call still waits: --approval-timeout before `serve` was ignored\n{}",
                console.contents()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = agent.wait_with_output().unwrap();
    let outcome: Value = serde_json::from_str(String::from_utf8_lossy(&output.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(outcome["code"], "UNAVAILABLE", "{outcome}");
    console.wait_for("no answer in 1 s");
    served.quit();
}

#[test]
fn approval_timeout_is_refused_where_it_would_do_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.json");
    std::fs::write(&file, "{}").unwrap();
    let file = file.to_str().unwrap();
    for args in [
        vec!["--approval-timeout", "5", "check", file],
        vec!["--approval-timeout", "5", "send", file],
        vec!["--approval-timeout", "5", "serve", "--headless"],
        vec!["serve", "--headless", "--approval-timeout", "5"],
        vec!["--approval-timeout", "5", "replay", file, "--headless"],
        vec!["--approval-timeout", "5", "mcp", "proxy", "--", "true"],
        vec![
            "mcp",
            "uninstall",
            "claude-code",
            "--project",
            file,
            "--approval-timeout",
            "5",
        ],
    ] {
        let output = tether(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?} was accepted");
        let text = stderr(&output);
        assert!(
            text.contains("--approval-timeout does nothing for `tether "),
            "{args:?}: {text}"
        );
        assert!(
            text.contains("`tether serve`"),
            "the refusal says where it goes: {text}"
        );
    }
}

#[test]
fn approval_timeout_given_before_and_after_must_agree() {
    let output = tether(&["--approval-timeout", "2", "replay", "x.json", "--approval-timeout", "5"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--approval-timeout is given twice (2 before `tether replay`, 5 after it)"),
        "{}",
        stderr(&output)
    );
}

/// `tether hook install claude-code` (a dry run) for a project in `dir`.
fn hook_install(dir: &Path, before: &[&str], after: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .env("HOME", dir)
        .args(before)
        .args(["hook", "install", "claude-code", "--project", dir.to_str().unwrap()])
        .args(after)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn approval_timeout_after_hook_install_means_what_it_means_before() {
    let dir = tempfile::tempdir().unwrap();
    let before = hook_install(dir.path(), &["--approval-timeout", "30"], &[]);
    let after = hook_install(dir.path(), &[], &["--approval-timeout", "30"]);
    assert!(before.contains("--deadline 45"), "{before}");
    assert_eq!(before, after);
    // The bridge takes it too: its default deadline follows it.
    let output = tether(&["hook", "codex", "--approval-timeout", "0"]);
    assert_eq!(output.status.code(), Some(2), "zero is refused as everywhere else");
}

/// `--log-dir` changes nothing for a command that writes no log and
/// protects nothing, so it is accepted there (a shell alias that carries
/// it keeps working); no log is written for it.
#[test]
fn log_dir_is_accepted_where_no_log_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../demos/quickstart.json");
    let scenario = scenario.to_str().unwrap();
    let batch = Path::new(env!("CARGO_MANIFEST_DIR")).join("../demos/batch.send.json");
    let batch = batch.to_str().unwrap();
    let socket = dir.path().join("none.sock");
    for (args, code) in [
        (vec!["--log-dir", logs.to_str().unwrap(), "check", scenario], 0),
        (vec!["check", scenario, "--log-dir", logs.to_str().unwrap()], 0),
        (
            vec![
                "send",
                batch,
                "--socket",
                socket.to_str().unwrap(),
                "--log-dir",
                logs.to_str().unwrap(),
            ],
            3,
        ),
    ] {
        let output = tether(&args);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {}", stderr(&output));
        assert!(!stderr(&output).contains("--log-dir"), "{args:?}: {}", stderr(&output));
    }
    assert!(!logs.exists(), "nothing was logged");
}

#[test]
fn a_headless_replay_logs_to_the_log_dir_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../demos/quickstart.json");
    let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../demos/quickstart.policy.json");
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(&logs)
        .arg("replay")
        .arg(&demo)
        .arg("--policy")
        .arg(&policy)
        .arg("--headless")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(logs.join("tether.log").exists(), "--log-dir was ignored");
}

/// `tether serve --headless --socket SOCKET`, with `env`, until it listens
/// (then stopped) or exits; its exit status and stderr.
fn serve_on(socket: &Path, env: &[(&str, &Path)]) -> (Option<i32>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    command.args(["serve", "--headless", "--answer", "reject"]);
    if !socket.as_os_str().is_empty() {
        command.arg("--socket").arg(socket);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.as_mut().unwrap()), &mut first).unwrap();
    if first.contains("listening") {
        child.kill().unwrap();
    }
    let output = child.wait_with_output().unwrap();
    (output.status.code(), stderr(&output))
}

#[test]
fn serve_creates_no_directory_for_a_socket_path_the_user_gave() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent").join("dir");
    let (code, said) = serve_on(&missing.join("x.sock"), &[]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains(&format!("{} does not exist", missing.display())),
        "{said}"
    );
    assert!(!dir.path().join("nonexistent").exists(), "no directory was made");
}

#[cfg(unix)]
#[test]
fn serve_creates_only_its_own_default_directory_private() {
    use std::os::unix::fs::PermissionsExt;
    if Path::new("/run/user").join(uid().to_string()).is_dir() {
        // The default is the user's own runtime directory there, not ours to test in.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let (_, said) = serve_on(Path::new(""), &[("TMPDIR", &tmp)]);
    let own = tmp.join(format!("tether-{}", uid()));
    assert!(own.is_dir(), "{said}");
    assert_eq!(std::fs::metadata(&own).unwrap().permissions().mode() & 0o777, 0o700);
    // A temp directory that is not there is not Tether's to make.
    let gone = dir.path().join("gone");
    let (code, said) = serve_on(Path::new(""), &[("TMPDIR", &gone)]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains(&format!("{} does not exist", gone.display())), "{said}");
    assert!(!gone.exists());
}

#[test]
fn an_approval_timeout_of_zero_is_refused_in_words() {
    for args in [
        vec!["--approval-timeout", "0", "serve"],
        vec!["serve", "--approval-timeout", "0"],
        vec!["replay", "--approval-timeout", "0"],
        vec!["hook", "install", "codex", "--approval-timeout", "0"],
    ] {
        let output = tether(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains("an approval timeout is at least 1 second"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// Our uid, as the default socket's directory names it.
fn uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

#[cfg(unix)]
#[test]
#[allow(clippy::print_stderr)]
fn the_default_socket_is_the_same_with_or_without_xdg_runtime_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (runtime, tmp) = (dir.path().join("run"), dir.path().join("tmp"));
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    if Path::new("/run/user").join(uid().to_string()).is_dir() {
        // The user's own runtime directory is the default there; this test
        // would share it with a console the user runs.
        eprintln!("SKIPPED: /run/user/{} exists", uid());
        return;
    }
    let batch = dir.path().join("batch.json");
    std::fs::write(
        &batch,
        r#"{"session": {"session_id": "s1"}, "tools": [{"name": "remember", "body": {"return": 1}}],
            "calls": [{"id": "c1", "name": "remember", "arguments": "{}"}]}"#,
    )
    .unwrap();
    let send = |runtime: Option<&Path>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
        command.env("TMPDIR", &tmp).env_remove("XDG_RUNTIME_DIR");
        if let Some(runtime) = runtime {
            command.env("XDG_RUNTIME_DIR", runtime);
        }
        command.arg("send").arg(&batch).output().unwrap()
    };
    // Nobody listens yet: the refusal names the path it tried, the same path
    // whether the runtime directory is in the environment or not.
    let expected = tmp.join(format!("tether-{}", uid())).join("console.sock");
    for runtime in [Some(runtime.as_path()), None] {
        let said = stderr(&send(runtime));
        assert!(
            said.contains("the Tether console is not running")
                && said.contains(&format!("nothing listens on {}", expected.display())),
            "{runtime:?}: {said}"
        );
    }

    // A console started where XDG_RUNTIME_DIR is set is found by a client
    // that was not given it (as Codex starts its MCP servers).
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .env("TMPDIR", &tmp)
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["serve", "--headless", "--answer", "approve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.as_mut().unwrap()), &mut first).unwrap();
    let sent = send(None);
    child.kill().unwrap();
    let _ = child.wait();
    assert!(first.contains(&expected.display().to_string()), "{first}");
    assert!(sent.status.success(), "{}", stderr(&sent));
}
