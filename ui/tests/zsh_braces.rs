//! A reflog entry written unquoted (`git log HEAD@{1}`) under the real
//! zsh: of all of zsh's options, set or unset one at a time, only
//! `BRACE_CCL` changes the word, into `HEAD@1` (bash never does: `{1}` has
//! no comma or range). The catalogue judges both readings: the git reads
//! are covered, and a word whose brace-less reading names a link to a
//! secret is not (the control: zsh with `BRACE_CCL` prints it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

mod real_bash_support;
use real_bash_support::covered;

/// What the real zsh, with `options` given on its command line, passes to
/// a logging stub `git` running `command` in `cwd`: `None` when nothing ran.
fn passed(zsh: &str, options: &[&str], command: &str, cwd: &Path, stubs: &Path) -> Option<String> {
    let log = stubs.join("log");
    let _ = fs::remove_file(&log);
    Command::new(zsh)
        .arg("-f")
        .args(options)
        .args(["-c", command])
        .current_dir(cwd)
        .env("PATH", stubs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    fs::read_to_string(&log).ok()
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn only_brace_ccl_changes_a_reflog_entry_and_both_readings_are_judged() {
    let Some(zsh) = ["/usr/bin/zsh", "/bin/zsh"].into_iter().find(|p| Path::new(p).exists()) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have zsh (.ci/run installs it)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p");
    let stubs = dir.path().join("stubs");
    fs::create_dir_all(&p).unwrap();
    fs::create_dir_all(&stubs).unwrap();
    fs::write(
        stubs.join("git"),
        format!("#!/bin/sh\nprintf '%s|' \"$@\" > '{}'\n", stubs.join("log").display()),
    )
    .unwrap();
    fs::set_permissions(stubs.join("git"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(p.join("x.txt"), "one\n").unwrap();
    git(&p, &["init", "-q", "-b", "main"]);
    git(&p, &["add", "."]);
    git(&p, &["commit", "-qm", "one"]);
    fs::write(p.join("x.txt"), "two\n").unwrap();
    git(&p, &["commit", "-qam", "two"]);

    let command = "git log HEAD@{1}";
    let names = Command::new(zsh)
        .args(["-f", "-c", "print -l ${(k)options}"])
        .output()
        .unwrap();
    let names = String::from_utf8(names.stdout).unwrap();
    let mut changed = Vec::new();
    for name in names.lines() {
        for set in ["-o", "+o"] {
            let word = passed(zsh, &[set, name], command, &p, &stubs);
            // NO_EXEC runs nothing.
            if word.is_some() && word.as_deref() != Some("log|HEAD@{1}|") {
                changed.push(format!("{set} {name}: {word:?}"));
            }
        }
    }
    assert_eq!(changed, ["-o braceccl: Some(\"log|HEAD@1|\")"]);
    assert_eq!(
        passed(
            zsh,
            &["-o", "braceccl", "-o", "extendedglob", "-o", "globdots"],
            command,
            &p,
            &stubs
        )
        .as_deref(),
        Some("log|HEAD@1|")
    );
    // The real git reads `HEAD@1` as nothing it knows: an error, no read.
    let real = Command::new(zsh)
        .args(["-f", "-o", "braceccl", "-c", command])
        .current_dir(&p)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&real.stderr).contains("ambiguous argument 'HEAD@1'"));
    for command in [
        command,
        "git show HEAD@{1}",
        "git diff HEAD@{2} HEAD",
        "git log --oneline main@{0}",
    ] {
        assert!(covered(command, &p), "`{command}` is covered");
    }

    // The control: where `notes@1` is a link to a secret, zsh with
    // BRACE_CCL reads it; bash reads the file `notes@{1}`.
    fs::write(p.join(".env"), "KEY=TOPSECRET\n").unwrap();
    fs::write(p.join("notes@{1}"), "notes\n").unwrap();
    std::os::unix::fs::symlink(".env", p.join("notes@1")).unwrap();
    let out = Command::new(zsh)
        .args(["-f", "-o", "braceccl", "-c", "cat notes@{1}"])
        .current_dir(&p)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("TOPSECRET"));
    assert!(!covered("cat notes@{1}", &p), "`cat notes@{{1}}` is not covered");
    assert!(covered("cat 'notes@{1}'", &p), "quoted, no shell changes it");
}

#[test]
fn deny_and_ask_rules_see_every_word_zsh_makes_of_braces() {
    let Some(zsh) = ["/usr/bin/zsh", "/bin/zsh"].into_iter().find(|p| Path::new(p).exists()) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have zsh (.ci/run installs it)"
        );
        return;
    };
    for words in [
        "--forc{e}",
        "-r{f}",
        "x{a-c}y",
        "{ba}{12}",
        "x{-a}y",
        "x{a-}y",
        "x{z-a}y",
        "x{aa}y",
        "a{b}c{d}e",
        "HEAD@{1}",
        "HEAD@{10}",
        "x{.txt}",
    ] {
        let out = Command::new(zsh)
            .args(["-f", "-o", "braceccl", "-c", &format!("print -l -- {words}")])
            .output()
            .unwrap();
        let real: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let found = tether_console::shell::Script::parse(&format!("echo {words}")).found;
        let mut expected = vec!["echo".to_owned()];
        expected.extend(real.iter().cloned());
        assert!(
            found.contains(&expected),
            "`{words}`: zsh passes {real:?}, found {found:?}"
        );
    }
    // Past the words the reader follows, the text matches every deny.
    let many = tether_console::shell::Script::parse("echo {abcdefghij}{abcdefghij}{abc}");
    assert!(many.beyond_depth && many.segments.is_err());
    assert!(!tether_console::shell::Script::parse("echo {ab}{cd}").beyond_depth);
    // A deny on `git push --force` sees `--forc{e}`, which zsh with
    // BRACE_CCL passes as `--force`.
    let found = tether_console::shell::Script::parse("git push --forc{e} origin").found;
    assert!(
        found.iter().any(|c| c == &["git", "push", "--force", "origin"]),
        "{found:?}"
    );
}
