//! The read-only catalogue and the order of a pattern's matches. bash
//! passes a pattern's matches sorted by the user's locale (`strcoll`), which
//! Tether cannot know: `Zlink z` in `C`, `z Zlink` in `en_US.UTF-8`. So a
//! command whose words change roles with that order (`grep *`: the first
//! match is the pattern, the rest are read) must not be covered. Every
//! command of the corpus that Tether covers is run here by the real bash
//! under both locales, in a scratch project whose `Zlink` leads out of it to
//! a secret, and none may print the secret; the control shows the order
//! really flips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod real_bash_support;
use real_bash_support::{bash_with, covered, have_bash};

/// What the secret outside the project holds (a line `grep z` finds).
const MARK: &str = "zz TOPSECRET";

/// Commands an agent may run with a pattern of several matches.
const CORPUS: &[&str] = &[
    "grep *",
    "grep -e *",
    "grep -h *",
    "grep -n -- *",
    "grep -f *",
    "grep -c z *",
    "cat *",
    "head -n 1 *",
    "wc -l *",
    "diff *",
    "cmp *",
    "ls *",
    "echo *",
    "sort *",
    "uniq *",
    "rg *",
    "rg z *",
    "git grep *",
];

/// A locale whose collation is not bytewise, built with `localedef` (the
/// `locales` package's sources) into a scratch `LOCPATH`.
fn en_us(dir: &Path) -> Option<PathBuf> {
    let locpath = dir.join("loc");
    std::fs::create_dir_all(&locpath).unwrap();
    let built = Command::new("localedef")
        .args(["-i", "en_US", "-f", "UTF-8"])
        .arg(locpath.join("en_US.UTF-8"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        assert!(
            std::env::var_os("CI").is_none(),
            "localedef and the en_US locale's sources (Debian's `locales`) must be installed in CI"
        );
        eprintln!("skipped: cannot build the en_US.UTF-8 locale with localedef");
        return None;
    }
    Some(locpath)
}

/// What bash prints running `command` in `cwd` under `locale`.
fn bash(command: &str, cwd: &Path, locpath: &Path, locale: &str) -> String {
    bash_with(
        command,
        &[],
        cwd,
        &[("LOCPATH", locpath.as_os_str()), ("LC_ALL", OsStr::new(locale))],
    )
}

/// `root/project` with `z` and `Zlink` (a link to `root/outside/secret.txt`).
fn project(root: &Path) -> PathBuf {
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/secret.txt"), format!("{MARK}\n")).unwrap();
    let p = root.join("project");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("z"), "hi\n").unwrap();
    std::os::unix::fs::symlink("../outside/secret.txt", p.join("Zlink")).unwrap();
    p
}

#[test]
fn no_covered_command_reads_through_a_link_out_in_any_order_of_its_matches() {
    if !have_bash() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(locpath) = en_us(dir.path()) else {
        return;
    };
    let cwd = project(dir.path());
    // The control: the locale changes which match is the pattern.
    assert!(!bash("grep *", &cwd, &locpath, "C").contains("TOPSECRET"));
    assert!(
        bash("grep *", &cwd, &locpath, "en_US.UTF-8").contains("TOPSECRET"),
        "under en_US.UTF-8 bash passes `z Zlink`: grep reads the link"
    );
    assert!(!covered("grep *", &cwd), "`grep *` is not covered");
    let mut leaks = Vec::new();
    for command in CORPUS.iter().filter(|c| covered(c, &cwd)) {
        for locale in ["C", "en_US.UTF-8"] {
            let out = bash(command, &cwd, &locpath, locale);
            if out.contains("TOPSECRET") {
                leaks.push(format!("`{command}` under {locale}: {out}"));
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
fn a_pattern_whose_matches_are_each_safe_in_every_role_stays_covered() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for name in ["a.rs", "b.rs", "Cargo.toml", "README.md"] {
        std::fs::write(p.join(name), "x\n").unwrap();
    }
    for ok in [
        "grep x *",
        "grep -n x *.rs",
        "cat *",
        "wc -l *.rs",
        "head -n 3 *",
        "ls *",
        "echo *",
        "diff *.rs",
        // The first match is the pattern, the others files: each is a safe
        // file, and any text a pattern, so every order is safe.
        "grep *",
        "grep -e * x",
        "rg *",
    ] {
        assert!(covered(ok, p), "{ok} is covered");
    }
    // Roles that are not all patterns and paths (a count, a number of
    // lines) still change with the order.
    for refused in ["grep -m * x", "head -n *", "grep -A *"] {
        assert!(!covered(refused, p), "{refused} is not covered");
    }
}

/// `tether explain`'s exit status for `command` in `cwd` with `GLOBIGNORE`
/// set (or not) in its environment, and what it printed.
fn explain(command: &str, cwd: &Path, globignore: Option<&str>) -> (bool, String) {
    let mut explain = Command::new(env!("CARGO_BIN_EXE_tether"));
    explain.args(["explain", "--cwd"]).arg(cwd).args(["--", command]);
    explain.env_remove("GLOBIGNORE");
    if let Some(value) = globignore {
        explain.env("GLOBIGNORE", value);
    }
    let out = explain.stdin(Stdio::null()).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn with_globignore_in_the_environment_no_pattern_is_covered() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for name in ["a.rs", "b.rs"] {
        std::fs::write(p.join(name), "x\n").unwrap();
    }
    assert!(explain("cat *.rs", p, None).0, "covered without GLOBIGNORE");
    let (covered, out) = explain("cat *.rs", p, Some("b.rs"));
    assert!(!covered, "not covered with GLOBIGNORE: {out}");
    assert!(out.contains("GLOBIGNORE is set"), "{out}");
    assert!(
        explain("cat a.rs", p, Some("b.rs")).0,
        "a word without a pattern stays covered"
    );
}

#[test]
fn a_match_read_as_an_options_file_and_one_walked_are_not_one_role() {
    if !have_bash() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(locpath) = en_us(dir.path()) else {
        return;
    };
    let p = dir.path().join("p");
    std::fs::create_dir_all(p.join("Zsecrets")).unwrap();
    std::fs::write(p.join("Zsecrets/.env"), "API_KEY=TOPSECRET\n").unwrap();
    std::fs::write(p.join("afile"), "x\n").unwrap();
    let command = "grep -r -e . -f *";
    // The control: under en_US.UTF-8 `afile` is the patterns' file and
    // `Zsecrets` is walked.
    assert!(!bash(command, &p, &locpath, "C").contains("TOPSECRET"));
    assert!(bash(command, &p, &locpath, "en_US.UTF-8").contains("TOPSECRET"));
    assert!(!covered(command, &p), "`{command}` is not covered");
}
