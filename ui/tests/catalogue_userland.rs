//! The catalogue's grammars are GNU's (and util-linux's): covered only
//! where the program `PATH` finds is that implementation, and read as it
//! reads its options in the console's environment. Each case is run by the
//! real bash first, doing what the grammar did not expect, then shown not
//! covered by the real `tether explain`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

mod real_bash_support;
use real_bash_support::{bash_with, explain_with, have_bash};

/// `TOP/outside.txt` and the project `TOP/p` with `README.md`.
fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let top = tempfile::tempdir().unwrap();
    std::fs::write(top.path().join("outside.txt"), "OUTSIDE_SECRET=zzz\n").unwrap();
    let p = top.path().join("p");
    std::fs::create_dir(&p).unwrap();
    std::fs::write(p.join("README.md"), "hello\n").unwrap();
    (top, p)
}

fn script(dir: &Path, name: &str, body: &str) {
    let file = dir.join(name);
    std::fs::write(&file, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_program_path_finds_that_is_not_the_gnu_one_is_not_covered() {
    if !have_bash() {
        return;
    }
    let (top, p) = project();
    // Outside the project: a directory the user installed BSD-like tools into.
    let bin = top.path().join("bsdbin");
    std::fs::create_dir(&bin).unwrap();
    let bsd = |name: &str| {
        format!(
            "case \"$1\" in --version) echo \"{name}: illegal option -- -\" >&2; echo \"usage: {name} [-n] [file ...]\" >&2; exit 1;; esac\necho BSD-{name}-RAN"
        )
    };
    script(&bin, "sed", &bsd("sed"));
    script(&bin, "head", &bsd("head"));
    script(
        &bin,
        "ls",
        "case \"$1\" in --version) echo 'ls (uutils coreutils) 0.0.27'; exit 0;; esac\necho UUTILS-RAN",
    );
    let path = OsString::from(format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()));
    let env = [("PATH", path.as_os_str())];
    for (command, ran, says) in [
        (
            "sed -n 1p README.md",
            "BSD-sed-RAN",
            "the `sed` PATH finds is not GNU sed's (`sed --version` says `sed: illegal option -- -`",
        ),
        (
            "head -n 1 README.md",
            "BSD-head-RAN",
            "the `head` PATH finds is not GNU coreutils's",
        ),
        (
            "ls -la",
            "UUTILS-RAN",
            "it answers `--version` with `ls (uutils coreutils) 0.0.27`",
        ),
    ] {
        assert!(bash_with(command, &[], &p, &env).contains(ran), "{command}");
        let (covered, out) = explain_with(command, &p, &env);
        assert!(!covered, "`{command}` is not covered: {out}");
        assert!(out.contains(says), "{out}");
        assert!(explain_with(command, &p, &[]).0, "`{command}` with the GNU one");
    }
    // GNU's `cat` is found past the directory that holds no `cat`.
    assert!(explain_with("cat README.md", &p, &env).0);
}

#[test]
fn under_posixly_correct_an_option_after_an_operand_is_an_operand() {
    if !have_bash() {
        return;
    }
    let (_top, p) = project();
    let posix = [("POSIXLY_CORRECT", OsStr::new("1"))];
    for command in [
        "head README.md -n ../outside.txt",
        "head README.md -c ../outside.txt",
        "nl README.md -s ../outside.txt",
        "grep = README.md --label ../outside.txt",
    ] {
        // The real GNU program reads `../outside.txt` as a file.
        let out = bash_with(command, &[], &p, &posix);
        assert!(out.contains("OUTSIDE_SECRET"), "{command}: {out}");
        let (covered, said) = explain_with(command, &p, &posix);
        assert!(!covered, "`{command}` is not covered: {said}");
        assert!(said.contains("outside the working directory"), "{said}");
    }
    // Permuting, GNU reads `-n ../outside.txt` as a count it rejects.
    assert!(!bash_with("head README.md -n ../outside.txt", &[], &p, &[]).contains("OUTSIDE_SECRET"));
    assert!(explain_with("head README.md -n 1", &p, &[]).0);
    assert!(explain_with("head -n 1 README.md", &p, &posix).0);
}

#[test]
fn a_builtins_options_end_at_its_first_operand() {
    if !have_bash() {
        return;
    }
    let (_top, p) = project();
    // bash's `command` runs `rm README.md -v`: GNU rm permutes `-v`.
    let out = bash_with("command rm README.md -v", &[], &p, &[]);
    assert!(out.contains("removed"), "{out}");
    assert!(!p.join("README.md").exists());
    std::fs::write(p.join("README.md"), "hello\n").unwrap();
    let (covered, said) = explain_with("command rm README.md -v", &p, &[]);
    assert!(!covered, "{said}");
    assert!(explain_with("command -v rm", &p, &[]).0);
}

fn have_man() -> bool {
    let found = Command::new("man")
        .arg("-w")
        .arg("man")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "man-db must be installed in CI");
        eprintln!("skipped: no man (man-db) on PATH");
    }
    found
}

#[test]
fn man_formats_a_page_the_project_holds_when_path_reaches_it_and_is_not_covered_there() {
    if !have_bash() || !have_man() {
        return;
    }
    let (_top, p) = project();
    // An activated virtualenv: `.venv/bin` first on PATH, a package's page
    // in `.venv/share/man`.
    std::fs::create_dir_all(p.join(".venv/bin")).unwrap();
    let pages = p.join(".venv/share/man/man1");
    std::fs::create_dir_all(&pages).unwrap();
    std::fs::write(
        pages.join("git.1"),
        ".TH GIT 1\n.SH NAME\ngit \\- x\n.nf\n.so /proc/self/environ\n",
    )
    .unwrap();
    let path = OsString::from(format!(
        "{}:{}",
        p.join(".venv/bin").display(),
        std::env::var("PATH").unwrap()
    ));
    let env = [("PATH", path.as_os_str()), ("FAKE_API_KEY", OsStr::new("sk-leak-777"))];
    let out = bash_with("man git | cat", &[], &p, &env);
    assert!(out.contains("sk-leak-777"), "the page prints the environment: {out}");
    let (covered, said) = explain_with("man git", &p, &env);
    assert!(!covered, "{said}");
    assert!(said.contains(".venv/bin`, so man searches"), "{said}");
    // MANPATH naming the project's pages.
    let manpath = OsString::from(format!("{}:", p.join(".venv/share/man").display()));
    let (covered, said) = explain_with("man git", &p, &[("MANPATH", manpath.as_os_str())]);
    assert!(!covered && said.contains("MANPATH holds"), "{said}");
    // The system's pages only.
    assert!(explain_with("man git", &p, &[]).0);
}
