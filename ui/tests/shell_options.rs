//! `SHELL -Xc SCRIPT` argv (what Codex and the link send): options that
//! change how the shell reads or runs the script leave it to denies only.
//! bash's `-k` makes `NAME=VALUE` words after the program its environment:
//! `git status GIT_CONFIG_COUNT=1 …` then configures git to run a program,
//! shown here with the real bash and git; the same script under `-lc` is
//! covered and runs nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};

use tether_console::shell::{Script, catalogue};

mod real_bash_support;
use real_bash_support::have_bash;

fn covered(argv: &[&str], cwd: &Path) -> bool {
    let argv: Vec<String> = argv.iter().map(|w| (*w).to_owned()).collect();
    Script::argv(&argv).segments.is_ok_and(|segments| {
        !segments.is_empty()
            && segments
                .iter()
                .all(|segment| catalogue::covers(segment, Some(cwd)).is_ok())
    })
}

fn run(argv: &[&str], cwd: &Path) {
    Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
}

#[test]
fn bash_k_makes_words_an_environment_and_is_not_covered() {
    if !have_bash() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    run(&["git", "init", "-q", "-b", "main"], p);
    let pwned = p.join("pwned");
    let script = format!(
        "git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch {}'",
        pwned.display()
    );
    // The same words under -lc are pathspecs: covered, nothing runs.
    assert!(covered(&["bash", "-lc", &script], p));
    run(&["bash", "-lc", &script], p);
    assert!(!pwned.exists(), "under -lc git runs no fsmonitor");
    // The control: under -k git runs the program.
    run(&["bash", "-kc", &script], p);
    assert!(pwned.exists(), "under -k the words configure git to run touch");
    for flags in ["-kc", "-lkc", "-fc", "-ic"] {
        assert!(!covered(&["bash", flags, &script], p), "bash {flags} is not covered");
    }
    for flags in ["-c", "-lc", "-ec", "-xec", "-euc"] {
        assert!(covered(&["bash", flags, "git status"], p), "bash {flags} git status");
    }
    // A deny still finds the program behind any option.
    let found = Script::argv(&["bash".into(), "-kc".into(), "rm -rf x".into()]).found;
    assert!(found.iter().any(|c| c.first().is_some_and(|p| p == "rm")), "{found:?}");
}
