//! The read-only catalogue under the user's shell options. Claude Code runs
//! each command in a shell that has sourced a snapshot of the user's own
//! configuration, which may `shopt -s dotglob` (`cat *` prints `.env`),
//! `nocaseglob` (`cat .E*`), `globstar` (`cat **/*` reads every level),
//! `nullglob` (`grep -r KEY nomatch*` searches `.`), `failglob` or
//! `extglob` (`cat @(.env)`). Tether cannot know which: every command it
//! covers is run here by the real bash under each setting, in a scratch
//! project holding secrets, and none may print one. Each setting also has a
//! command that does print one under it (the control: the corpus can fail).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod real_bash_support;
use real_bash_support::{bash, covered, have_bash};

/// What every secret file holds.
const MARK: &str = "TOPSECRET";

/// Commands an agent may run with file-name patterns (and extglob forms).
const CORPUS: &[&str] = &[
    "cat *",
    "head -n 5 *",
    "tail -n 5 *",
    "grep -n TOPSECRET *",
    "grep -rn TOPSECRET *",
    "wc -l *",
    "ls *",
    "cat *.md",
    "cat README*",
    "cat readme*",
    "cat .E*",
    "cat .EN?",
    "head .e*",
    "cat src/*",
    "cat **/*",
    "grep TOPSECRET **/*",
    "cat **/*.rs",
    "grep -r TOPSECRET nomatch*",
    "grep -rn TOPSECRET src nomatch*",
    "cat nomatch*",
    "cat @(.env)",
    "cat !(a.txt)",
    "cat +(.env)",
    "cat ?(.env)",
    "cat *(.env)",
    "cat @(.e*|a.txt)",
];

/// Each setting a user's config may make, and (the control) a command of
/// the corpus that prints a secret under it.
const SETTINGS: &[(&[&str], &str)] = &[
    (&[], ""),
    (&["dotglob"], "cat *"),
    (&["nocaseglob"], "cat .E*"),
    (&["globstar"], "cat **/*"),
    (&["nullglob"], "grep -r TOPSECRET nomatch*"),
    (&["failglob"], ""),
    (&["extglob"], "cat @(.env)"),
    (&["dotglob", "nocaseglob", "globstar", "nullglob", "extglob"], "cat *"),
];

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(".env"), format!("KEY={MARK}\n")).unwrap();
    std::fs::write(p.join("README.md"), "# readme\n").unwrap();
    std::fs::write(p.join("a.txt"), "a\n").unwrap();
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("src/main.rs"), "fn main() {}\n").unwrap();
    // Reached only through `**` under globstar (no pattern names it).
    std::fs::create_dir_all(p.join("deploy/prod")).unwrap();
    std::fs::write(p.join("deploy/prod/server.key"), format!("{MARK}\n")).unwrap();
    dir
}

#[test]
fn no_covered_command_prints_a_secret_under_any_shell_option() {
    if !have_bash() {
        return;
    }
    let project = project();
    let cwd = project.path();
    let mut leaks = Vec::new();
    for command in CORPUS.iter().filter(|c| covered(c, cwd)) {
        for (shopts, _) in SETTINGS {
            let out = bash(command, shopts, cwd);
            if out.contains(MARK) {
                leaks.push(format!("`{command}` with shopt -s {}: {out}", shopts.join(" ")));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "covered commands printed a secret:\n{}",
        leaks.join("\n")
    );
}

#[test]
fn each_shell_option_has_a_command_that_reads_a_secret_and_it_is_refused() {
    if !have_bash() {
        return;
    }
    let project = project();
    let cwd = project.path();
    for (shopts, control) in SETTINGS.iter().filter(|(_, c)| !c.is_empty()) {
        assert!(
            bash(control, shopts, cwd).contains(MARK),
            "`{control}` prints the secret with shopt -s {}",
            shopts.join(" ")
        );
        assert!(
            !bash(control, &[], cwd).contains(MARK),
            "`{control}` prints no secret under bash's defaults"
        );
        assert!(!covered(control, cwd), "`{control}` is not covered");
    }
}

#[test]
fn patterns_that_read_no_secret_under_any_option_stay_covered() {
    let project = project();
    let cwd = project.path();
    for ok in [
        "cat *.md",
        "cat src/*",
        "wc -l src/*.rs",
        "cat **/*.rs",
        "ls src/*",
        "cat README*",
    ] {
        assert!(covered(ok, cwd), "{ok}");
    }
}
