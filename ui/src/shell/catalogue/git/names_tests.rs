//! git's name-listing subcommands: covered forms change nothing in the
//! repository when the real git runs them; each refused form does.

use std::path::Path;
use std::process::{Command, Stdio};

use super::tests::{git, refused, repo, verdict};

/// Every file under `.git` with its length and modification time: what a
/// command that only reads leaves as it was.
fn state(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.join(".git")];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                found.push((entry.path().display().to_string(), meta.len(), meta.modified().unwrap()));
            }
        }
    }
    found.sort();
    found
}

/// Runs `command` with the real git (by bash, as an agent's shell would).
fn run(command: &str, dir: &Path) {
    Command::new("bash")
        .args(["-c", command])
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
}

#[test]
fn listing_tags_refs_and_ids_is_covered_and_changes_nothing() {
    let p = repo();
    let dir = p.path();
    git(dir, &["tag", "v1", "HEAD~1"]);
    git(dir, &["tag", "-a", "v2", "-m", "two"]);
    // The index's own refresh would change its time, not its content.
    git(dir, &["status"]);
    let before = state(dir);
    for ok in [
        "git tag",
        "git tag -l 'v*'",
        "git tag --list",
        "git tag -n1",
        "git tag -n 3",
        "git tag --sort=-v:refname",
        "git tag --contains HEAD~1",
        "git tag --points-at HEAD",
        "git tag --merged main 'v*'",
        "git tag --format='%(refname:short)'",
        "git describe --tags",
        "git describe --always --abbrev=12 HEAD",
        "git describe --contains v1",
        "git rev-list --count HEAD",
        "git rev-list -n 1 HEAD",
        "git rev-list -5 --all --objects",
        "git rev-list --left-right --count main...HEAD",
        "git ls-tree -r --name-only HEAD",
        "git ls-tree HEAD src",
        "git merge-base main HEAD",
        "git merge-base --is-ancestor v1 HEAD",
        "git show-ref",
        "git show-ref --tags -d",
    ] {
        assert_eq!(verdict(ok, dir), Ok(()), "{ok}");
        run(ok, dir);
        assert_eq!(state(dir), before, "`{ok}` changed the repository");
    }
}

#[test]
fn name_listing_forms_that_write_or_run_gpg_are_refused_and_do_write() {
    let p = repo();
    let dir = p.path();
    git(dir, &["tag", "v1"]);
    for (command, says) in [
        ("git tag v3", "one operand more"),
        ("git tag --sort=refname v4", "one operand more"),
        ("git tag -i v5", "one operand more"),
        ("git tag --column=never v6", "one operand more"),
        ("git tag -d v1", "deletes a tag"),
        ("git tag -f v1 HEAD~1", "replaces a tag"),
        ("git tag -a v7 -m x", "creates a tag"),
        ("git tag -v v1", "runs gpg"),
        ("git tag --format='%(signature)'", "runs gpg"),
        ("git describe --dirty", "writes .git/index"),
        ("git rev-list --stdin", "standard input"),
        ("git rev-list --pretty=%G? HEAD", "is not an option"),
        ("git ls-tree --name-only HEAD > x", "redirection"),
    ] {
        refused(command, dir, says);
    }
    // The control: the forms that name a tag do make or drop one.
    let before = state(dir);
    for writes in ["git tag v3", "git tag --sort=refname v4", "git tag -d v1"] {
        run(writes, dir);
        let after = state(dir);
        assert_ne!(after, before, "`{writes}` changed the repository");
    }
}

#[test]
fn a_revisions_path_outside_the_working_directory_is_not_covered() {
    let p = repo();
    let top = p.path();
    std::fs::create_dir_all(top.join("other")).unwrap();
    std::fs::write(top.join("other/notes.txt"), "NOTES-OUTSIDE\n").unwrap();
    git(top, &["add", "."]);
    git(top, &["commit", "-qm", "notes"]);
    let sub = top.join("src");
    // The control: git reads it from the subdirectory.
    let out = Command::new("git")
        .args(["show", "HEAD:../other/notes.txt"])
        .current_dir(&sub)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("NOTES-OUTSIDE"));
    refused(
        "git show HEAD:../other/notes.txt",
        &sub,
        "outside the working directory",
    );
    refused("git show HEAD:other/notes.txt", &sub, "repository's top");
    assert_eq!(verdict("git show HEAD:./main.rs", &sub), Ok(()));
    assert_eq!(verdict("git show HEAD:other/notes.txt", top), Ok(()));
}
