//! The small filters of the catalogue (tr, tac, rev, paste, comm, fold,
//! base64, od, the checksum programs, readlink, nproc, seq) against the
//! real programs: each grammar lists every long option the program's
//! `--help` lists (so an abbreviation resolves as `getopt_long` resolves
//! it) and no option the program lacks; every covered command of the
//! corpus, run by the real bash in a project holding a secret and a link
//! out, prints no secret and writes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use tether_console::shell::catalogue;

mod real_bash_support;
use real_bash_support::{bash, covered, have_bash};

const PROGRAMS: &[&str] = &[
    "tr",
    "tac",
    "rev",
    "paste",
    "comm",
    "fold",
    "base64",
    "od",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "readlink",
    "nproc",
    "seq",
];

const MARK: &str = "TOPSECRET";

/// The long options a program's `--help` lists.
fn listed(program: &str) -> Option<BTreeSet<String>> {
    let out = Command::new(program).arg("--help").stdin(Stdio::null()).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut found = BTreeSet::new();
    for line in text.lines().filter(|l| l.trim_start().starts_with('-')) {
        for (at, _) in line.match_indices("--") {
            let name: String = line[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    Some(found)
}

#[test]
fn each_grammar_lists_exactly_the_long_options_the_real_program_lists() {
    for name in PROGRAMS {
        let program = catalogue::program(name).unwrap_or_else(|| panic!("{name} is catalogued"));
        let Some(real) = listed(name) else {
            assert!(std::env::var_os("CI").is_none(), "{name} must be installed in CI");
            eprintln!("skipped {name}: not installed");
            continue;
        };
        let ours: BTreeSet<String> = program
            .options
            .iter()
            .filter(|o| !o.long.is_empty())
            .map(|o| o.long.to_owned())
            .collect();
        assert_eq!(ours, real, "{name}: the grammar's long options and `{name} --help`'s");
    }
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/secret.txt"), format!("{MARK}\n")).unwrap();
    let p = root.join("p");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join(".env"), format!("KEY={MARK}\n")).unwrap();
    std::fs::write(p.join("a.txt"), "b\na\n").unwrap();
    std::fs::write(p.join("b.txt"), "a\nc\n").unwrap();
    std::fs::write(p.join("sums.txt"), "0  .env\n").unwrap();
    std::os::unix::fs::symlink("../outside/secret.txt", p.join("out")).unwrap();
    dir
}

/// The names under `dir`.
fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn covered_filters_print_no_secret_and_write_nothing_when_bash_runs_them() {
    if !have_bash() {
        return;
    }
    let dir = project();
    let cwd = dir.path().join("p");
    let before = names(&cwd);
    for ok in [
        "tr a-z A-Z <<< hello",
        "echo hello | tr -d l",
        "tac a.txt",
        "rev a.txt",
        "column -t a.txt",
        "column -s, -t -o ' | ' b.txt",
        "paste -d, a.txt b.txt",
        "paste -s a.txt",
        "comm -12 a.txt b.txt",
        "comm --total --nocheck-order a.txt b.txt",
        "fold -w 20 a.txt",
        "fold -20 a.txt",
        "base64 a.txt",
        "base64 -w0 a.txt",
        "od -c a.txt",
        "od -An -tx1 a.txt",
        "sha256sum a.txt b.txt",
        "md5sum --tag a.txt",
        "sha1sum *.txt",
        "readlink -f a.txt",
        "nproc",
        "nproc --all",
        "seq 1 5",
        "seq -w 1 10",
        "seq -s, 3",
    ] {
        assert!(covered(ok, &cwd), "{ok} is covered");
        let out = bash(ok, &[], &cwd);
        assert!(!out.contains(MARK), "`{ok}` printed a secret: {out}");
        assert_eq!(names(&cwd), before, "`{ok}` wrote a file");
    }
    for (refused, harm) in [
        ("base64 .env", false),
        ("base64 out", true),
        ("od -c .env", true),
        ("tac out", true),
        ("rev .env", true),
        ("paste a.txt out", true),
        ("column -t out", true),
        ("sha256sum -c sums.txt", false),
        ("md5sum --ch sums.txt", false),
        ("seq -5 5", false),
        ("tr a b a.txt", false),
    ] {
        assert!(!covered(refused, &cwd), "{refused} is not covered");
        if harm {
            let out = bash(refused, &[], &cwd);
            // od spaces the characters out; base64 encodes them; rev reverses them.
            let squeezed: String = out.chars().filter(|c| !c.is_whitespace()).collect();
            let reversed: String = MARK.chars().rev().collect();
            let shown = squeezed.contains(MARK) || out.contains(&reversed) || out.contains("VE9QU0VDUkVU");
            assert!(shown, "the control `{refused}` prints the secret: {out}");
        }
    }
}
