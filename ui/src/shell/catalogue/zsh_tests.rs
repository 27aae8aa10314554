//! The catalogue when zsh may run the command: zsh's own expansions are
//! judged (extendedglob's `^`, `#`, `~`; `**.json` with `GLOB_STAR_SHORT`)
//! or leave the command not covered (`=ls`, `***/`, `RC_QUOTES`,
//! `BRACE_CCL`, zsh's `hash NAME=PATH`). The real zsh runs each in
//! `ui/tests/zsh_differential.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::shell::catalogue::covers;
use crate::shell::{CommandMatch, Pattern, Polarity, Script};

fn verdict_of(script: Script, cwd: &Path) -> Result<(), String> {
    for segment in &script.segments.map_err(|o| o.why)? {
        covers(segment, Some(cwd))?;
    }
    Ok(())
}

fn verdict(command: &str, cwd: &Path) -> Result<(), String> {
    verdict_of(Script::parse(command), cwd)
}

fn argv(words: &[&str], cwd: &Path) -> Result<(), String> {
    let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    verdict_of(Script::argv(&words), cwd)
}

/// The review's project: a credential two levels down, a text file.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("a/b")).unwrap();
    std::fs::write(p.join("a/b/credentials.json"), "DEEP_CRED").unwrap();
    std::fs::write(p.join("x.txt"), "x").unwrap();
    std::fs::create_dir(p.join("src")).unwrap();
    std::fs::write(p.join("src/main.rs"), "fn main() {}\n").unwrap();
    dir
}

#[test]
fn a_word_zsh_turns_into_a_command_path_is_not_covered() {
    let p = project();
    for zsh_path in [
        "head -c 4 =ls",
        "cat =ls",
        "cat x.txt =cat",
        "wc -l =l?",
        "grep --file==ls x.txt",
        "grep -e x==ls x.txt",
        "grep -e a=b:=ls x.txt",
        "cat < =ls",
        "wc -l x.txt < =ls",
        "cat <1-2>&2",
        "wc -l <1-2>/dev/null",
    ] {
        let why = verdict(zsh_path, p.path()).unwrap_err();
        assert!(why.contains("zsh"), "{zsh_path}: {why}");
    }
    for plain in [
        "cat x.txt",
        "[ a = b ]",
        "echo a=b",
        "echo '=ls' \\=ls",
        "grep -e a=b=c x.txt",
    ] {
        assert_eq!(verdict(plain, p.path()), Ok(()), "{plain}");
    }
}

#[test]
fn quotes_and_braces_zsh_options_read_otherwise_are_not_covered() {
    let p = project();
    for odd in [
        "cat 'x.t''xt'",
        "git show HEAD@{10}",
        "git show HEAD@{x}",
        "cat x{.txt}",
        "cat x@{1}.txt",
    ] {
        assert!(verdict(odd, p.path()).unwrap_err().contains("zsh"), "{odd}");
    }
    for plain in ["cat 'x.t'\"xt\"", "echo {}", "echo a{}b", "cat 'x.txt'"] {
        assert_eq!(verdict(plain, p.path()), Ok(()), "{plain}");
    }
}

#[test]
fn recursive_forms_of_zsh_are_judged_at_every_depth() {
    let p = project();
    for deep in [
        "cat **/*.json",
        "cat **.json",
        "cat ***/*.json",
        "grep -h k **/*",
        "cat a/**",
    ] {
        assert!(verdict(deep, p.path()).is_err(), "{deep}");
    }
    assert_eq!(verdict("cat **/*.rs", p.path()), Ok(()));
    assert_eq!(verdict("cat src/**.rs", p.path()), Ok(()));
}

#[test]
fn extended_glob_words_are_judged_by_what_they_match() {
    let p = project();
    // Quoted searches, and unquoted words whose matches are all read
    // alike, stay covered where no match is a secret.
    for ok in [
        "grep '^fn' src/main.rs",
        "grep -n 'foo#bar' x.txt",
        "grep -n foo#bar x.txt",
        "rg \"^use\" src",
        "cat x~",
        "cat x.tx#t",
        "cat ^x.txt",
        "wc -l ^src",
    ] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
    }
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    // With EXTENDED_GLOB and GLOB_DOTS, `^x.txt` is every other name, `.env` too.
    for leak in [
        "cat ^x.txt",
        "cat .en#v",
        "cat .e##nv",
        "cat *~x.txt",
        "head -c 4 ^x*",
        "wc -l src/../^x*",
    ] {
        let why = verdict(leak, p.path()).unwrap_err();
        assert!(why.contains("zsh runs it"), "{leak}: {why}");
    }
    // Quoted, they are literal: no shell expands them.
    assert_eq!(verdict("grep '^fn' src/main.rs", p.path()), Ok(()));
}

#[test]
fn an_unquoted_search_whose_matches_are_each_safe_as_pattern_and_file_is_covered() {
    // Unquoted, `^fn` under EXTENDED_GLOB is every other name (`a`, `src`,
    // `x.txt`): one lands in grep's pattern place, the others in its
    // files' places, in the order of the user's locale (order.rs). Each
    // is a safe file and any text a pattern: every order is safe.
    let p = project();
    for ok in [
        "grep ^fn src/main.rs",
        "grep -n ^use src/*.rs",
        "grep -c ^ x.txt",
        "grep -e ^fn src/main.rs",
        "grep -f ^fn x.txt",
        "grep -h ^fn",
    ] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
    }
    // A recursive read walks an operand: another order walks the match
    // read here as the pattern or `-f`'s file (`a`, holding a credential,
    // sorts first: it is the pattern in this order).
    for walked in ["rg ^fn src", "grep -r ^fn src", "grep -r -f ^fn src", "rg -e ^fn src"] {
        let why = verdict(walked, p.path()).unwrap_err();
        assert!(why.contains("a/b/credentials.json"), "{walked}: {why}");
    }
    std::fs::remove_dir_all(p.path().join("a")).unwrap();
    for ok in ["rg ^fn src", "grep -r ^fn src", "grep -rn -f ^fn src"] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
    }
    // A match that is no safe file, in any place: a link out, a secret
    // (GLOB_DOTS), a name read as an option.
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("out")).unwrap();
    let why = verdict("grep ^fn src/main.rs", p.path()).unwrap_err();
    assert!(why.contains("`out` is outside"), "{why}");
    std::fs::remove_file(p.path().join("out")).unwrap();
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    let why = verdict("grep ^fn src/main.rs", p.path()).unwrap_err();
    assert!(why.contains("globdots") && why.contains(".env"), "{why}");
    std::fs::remove_file(p.path().join(".env")).unwrap();
    std::fs::write(p.path().join("-r"), "").unwrap();
    let why = verdict("grep ^fn src/main.rs", p.path()).unwrap_err();
    assert!(why.contains("option"), "{why}");
    std::fs::remove_file(p.path().join("-r")).unwrap();
    // Places whose kind is not a pattern or a path, and a program whose
    // own judge reads words beyond their places (git: a path or a
    // revision), stay refused when mixed.
    for mixed in ["grep -m ^fn x.txt", "git grep ^fn"] {
        assert!(verdict(mixed, p.path()).is_err(), "{mixed}");
    }
    assert_eq!(verdict("grep ^fn src/main.rs", p.path()), Ok(()));
}

/// A repository of two commits.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
            .status;
        assert!(status.success(), "git {args:?}");
    };
    std::fs::write(dir.path().join("x.txt"), "one\n").unwrap();
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "one"]);
    std::fs::write(dir.path().join("x.txt"), "two\n").unwrap();
    git(&["commit", "-qam", "two"]);
    dir
}

#[test]
fn a_reflog_entry_zsh_may_read_without_its_braces_is_judged_both_ways() {
    // bash passes `HEAD@{1}`; zsh with BRACE_CCL passes `HEAD@1` (a name
    // git finds no revision or path for): both safe reads.
    let p = repo();
    for ok in [
        "git log HEAD@{1}",
        "git show HEAD@{1}",
        "git diff HEAD@{1} HEAD",
        "git log --oneline -3 main@{0}",
        "git log 'HEAD@{10}'",
    ] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
    }
    // Where the word without braces names another file, that file is
    // judged: here a link to a secret.
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    std::fs::write(p.path().join("notes@{1}"), "ok").unwrap();
    std::os::unix::fs::symlink(".env", p.path().join("notes@1")).unwrap();
    let why = verdict("cat notes@{1}", p.path()).unwrap_err();
    assert!(why.contains("braceccl") && why.contains(".env"), "{why}");
    assert_eq!(verdict("cat 'notes@{1}'", p.path()), Ok(()));
    // A user's rule that keeps paths inside the project judges zsh's
    // reading too: `notes@1` leading out of it.
    let outside = tempfile::tempdir().unwrap();
    std::fs::remove_file(p.path().join("notes@1")).unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("notes@1")).unwrap();
    let rule = CommandMatch {
        patterns: vec![Pattern::parse("cat *").unwrap()],
        sets: Vec::new(),
        except: Vec::new(),
        within: vec!["cwd".into()],
        polarity: Polarity::Every,
    };
    let script = Script::parse("cat notes@{1}");
    let why = rule.mismatch(Some(&script), Some(p.path())).unwrap();
    assert!(why.contains("outside"), "{why}");
    assert_eq!(
        rule.mismatch(Some(&Script::parse("cat 'notes@{1}'")), Some(p.path())),
        None
    );
    // Deny and ask rules see both commands.
    let found = Script::parse("git reset --hard HEAD@{1}").found;
    assert!(
        found.iter().any(|c| c.last().is_some_and(|w| w == "HEAD@1")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|c| c.last().is_some_and(|w| w == "HEAD@{1}")),
        "{found:?}"
    );
}

#[test]
fn zsh_hash_assigning_a_name_is_not_covered() {
    let p = project();
    assert!(verdict("hash cat=/usr/bin/python3", p.path()).is_err());
    assert_eq!(verdict("hash cat", p.path()), Ok(()));
}

#[test]
fn each_shell_reads_its_own_script() {
    let p = project();
    assert_eq!(
        argv(&["bash", "-lc", "cat =ls"], p.path()),
        Ok(()),
        "bash: a file named =ls"
    );
    assert_eq!(argv(&["sh", "-c", "cat x.txt"], p.path()), Ok(()));
    assert!(argv(&["zsh", "-lc", "head -c 4 =ls"], p.path()).is_err());
    assert!(argv(&["zsh", "-c", "cat **.json"], p.path()).is_err());
    assert_eq!(argv(&["zsh", "-lc", "cat x.txt"], p.path()), Ok(()));
    for shell in ["fish", "ksh", "mksh", "csh", "tcsh", "nu", "pwsh"] {
        let why = argv(&[shell, "-c", "cat x.txt"], p.path()).unwrap_err();
        assert!(why.contains(shell), "{shell}: {why}");
        // A deny still finds what it runs.
        let found = Script::argv(&[shell.to_owned(), "-c".to_owned(), "rm -rf x".to_owned()]).found;
        assert!(
            found.iter().any(|c| c.first().is_some_and(|p| p == "rm")),
            "{shell}: {found:?}"
        );
    }
}
