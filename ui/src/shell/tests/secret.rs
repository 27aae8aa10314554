//! `@secret` for a deny or ask rule sees what the allow side sees: a word
//! read from where an earlier `cd` left the command, and a file-name
//! pattern by what bash or zsh may expand it to there.

use std::path::Path;

use crate::shell::{CommandMatch, CommandSet, Polarity, Script};

/// A project with a repository (its `.git/config` may hold a token), a
/// harmless `config` at its top, an `.env` at its top and one two levels
/// down, and a source tree.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for d in [".git", "src", "a/b", "deep/er"] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    for f in [
        ".git/config",
        "config",
        ".env",
        "x.txt",
        "src/main.rs",
        "a/b/.env",
        "deep/er/prod.env",
    ] {
        std::fs::write(p.join(f), "x\n").unwrap();
    }
    dir
}

/// Whether an ask rule on `@secret` asks for `command` run in `cwd`.
fn asked(command: &str, cwd: &Path) -> bool {
    let rule = CommandMatch {
        patterns: Vec::new(),
        sets: vec![CommandSet::Secret],
        except: Vec::new(),
        within: Vec::new(),
        polarity: Polarity::Any,
    };
    let script = Script::parse(command);
    let held = rule.holds(Some(&script), Some(cwd));
    assert_eq!(held, rule.mismatch(Some(&script), Some(cwd)).is_none(), "{command}");
    held
}

#[test]
fn a_word_is_read_from_where_an_earlier_cd_left_the_command() {
    let dir = project();
    let p = dir.path();
    for named in [
        "cd .git && cat config",
        "cd .git; cat config",
        "cd .git && head -n 5 -- config",
        "cd .git && wc -l < config",
        "cd .git && git config --file=config -l",
        "cd src && cd ../.git && cat config",
        "cd src && cat ../.en?",
        "cd a && cat b/.e*",
        "cd .git && cat ../.env",
    ] {
        assert!(asked(named, p), "{named}");
    }
    for plain in [
        "cat config",
        "cd src && cat main.rs",
        "cd .git && cat ../config",
        "cd .git || cat config",
        "cd src && cat ../x.tx?",
        "cd .git && ls -l config",
    ] {
        assert!(!asked(plain, p), "{plain}");
    }
}

#[test]
fn a_command_run_where_a_cd_cannot_be_followed_is_asked() {
    let dir = project();
    let p = dir.path();
    for unknown in [
        "cd /etc && cat passwd",
        "cd && cat x",
        "cd - && wc -l < config",
        "cd ~/.kube && cat config",
    ] {
        assert!(asked(unknown, p), "{unknown}");
    }
    // A program alone names nothing, wherever it runs.
    assert!(!asked("cd /tmp && ls", p));
}

#[test]
fn zsh_only_patterns_are_expanded_as_zsh_may_expand_them() {
    let dir = project();
    let p = dir.path();
    for named in [
        // GLOB_STAR_SHORT: `**.env` is `**/*.env`, at any depth.
        "cat **.env",
        "cd deep && cat **env",
        // EXTENDED_GLOB with GLOB_DOTS: every name but `x.txt`.
        "cat ^x.txt",
        // `#`: zero or more of the character before it.
        "cat .en#v",
        "cat a/b/.e#nv",
    ] {
        assert!(asked(named, p), "{named}");
    }
    for plain in ["cat **.rs", "cat src/^x.rs", "cat x#.txt"] {
        assert!(!asked(plain, p), "{plain}");
    }
}

#[test]
fn a_file_a_redirection_reads_is_seen_in_a_script_that_is_not_plain() {
    let dir = project();
    let p = dir.path();
    for named in ["cat < .env > /tmp/out", "echo $(cat < .env)", "sort 3< .env > out"] {
        assert!(Script::parse(named).segments.is_err(), "{named} is not plain");
        assert!(asked(named, p), "{named}");
    }
    // In a shell's script too.
    assert!(asked("bash -c 'wc -l < .env > x'", p));
    assert!(!asked("cat < x.txt > /tmp/out", p));
}
