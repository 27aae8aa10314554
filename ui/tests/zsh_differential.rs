//! The read-only catalogue against the real zsh (review finding F4): zsh
//! is macOS's default shell, Claude Code runs its Bash tool in it, Codex
//! runs `zsh -lc`, and a user's `.zshenv` may set any option. Each command
//! of a corpus (the review's, each zsh expansion bash does not do, and
//! generated ones) that Tether covers is run by the real zsh under each
//! option that changes what a word becomes, with `PATH` holding only
//! logging stubs, in a scratch project holding secrets and a link out of
//! it. No stub may see a word naming a secret or a path outside the
//! project, nor be a program Tether did not read. Each option also has a
//! command that does leak under it (the control: the harness can fail),
//! and Tether does not cover it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::fs;

mod zsh_support;
use zsh_support::{MARKS, SETTINGS, covered, scene};

/// The review's commands and each zsh form bash does not have.
const CORPUS: &[&str] = &[
    "cat **/*.json",
    "grep -h k **/*",
    "head -c 4 =ls",
    "cat =ls",
    "cat x.txt =cat",
    "grep -e a==ls x.txt",
    "grep --regexp==ls x.txt",
    "grep -e a=b:=ls x.txt",
    "cat **.json",
    "cat ***/*.json",
    "cat ***/secret.txt",
    "cat x{.txt}",
    "cat 'x.t''xt'",
    "cat ^x.txt",
    "head -c 4 ^x.txt",
    "grep -h k ^fn",
    "grep ^fn src/main.rs",
    "grep -n foo#bar x.txt",
    "rg ^use src",
    "grep -c ^ x.txt",
    "cat .en#v",
    "cat .e##nv",
    "cat *~x.txt",
    "cat *~*.rs",
    "cat ^*.rs~x*",
    "cat out/*",
    "cat o?t/*",
    "cat OUT/*",
    "cat X.TXT*",
    "cat src/**.rs",
    "cat src/**",
    "wc -l src/*.rs",
    "cat x.txt",
    "cat x~",
    "ls",
    "ls *",
    "cat *",
    "hash cat=python3 && cat x.txt",
    "< .env",
    "< x.txt",
    "echo =ls",
    "printf '%s' =ls",
    "[ =ls ]",
    "cat < =ls",
    "wc -l < x.txt",
    "cat <1-2>&2",
    "wc -l <1-2>/dev/null",
];

/// Programs and operands the generated commands combine.
const PROGRAMS: &[&str] = &["cat", "head -c 4", "grep -h k", "wc -l", "ls -d", "nl"];
const OPERANDS: &[&str] = &[
    "*", ".*", "^x.txt", "^fn", "x#.txt", ".e#nv", "*~x.txt", "**/*", "**.json", "***/*", "a/**", "=ls", "*.tx#t",
    "^a", "?", ".???", "^.env", "out/^x", "a/b/^x", "*/*/*", "A/**", "X.TX?", "^*~*.txt", "a#", "x.txt~", "src/^m*",
];

fn corpus() -> Vec<String> {
    let mut all: Vec<String> = CORPUS.iter().map(|c| (*c).to_owned()).collect();
    for program in PROGRAMS {
        for operand in OPERANDS {
            all.push(format!("{program} {operand}"));
            all.push(format!("{program} x.txt {operand}"));
        }
    }
    all
}

#[test]
fn no_command_tether_covers_reads_a_secret_or_runs_another_program_under_zsh() {
    let Some(scene) = scene() else {
        return;
    };
    let mut harms = Vec::new();
    let mut ran_covered = 0;
    for command in corpus() {
        let Some(programs) = covered(&command, &scene.project) else {
            continue;
        };
        for options in SETTINGS {
            let (ran, printed) = scene.run(&command, options);
            ran_covered += ran.len();
            for argv in &ran {
                if !programs.contains(&argv[0]) {
                    harms.push(format!(
                        "`{command}` {options:?}: ran {argv:?}, not a program Tether read"
                    ));
                }
                for word in &argv[1..] {
                    if let Some(why) = scene.harm(&argv[0], word) {
                        harms.push(format!("`{command}` {options:?}: ran {argv:?}: {why}"));
                    }
                }
            }
            if let Some(mark) = MARKS.iter().find(|m| printed.contains(*m)) {
                harms.push(format!("`{command}` {options:?} printed {mark}"));
            }
        }
    }
    assert!(
        harms.is_empty(),
        "covered commands did harm under zsh:\n{}",
        harms.join("\n")
    );
    assert!(
        ran_covered > 500,
        "only {ran_covered} programs ran: the corpus is not exercised"
    );
}

#[test]
fn each_zsh_form_has_a_command_that_leaks_and_it_is_not_covered() {
    let Some(scene) = scene() else {
        return;
    };
    for (command, options) in [
        ("cat **/*.json", &[][..]),
        ("grep -h k **/*", &[]),
        ("head -c 4 =ls", &[]),
        ("cat **.json", &["globstarshort"]),
        ("cat ***/secret.txt", &[]),
        ("cat ^x.txt", &["extendedglob", "globdots"]),
        ("cat .en#v", &["extendedglob"]),
        ("cat *~x.txt", &["extendedglob", "globdots"]),
        ("grep -e a==ls x.txt", &["magicequalsubst"]),
        ("cat OUT/*", &["nocaseglob"]),
        ("< .env", &[]),
        ("cat < =ls", &[]),
    ] {
        let (ran, printed) = scene.run(command, options);
        let leaked = MARKS.iter().any(|m| printed.contains(m))
            || ran
                .iter()
                .any(|argv| argv[1..].iter().any(|w| scene.harm(&argv[0], w).is_some()));
        assert!(
            leaked,
            "`{command}` with {options:?} leaks under zsh: {ran:?} {printed}"
        );
        assert!(covered(command, &scene.project).is_none(), "`{command}` is not covered");
    }
}

#[test]
fn ordinary_reads_stay_covered_when_zsh_may_run_them() {
    // A project with no secret and no link at its top: `^x.txt` under
    // EXTENDED_GLOB is every other name there, none harmful. (Unquoted
    // `grep ^fn src/main.rs` makes one of those names grep's pattern, the
    // others its files, in an order only the user's locale knows: each is
    // safe as either.)
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    fs::create_dir_all(p.join("src")).unwrap();
    fs::write(p.join("src/main.rs"), "use x;\nfn main() {}\n").unwrap();
    fs::write(p.join("x.txt"), "k\n").unwrap();
    fs::write(p.join("README.md"), "# x\n").unwrap();
    fs::write(p.join(".gitignore"), "target\n").unwrap();
    for ok in [
        "grep '^fn' src/main.rs",
        "grep -n foo#bar x.txt",
        "rg '^use' src",
        "cat ^x.txt",
        "cat x.txt",
        "wc -l src/*.rs",
        "cat src/**.rs",
        "grep ^fn src/main.rs",
        "grep -n ^use src/*.rs",
        "rg ^use src",
    ] {
        assert!(covered(ok, p).is_some(), "{ok}");
    }
    // Where the top holds a secret, the same search quoted stays covered.
    let Some(scene) = scene() else {
        return;
    };
    assert!(covered("grep '^fn' src/main.rs", &scene.project).is_some());
    assert!(covered("grep ^fn src/main.rs", &scene.project).is_none());
}

#[test]
fn an_unquoted_search_is_covered_where_every_name_zsh_may_put_in_its_places_is_safe() {
    let Some(scene) = scene() else {
        return;
    };
    let p = &scene.project;
    let search = "grep ^fn src/main.rs";
    // The control: with `.env` at the top, EXTENDED_GLOB and GLOB_DOTS
    // make `^fn` name it, as grep's pattern or one of its files.
    let (ran, _) = scene.run(search, &["extendedglob", "globdots"]);
    let grep = ran.iter().find(|argv| argv[0] == "grep").unwrap();
    assert!(grep.iter().any(|w| w == ".env"), "zsh passes .env: {grep:?}");
    assert!(covered(search, p).is_none());
    // Without the secret and the link out at the top, every name is a
    // safe file (and any text a pattern): covered, and harmless under
    // every option.
    fs::remove_file(p.join(".env")).unwrap();
    fs::remove_file(p.join("out")).unwrap();
    for command in [search, "grep -n ^use src/*.rs", "grep -c ^ x.txt", "grep -e ^fn x.txt"] {
        assert!(covered(command, p).is_some(), "`{command}` is covered");
        for options in SETTINGS {
            let (ran, printed) = scene.run(command, options);
            for argv in &ran {
                assert_eq!(argv[0], "grep", "`{command}` {options:?}");
                for word in &argv[1..] {
                    assert_eq!(scene.harm(&argv[0], word), None, "`{command}` {options:?}: {argv:?}");
                }
            }
            assert!(
                !MARKS.iter().any(|m| printed.contains(m)),
                "`{command}` {options:?}: {printed}"
            );
        }
        // The mixed places are real: zsh passes the top's names.
        let (ran, _) = scene.run(command, &["extendedglob"]);
        assert!(ran[0].iter().any(|w| w == "a"), "`{command}`: {ran:?}");
    }
    // A recursive read would walk `a`, which holds a credential, in some
    // order: not covered.
    assert!(covered("rg ^use src", p).is_none());
    assert!(covered("grep -r ^fn src", p).is_none());
}
