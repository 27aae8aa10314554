//! git's grammar and its judge of what a form reaches, in real
//! repositories made with the real git.

use std::path::Path;
use std::process::{Command, Stdio};

use super::super::covers;
use crate::shell::Script;

fn verdict(command: &str, cwd: &Path) -> Result<(), String> {
    let script = Script::parse(command);
    let segments = script.segments.map_err(|o| o.why)?;
    for segment in &segments {
        covers(segment, Some(cwd))?;
    }
    Ok(())
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// A repository of two commits whose history holds no secret.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir(p.join("src")).unwrap();
    write(p, "src/main.rs", "fn main() {}\n");
    write(p, "Cargo.toml", "[package]\n");
    git(p, &["init", "-q", "-b", "main"]);
    git(p, &["add", "."]);
    git(p, &["commit", "-qm", "one"]);
    write(p, "src/main.rs", "fn main() { }\n");
    git(p, &["commit", "-qam", "two"]);
    dir
}

fn refused(command: &str, cwd: &Path, says: &str) {
    match verdict(command, cwd) {
        Ok(()) => panic!("{command:?} was covered"),
        Err(why) => assert!(why.contains(says), "{command:?}: {why:?} does not say {says:?}"),
    }
}

#[test]
fn ordinary_git_reads_are_covered() {
    let p = repo();
    for ok in [
        "git status",
        "git status --short",
        "git --no-pager log --oneline -20",
        "git diff --stat HEAD~1",
        "git log -p -- src/main.rs",
        "git show HEAD:Cargo.toml",
        "git branch --show-current",
        "git branch -a",
        "git remote -v",
        "git ls-files",
        "git grep -n main",
        "git log --pretty=format:%h",
        "git show",
        "git log -p",
        "git diff HEAD~1",
        "git diff --cached",
        "git status -v",
        "git branch --contains HEAD",
        "git branch --no-contains HEAD~1",
        "git branch --merged main",
        "git branch --no-merged",
        "git branch --points-at HEAD",
        "git branch -v 'ma*'",
        "git log --format='%h %s'",
    ] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
    }
}

#[test]
fn git_options_that_write_run_or_read_elsewhere_are_refused() {
    let p = repo();
    write(p.path(), ".env", "KEY=1");
    for (command, says) in [
        ("git grep --open='touch /tmp/p;' -l main", "runs another program"),
        ("git grep -Ovim main", "runs another program"),
        ("git -c core.pager=sh log", "sets configuration"),
        ("git diff --output=/tmp/x", "writes a file"),
        ("git diff --ext-diff", "runs another program"),
        ("git branch newbranch", "one operand more"),
        ("git branch -D main", "deletes a branch"),
        ("git push", "not in the read-only catalogue"),
        ("git grep -e KEY HEAD", "names nothing"),
        ("git grep KEY ':/'", "names nothing"),
        ("git log --show-signature", "runs gpg"),
        ("git show --show-signature HEAD", "runs gpg"),
        ("git log --format=%G?", "runs gpg"),
        ("git log --pretty='format:%h %GS'", "runs gpg"),
        ("git branch --format='%(signature)'", "runs gpg"),
        ("git -c log.showSignature=true log", "sets configuration"),
        ("git diff --submodule=diff", "is not one of"),
        ("git -C .. show", "changes the directory"),
        ("git --git-dir=x show", "reads another repository"),
        ("GIT_DIR=x git show", "variable assignment"),
        ("GIT_INDEX_FILE=x git diff --cached", "variable assignment"),
        ("env GIT_DIR=x git show", "not in the read-only catalogue"),
        ("cat .git/config", "may hold secrets"),
        ("git blame .env", "may hold secrets"),
        ("git show HEAD:.env", "may hold secrets"),
    ] {
        refused(command, p.path(), says);
    }
}
