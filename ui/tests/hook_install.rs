//! `tether hook install`: where each agent reads its hooks, what the
//! installed command is, the timeouts, and Codex's trust entries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

fn install(home: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    hook(home, env, "install", args)
}

/// `tether hook ACTION ARGS` with only `HOME` (and `env`) set.
fn hook(home: &Path, env: &[(&str, &Path)], action: &str, args: &[&str]) -> Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tether"));
    command
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .args(["hook", action])
        .args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn install_merges_the_bridge_without_clobbering_other_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = json!({"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]}]}});
    std::fs::write(&settings, mine.to_string()).unwrap();
    let project = dir.path().to_str().unwrap();
    let run = || install(dir.path(), &[], &["claude-code", "--write", "--project", project]);
    assert!(run().status.success());
    assert!(run().status.success(), "a second install changes nothing");
    let merged = read(&settings);
    assert_eq!(merged["model"], "opus");
    let pre = merged["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{merged:#}");
    assert_eq!(pre[0]["hooks"][0]["command"], "my-linter");
    for event in ["PreToolUse", "PermissionRequest", "PostToolUse"] {
        let groups = merged["hooks"][event].as_array().unwrap();
        let ours = &groups[groups.len() - 1];
        assert_eq!(ours["matcher"], "*", "{event}");
        assert!(
            ours["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .contains(" hook claude-code "),
            "{event}"
        );
    }
    std::fs::write(&settings, "{broken").unwrap();
    let refused = run();
    assert!(!refused.status.success());
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{broken",
        "nothing was changed"
    );
}

#[test]
fn the_command_is_this_executable_unless_tether_on_path_is_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().to_str().unwrap();
    let settings = dir.path().join(".claude/settings.json");
    let tmp = dir.path().join("tmp");
    assert!(
        install(
            dir.path(),
            &[("TMPDIR", &tmp)],
            &["claude-code", "--write", "--project", project]
        )
        .status
        .success()
    );
    let command = read(&settings)["hooks"]["PreToolUse"][0]["hooks"][0]["command"].clone();
    let exe = Path::new(env!("CARGO_BIN_EXE_tether")).canonicalize().unwrap();
    // The default socket is named too, absolute: an agent that gives its
    // hooks less of the environment still reaches the same console.
    let uid = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").unwrap().uid()
    };
    let socket = tmp.join(format!("tether-{uid}")).join("console.sock");
    assert_eq!(
        command,
        format!(
            "{} hook claude-code --deadline 135 --socket {}",
            exe.display(),
            socket.display()
        )
    );
    // With this very binary on PATH the command is plain `tether`, and
    // another socket is named.
    let bin = exe.parent().unwrap();
    let output = std::process::Command::new(&exe)
        .env("PATH", bin)
        .env("HOME", dir.path())
        .args([
            "--approval-timeout",
            "30",
            "hook",
            "install",
            "claude-code",
            "--write",
            "--project",
            project,
        ])
        .args(["--socket", "/tmp/elsewhere.sock"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let hook = read(&settings)["hooks"]["PreToolUse"][0]["hooks"][0].clone();
    assert_eq!(
        hook,
        json!({"type": "command", "command": "tether hook claude-code --deadline 45 --socket /tmp/elsewhere.sock", "timeout": 60}),
        "updated in place; agent timeout 60 > deadline 45 > approval timeout 30"
    );
}

#[test]
fn codex_hooks_go_to_codex_home_and_the_installer_warns_they_need_trust() {
    let dir = tempfile::tempdir().unwrap();
    let codex_home = dir.path().join("elsewhere");
    let output = install(dir.path(), &[("CODEX_HOME", &codex_home)], &["codex", "--write"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        !dir.path().join(".codex").exists(),
        "not ~/.codex when CODEX_HOME is set"
    );
    let hooks = read(&codex_home.join("hooks.json"));
    for event in ["PreToolUse", "PermissionRequest", "PostToolUse"] {
        let handler = &hooks["hooks"][event][0];
        assert!(handler.get("matcher").is_none(), "no matcher: every tool");
        assert!(
            handler["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .contains(" hook codex ")
        );
    }
    assert!(text(&output).contains("Codex skips hooks it has not been told to trust, silently"));
    assert!(text(&output).contains("--trust"));
    assert!(!codex_home.join("config.toml").exists());
    let home_default = install(dir.path(), &[], &["codex", "--write"]);
    assert!(home_default.status.success());
    assert!(
        dir.path().join(".codex/hooks.json").exists(),
        "~/.codex without CODEX_HOME"
    );
    let project = install(dir.path(), &[], &["codex", "--project", "."]);
    assert!(!project.status.success());
    assert!(text(&project).contains("CODEX_HOME"));
}

#[test]
fn trust_writes_codex_review_entries_and_keeps_the_users_config() {
    let dir = tempfile::tempdir().unwrap();
    let codex_home = dir.path().join("codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config =
        "# my settings\nmodel = \"gpt-5.5\"   # keep this comment\n\n[model_providers.mock]\nname = \"mock\"\n";
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    let output = install(
        dir.path(),
        &[("CODEX_HOME", &codex_home)],
        &["codex", "--write", "--trust"],
    );
    assert!(output.status.success(), "{}", text(&output));
    let written = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(
        written.starts_with(config),
        "the user's text is kept as it was:\n{written}"
    );
    let parsed: toml_edit::DocumentMut = written.parse().unwrap();
    let state = parsed["hooks"]["state"].as_table().unwrap();
    let hooks_json = codex_home.join("hooks.json");
    let keys: Vec<String> = state.iter().map(|(k, _)| k.to_owned()).collect();
    assert_eq!(
        keys,
        ["pre_tool_use", "permission_request", "post_tool_use"].map(|e| format!("{}:{e}:0:0", hooks_json.display()))
    );
    // The hash covers the handler as written (see trust.rs for the vectors
    // checked against `codex app-server` hooks/list).
    let hooks = read(&hooks_json);
    let expected = tether_console::agents::hooks::trust::entries(&hooks_json, &hooks, |_| true);
    for entry in &expected {
        assert_eq!(state[&entry.key]["trusted_hash"].as_str(), Some(entry.hash.as_str()));
        assert!(text(&output).contains(&entry.hash), "shown before it is written");
    }
    let again = install(
        dir.path(),
        &[("CODEX_HOME", &codex_home)],
        &["codex", "--write", "--trust"],
    );
    assert!(again.status.success());
    assert_eq!(
        std::fs::read_to_string(codex_home.join("config.toml")).unwrap(),
        written,
        "idempotent"
    );
    let claude = install(dir.path(), &[], &["claude-code", "--trust"]);
    assert!(!claude.status.success(), "--trust is for Codex");
}

#[test]
fn a_broken_codex_config_leaves_both_files_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let codex_home = dir.path().join("codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(codex_home.join("config.toml"), "model = [broken").unwrap();
    let output = install(
        dir.path(),
        &[("CODEX_HOME", &codex_home)],
        &["codex", "--write", "--trust"],
    );
    assert!(!output.status.success());
    assert!(!codex_home.join("hooks.json").exists());
    assert_eq!(
        std::fs::read_to_string(codex_home.join("config.toml")).unwrap(),
        "model = [broken"
    );
}

#[test]
fn uninstall_after_install_gives_back_the_exact_original_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().to_str().unwrap();
    let settings = dir.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // Compact, odd spacing, no final newline: nothing a JSON printer would write.
    let mine = "{\"model\":\"opus\",  \"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"my-linter\"}]}]}}";
    std::fs::write(&settings, mine).unwrap();
    for _ in 0..2 {
        let output = install(dir.path(), &[], &["claude-code", "--write", "--project", project]);
        assert!(output.status.success(), "{}", text(&output));
    }
    assert_ne!(std::fs::read_to_string(&settings).unwrap(), mine);
    let dry = hook(dir.path(), &[], "uninstall", &["claude-code", "--project", project]);
    assert!(dry.status.success(), "{}", text(&dry));
    assert!(text(&dry).contains("nothing was written"), "{}", text(&dry));
    assert_ne!(
        std::fs::read_to_string(&settings).unwrap(),
        mine,
        "a dry run changes nothing"
    );
    let output = hook(
        dir.path(),
        &[],
        "uninstall",
        &["claude-code", "--write", "--project", project],
    );
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), mine, "byte for byte");
    assert!(text(&output).contains("next:"), "{}", text(&output));

    // Codex, with no hooks.json and no config.toml before: both go again.
    let codex_home = dir.path().join("codex");
    let env = [("CODEX_HOME", codex_home.as_path())];
    let output = install(dir.path(), &env, &["codex", "--write", "--trust"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(codex_home.join("hooks.json").exists() && codex_home.join("config.toml").exists());
    let output = hook(dir.path(), &env, "uninstall", &["codex", "--write"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(!codex_home.join("hooks.json").exists(), "{}", text(&output));
    assert!(!codex_home.join("config.toml").exists(), "{}", text(&output));
}

#[test]
fn uninstall_after_a_later_change_removes_only_the_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().to_str().unwrap();
    let settings = dir.path().join(".claude/settings.json");
    assert!(
        install(dir.path(), &[], &["claude-code", "--write", "--project", project])
            .status
            .success()
    );
    let mut changed = read(&settings);
    changed["model"] = json!("sonnet");
    changed["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]}));
    std::fs::write(&settings, changed.to_string()).unwrap();
    let output = hook(
        dir.path(),
        &[],
        "uninstall",
        &["claude-code", "--write", "--project", project],
    );
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(
        read(&settings),
        json!({"model": "sonnet", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]}]}})
    );
    let again = hook(
        dir.path(),
        &[],
        "uninstall",
        &["claude-code", "--write", "--project", project],
    );
    assert!(text(&again).contains("no Tether hook"), "{}", text(&again));
}

#[test]
fn the_installers_say_what_to_do_next_and_their_advice_works() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().to_str().unwrap();
    let dry = install(dir.path(), &[], &["claude-code", "--project", project]);
    assert!(
        text(&dry).contains("nothing was written: run again with --write"),
        "{}",
        text(&dry)
    );
    let written = install(dir.path(), &[], &["claude-code", "--project", project, "--write"]);
    let said = text(&written);
    assert!(said.contains("next: start the console (`tether serve`)"), "{said}");
    assert!(
        said.contains(&format!(
            "`tether hook uninstall claude-code --project {project} --write`"
        )),
        "{said}"
    );
    // The installer tells the user to pass --approval-timeout to itself: it is taken.
    assert!(
        said.contains("`tether hook install claude-code --approval-timeout SECS`"),
        "{said}"
    );
    let advised = install(
        dir.path(),
        &[],
        &["claude-code", "--project", project, "--approval-timeout", "30"],
    );
    assert!(advised.status.success(), "{}", text(&advised));
    assert!(text(&advised).contains("--deadline 45"), "{}", text(&advised));
}

#[test]
fn mcp_install_dry_run_says_would_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".mcp.json");
    let servers = r#"{"mcpServers": {"notes": {"command": "notes-server", "args": ["--db", "n.db"]}}}"#;
    std::fs::write(&config, servers).unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", dir.path())
            .args([
                "mcp",
                "install",
                "claude-code",
                "--project",
                dir.path().to_str().unwrap(),
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let dry = text(&run(&[]));
    assert!(dry.contains("`notes-server --db n.db` would run as"), "{dry}");
    assert!(!dry.contains("now runs as"), "{dry}");
    assert!(dry.contains("nothing was written"), "{dry}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), servers);
    let written = text(&run(&["--write"]));
    assert!(written.contains("now runs as"), "{written}");
    assert!(
        written.contains("next: start the console (`tether serve`)"),
        "{written}"
    );
}

/// `tether hook ACTION ARGS` writing into a pipe nobody reads any more (as
/// `… | head -1` leaves it).
fn hook_into_closed_pipe(home: &Path, action: &str, args: &[&str]) -> Output {
    // A pipe whose reading end is gone: the stdin of a process that has
    // already exited (`std::io::pipe` is newer than the workspace's MSRV).
    let mut gone = std::process::Command::new("true")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let writer = gone.stdin.take().unwrap();
    gone.wait().unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .args(["hook", action])
        .args(args)
        .stdout(writer)
        .output()
        .unwrap()
}

#[test]
fn a_reader_that_stops_early_is_no_failure_once_the_change_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().to_str().unwrap();
    let settings = dir.path().join(".claude").join("settings.json");
    let args = ["claude-code", "--write", "--project", project];
    let installed = hook_into_closed_pipe(dir.path(), "install", &args);
    assert_eq!(installed.status.code(), Some(0), "{}", text(&installed));
    assert!(
        read(&settings)["hooks"]["PreToolUse"].is_array(),
        "the install was done"
    );
    let removed = hook_into_closed_pipe(dir.path(), "uninstall", &args);
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed));
    assert!(!settings.exists(), "the uninstall was done");
}
