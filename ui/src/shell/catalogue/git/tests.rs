//! git's grammar and its judge of what a form reaches, in real
//! repositories made with the real git.

use std::path::Path;
use std::process::{Command, Stdio};

use super::super::covers;
use crate::shell::Script;

pub(super) fn verdict(command: &str, cwd: &Path) -> Result<(), String> {
    let script = Script::parse(command);
    let segments = script.segments.map_err(|o| o.why)?;
    for segment in &segments {
        covers(segment, Some(cwd))?;
    }
    Ok(())
}

pub(super) fn git(dir: &Path, args: &[&str]) {
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

pub(super) fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// A repository of two commits whose history holds no secret.
pub(super) fn repo() -> tempfile::TempDir {
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

pub(super) fn refused(command: &str, cwd: &Path, says: &str) {
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
        "git branch -v --list 'ma*'",
        "git branch -vv",
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
        ("git branch -v newbranch", "one operand more"),
        ("git branch -vv newbranch origin/main", "one operand more"),
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

fn output(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn a_secret_committed_after_a_history_was_read_is_seen_at_once() {
    let p = repo();
    assert_eq!(verdict("git show", p.path()), Ok(()));
    assert_eq!(verdict("git log -p", p.path()), Ok(()));
    let commit = output(p.path(), &["rev-parse", "--short", "HEAD"]);
    assert_eq!(verdict(&format!("git show {commit}"), p.path()), Ok(()));
    write(p.path(), "server.KEY", "-----BEGIN-----");
    git(p.path(), &["add", "server.KEY"]);
    refused("git diff --cached", p.path(), "server.KEY");
    assert_eq!(verdict("git show", p.path()), Ok(()), "staged only: no commit holds it");
    git(p.path(), &["commit", "-qm", "key"]);
    git(p.path(), &["rm", "-q", "server.KEY"]);
    git(p.path(), &["commit", "-qm", "no key"]);
    refused("git show HEAD", p.path(), "server.KEY");
    refused("git log -p", p.path(), "limit it");
    refused("git log -p -- .", p.path(), "reaches server.KEY");
    refused("git log -p -- '*.rs'", p.path(), "a pattern");
    refused("git log -p -- ../x", p.path(), "outside the working directory");
    assert_eq!(verdict("git log -p -- src", p.path()), Ok(()));
    assert_eq!(verdict("git log --stat", p.path()), Ok(()), "names only");
    let blob = output(p.path(), &["rev-parse", "HEAD~1:server.KEY"]);
    refused(&format!("git show {}", &blob[..7]), p.path(), "names no commit");
}

#[test]
fn a_tagged_blob_a_linked_worktree_and_a_bad_gitfile_are_judged_as_git_reads_them() {
    let p = repo();
    let blob = output(p.path(), &["hash-object", "-w", "src/main.rs"]);
    git(p.path(), &["tag", "file", &blob]);
    refused("git show --stat file", p.path(), "a ref names a file's contents");
    git(p.path(), &["tag", "-d", "file"]);
    assert_eq!(verdict("git show --stat", p.path()), Ok(()));
    // A conflicted merge leaves AUTO_MERGE naming a tree: read, not unknown.
    let tree = output(p.path(), &["rev-parse", "HEAD^{tree}"]);
    write(p.path(), ".git/AUTO_MERGE", &format!("{tree}\n"));
    assert_eq!(verdict("git log -p", p.path()), Ok(()));
    // A linked worktree reads the main repository's history.
    let linked = tempfile::tempdir().unwrap();
    let wt = linked.path().join("wt");
    git(p.path(), &["worktree", "add", "-q", wt.to_str().unwrap()]);
    assert!(std::fs::metadata(wt.join(".git")).unwrap().is_file());
    assert_eq!(verdict("git log -p", &wt), Ok(()));
    write(&wt, ".envrc", "export KEY=1");
    git(&wt, &["add", ".envrc"]);
    git(&wt, &["commit", "-qm", "envrc"]);
    refused("git log -p", &wt, ".envrc");
    refused("git log -p --all", p.path(), ".envrc");
    // A `.git` file git cannot read.
    let odd = tempfile::tempdir().unwrap();
    write(odd.path(), ".git", "not a gitdir line");
    refused("git log -p", odd.path(), "does not say `gitdir:`");
    refused("git show", tempfile::tempdir().unwrap().path(), "no git repository");
}

#[test]
fn the_index_is_read_in_each_version_and_a_split_index_is_not_known() {
    let p = repo();
    std::fs::create_dir(p.path().join("config")).unwrap();
    for n in 0..40 {
        write(p.path(), &format!("src/m{n}.rs"), "");
    }
    write(p.path(), "config/Credentials.json", "{}");
    git(p.path(), &["add", "."]);
    for version in ["2", "3", "4"] {
        git(p.path(), &["update-index", "--index-version", version]);
        let found = super::index::secrets(&p.path().join(".git")).unwrap();
        assert_eq!(found, ["config/Credentials.json"], "version {version}");
        refused("git diff", p.path(), "config/Credentials.json");
    }
    git(p.path(), &["update-index", "--split-index"]);
    refused("git grep --cached main", p.path(), "split");
}

/// A commit replaced (`git replace`) by one without the secret still
/// holds it for `git --no-replace-objects log -p`.
#[test]
fn a_secret_hidden_by_a_replaced_commit_is_still_seen() {
    let p = repo();
    write(p.path(), ".env", "KEY=1");
    git(p.path(), &["add", ".env"]);
    git(p.path(), &["commit", "-qm", "env"]);
    let original = output(p.path(), &["rev-parse", "HEAD"]);
    let tree = output(p.path(), &["rev-parse", "HEAD~1^{tree}"]);
    let parent = output(p.path(), &["rev-parse", "HEAD~1"]);
    let clean = output(p.path(), &["commit-tree", &tree, "-p", &parent, "-m", "env"]);
    git(p.path(), &["replace", &original, &clean]);
    refused("git --no-replace-objects log -p", p.path(), ".env");
}

/// A repository whose history once held `.env` (committed, then removed).
fn dirty() -> tempfile::TempDir {
    let p = repo();
    write(p.path(), ".env", "KEY=1");
    git(p.path(), &["add", ".env"]);
    git(p.path(), &["commit", "-qm", "env"]);
    git(p.path(), &["rm", "-q", ".env"]);
    git(p.path(), &["commit", "-qm", "no env"]);
    p
}

/// Review F1: an option that adds commits makes `git show REV:PATH` print
/// their patches too.
#[test]
fn show_of_one_file_with_options_that_add_commits_is_judged_by_the_history() {
    let p = dirty();
    assert_eq!(verdict("git show HEAD:Cargo.toml", p.path()), Ok(()));
    assert_eq!(verdict("git show --oneline HEAD:Cargo.toml", p.path()), Ok(()));
    for option in [
        "--all",
        "--branches",
        "--branches=ma*",
        "--tags",
        "--remotes",
        "--glob=refs/*",
        "--reflog",
        "--do-walk",
    ] {
        refused(&format!("git show {option} HEAD:Cargo.toml"), p.path(), ".env");
    }
}

/// Review F2: a colon inside `{…}` (a message search, a reflog date) does
/// not make a revision `REV:PATH`.
#[test]
fn a_colon_inside_braces_is_part_of_the_revision() {
    let p = dirty();
    for revision in [
        "'HEAD^{/in:?}'",
        "'main^{/:?}'",
        "'HEAD@{2026-12-06 23:59:59}'",
        "'main@{12:00}'",
        "'HEAD~1^{/feat: x}'",
        "':/env'",
    ] {
        refused(&format!("git show {revision}"), p.path(), ".env");
    }
    assert_eq!(verdict("git show 'HEAD^{/one}:Cargo.toml'", p.path()), Ok(()));
    assert_eq!(verdict("git show 'HEAD@{0}:src/main.rs'", p.path()), Ok(()));
}

/// Review F12: a bare repository's `config` is its `.git/config`, under
/// any name.
#[test]
fn a_bare_repositorys_config_is_a_secret() {
    let p = repo();
    git(p.path(), &["clone", "-q", "--bare", ".", "mirror.git"]);
    git(p.path(), &["clone", "-q", "--bare", ".", "srv"]);
    refused("cat mirror.git/config", p.path(), "git configuration");
    refused("cat srv/config", p.path(), "git configuration");
    refused("cat config", &p.path().join("srv"), "git configuration");
    refused("grep -r url srv", p.path(), "git configuration");
    assert_eq!(verdict("cat srv/HEAD", p.path()), Ok(()));
    write(p.path(), "config", "plain");
    assert_eq!(verdict("cat config", p.path()), Ok(()), "not in a git directory");
}

/// `git remote -v`'s answer is kept until a configuration file changes,
/// and never kept where the configuration includes another file.
#[test]
fn remote_urls_are_read_again_when_the_configuration_changes() {
    let p = repo();
    assert_eq!(verdict("git remote -v", p.path()), Ok(()));
    git(p.path(), &["remote", "add", "origin", "https://github.com/x/y.git"]);
    assert_eq!(verdict("git remote -v", p.path()), Ok(()));
    git(
        p.path(),
        &["remote", "set-url", "origin", "https://github.com/x/y.git?t=1"],
    );
    refused("git remote -v", p.path(), "credentials");
    git(p.path(), &["remote", "set-url", "origin", "https://github.com/x/y.git"]);
    assert_eq!(verdict("git remote -v", p.path()), Ok(()));
    let included = p.path().join("more.gitconfig");
    write(p.path(), "more.gitconfig", "");
    git(p.path(), &["config", "include.path", included.to_str().unwrap()]);
    assert_eq!(verdict("git remote -v", p.path()), Ok(()));
    write(
        p.path(),
        "more.gitconfig",
        "[url \"https://bot:tok@github.com/\"]\n\tinsteadOf = https://github.com/\n",
    );
    refused("git remote -v", p.path(), "credentials");
}

/// Review F11: git resolves a revision as a file in the git directory
/// first (`info/X`, `rebase-merge/onto`, any name), and a commit named only
/// there was never read with the history.
#[test]
fn a_revision_naming_a_file_in_the_git_directory_is_not_covered() {
    let p = repo();
    write(p.path(), ".env", "KEY=1");
    git(p.path(), &["add", ".env"]);
    let tree = output(p.path(), &["write-tree"]);
    git(p.path(), &["rm", "-q", "--cached", ".env"]);
    let commit = output(p.path(), &["commit-tree", &tree, "-p", "HEAD", "-m", "x"]);
    std::fs::create_dir_all(p.path().join(".git/info")).unwrap();
    std::fs::create_dir_all(p.path().join(".git/rebase-merge")).unwrap();
    for name in ["info/X", "rebase-merge/onto", "lower", "Mixed_HEAD"] {
        write(p.path(), &format!(".git/{name}"), &format!("{commit}\n"));
        for command in [
            "git show {}",
            "git log -p {}",
            "git diff HEAD {}",
            "git show ^HEAD~1 {}~1",
        ] {
            refused(&command.replace("{}", name), p.path(), "git directory");
        }
        refused(&format!("git log -p main..{name}"), p.path(), "git directory");
        refused(&format!("git show '{name}@{{0}}'"), p.path(), "git directory");
    }
    assert_eq!(verdict("git show main", p.path()), Ok(()));
    assert_eq!(verdict("git log -p HEAD~1..HEAD", p.path()), Ok(()));
}

/// Review F10: `git grep` reads an assume-unchanged or skip-worktree
/// entry from the index, not the disk; `--recurse-submodules` reads each
/// submodule's index too.
#[test]
fn git_grep_is_judged_by_the_index_entries_it_reads() {
    let p = repo();
    assert_eq!(verdict("git grep -n main", p.path()), Ok(()));
    write(p.path(), ".env", "KEY=1");
    git(p.path(), &["add", ".env"]);
    git(p.path(), &["commit", "-qm", "env"]);
    std::fs::remove_file(p.path().join(".env")).unwrap();
    assert_eq!(verdict("git grep KEY", p.path()), Ok(()), "deleted: git reads the disk");
    git(p.path(), &["update-index", "--assume-unchanged", ".env"]);
    refused("git grep KEY", p.path(), "assume-unchanged");
    git(p.path(), &["update-index", "--no-assume-unchanged", ".env"]);
    git(p.path(), &["update-index", "--skip-worktree", ".env"]);
    refused("git grep KEY", p.path(), "assume-unchanged");
    git(p.path(), &["update-index", "--no-skip-worktree", ".env"]);
    assert_eq!(verdict("git grep KEY", p.path()), Ok(()));

    let sub = repo();
    let sup = repo();
    git(
        sup.path(),
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.path().to_str().unwrap(),
            "sub",
        ],
    );
    assert_eq!(verdict("git grep --cached main", sup.path()), Ok(()));
    refused("git grep --cached --recurse-submodules main", sup.path(), "submodule");
    refused("git grep --recurse-submodules main", sup.path(), "submodule");
    assert_eq!(
        verdict("git grep --recurse-submodules main", p.path()),
        Ok(()),
        "no submodule"
    );
}
