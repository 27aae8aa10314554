//! `tether explain` reads a command the way the policy does: a `cd`
//! moves where the commands after it are judged from (issue 47), and
//! explain's verdict is the `@read-only` allow rule's, command for command.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use tether_console::shell::{CommandMatch, CommandSet, Polarity, Script};

mod real_bash_support;
use real_bash_support::explain_with;

fn explain(command: &str, cwd: &Path) -> (bool, String) {
    explain_with(command, cwd, &[])
}

/// What the policy's `@read-only` allow rule decides for `command` run in
/// `cwd`.
fn policy_covers(command: &str, cwd: &Path) -> bool {
    let rule = CommandMatch {
        patterns: Vec::new(),
        sets: vec![CommandSet::ReadOnly],
        except: Vec::new(),
        within: Vec::new(),
        polarity: Polarity::Every,
    };
    rule.holds(Some(&Script::parse(command)), Some(cwd))
}

/// A project with `src/main.rs`, a harmless `config` at its top, and a
/// repository whose `.git/config` may hold a token.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(p.join("config"), "harmless\n").unwrap();
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::write(p.join(".git/config"), "[remote]\nurl = https://u:TOKEN@host/r\n").unwrap();
    dir
}

#[test]
fn a_command_after_cd_is_judged_from_where_cd_leaves_it() {
    let dir = project();
    let p = dir.path();
    let (covered, out) = explain("cd src && cat main.rs", p);
    assert!(covered, "{out}");
    let src = p.join("src");
    assert!(out.contains(&format!("run in {}", src.display())), "{out}");
    assert!(out.contains("main.rs") && out.contains("input path"), "{out}");
}

#[test]
fn a_secret_reached_through_cd_is_refused_as_the_policy_refuses_it() {
    let dir = project();
    let p = dir.path();
    // From the project's top `config` is harmless; from .git it is the
    // repository's configuration.
    assert!(explain("cat config", p).0);
    let (covered, out) = explain("cd .git && cat config", p);
    assert!(!covered, "{out}");
    assert!(out.contains("may hold secrets"), "{out}");
}

#[test]
fn a_cd_explain_cannot_follow_leaves_what_follows_not_covered() {
    let dir = project();
    let p = dir.path();
    let (covered, out) = explain("cd /tmp && ls", p);
    assert!(!covered, "{out}");
    assert!(out.contains("outside the working directory"), "{out}");
}

#[test]
fn explain_says_what_the_policy_decides() {
    let dir = project();
    let p = dir.path();
    for command in [
        "cat config",
        "cd src && cat main.rs",
        "cd src; cat main.rs",
        "cd src || cat main.rs",
        "cd .git && cat config",
        "cd src && cat ../config",
        "cd src && cd .. && cat config",
        "cd /tmp && ls",
        "cd src | cat main.rs",
        "cd && ls",
        "ls src && cd src && ls",
    ] {
        let (covered, out) = explain(command, p);
        assert_eq!(covered, policy_covers(command, p), "{command}: {out}");
    }
}
