//! A recursive read that follows links reads what a link leads to: a
//! plainly named link to a secret (a monorepo linking one env file into a
//! package) is a secret read. Each command is shown printing the secret
//! under the real bash, and is not covered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod real_bash_support;
use real_bash_support::{bash, covered, have_bash};

#[test]
fn a_followed_link_to_a_secret_is_a_secret_read() {
    if !have_bash() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(".env"), "API_KEY=TOPSECRET\n").unwrap();
    std::fs::write(p.join("README.md"), "hi\n").unwrap();
    std::fs::create_dir(p.join("docker")).unwrap();
    std::os::unix::fs::symlink("../.env", p.join("docker/app-env")).unwrap();
    std::fs::create_dir(p.join("other")).unwrap();
    std::fs::write(p.join("other/app-env"), "x\n").unwrap();
    for command in ["grep -R KEY docker", "diff docker other", "rg -L KEY docker"] {
        let out = bash(command, &[], p);
        let runs = !out.contains("command not found");
        if runs {
            assert!(
                out.contains("TOPSECRET"),
                "the control `{command}` prints the secret: {out}"
            );
        }
        assert!(!covered(command, p), "`{command}` is not covered");
    }
    // Without the link, the same reads are covered.
    std::fs::remove_file(p.join("docker/app-env")).unwrap();
    std::fs::write(p.join("docker/app-env"), "y\n").unwrap();
    for command in ["grep -R KEY docker", "diff docker other"] {
        assert!(covered(command, p), "`{command}` is covered");
    }
}

#[test]
fn the_reading_processs_own_files_are_not_resolved_here() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("a.txt"), "a\n").unwrap();
    for command in [
        "cat /proc/self/cwd/a.txt",
        "cat /proc/self/environ",
        "head /proc/thread-self/cwd/a.txt",
        "cat /dev/fd/3",
        "ls -l /proc/self/cwd/",
    ] {
        assert!(!covered(command, p), "`{command}` is not covered");
    }
    assert!(covered("cat a.txt", p));
}

#[test]
fn a_pattern_over_a_directory_outside_lists_its_names_and_is_not_covered() {
    if !have_bash() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("outside-name.txt"), "x\n").unwrap();
    let p = dir.path().join("p");
    std::fs::create_dir(&p).unwrap();
    std::fs::write(p.join("a.txt"), "a\n").unwrap();
    // The control: bash lists the parent's names.
    assert!(bash("echo ../*", &[], &p).contains("outside-name.txt"));
    for command in ["echo ../*", "printf '%s\\n' ../o*", "echo /tmp/*", "echo src/../../*"] {
        assert!(!covered(command, &p), "`{command}` is not covered");
    }
    assert!(covered("echo *", &p));
    assert!(covered("wc -l *.txt", &p));
}

#[test]
fn an_rgignore_that_brings_back_a_secret_is_read_as_ripgrep_reads_it() {
    if !have_bash() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(p)
        .status()
        .unwrap();
    std::fs::write(p.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(p.join(".env"), "API_KEY=TOPSECRET\n").unwrap();
    std::fs::write(p.join("a.txt"), "API_KEY=plain\n").unwrap();
    assert!(
        covered("rg --hidden -g '!.git' API_KEY", p),
        "the gitignored .env is skipped"
    );
    std::fs::write(p.join(".rgignore"), "!.env\n").unwrap();
    let out = bash("rg --hidden -g '!.git' API_KEY", &[], p);
    if !out.contains("command not found") {
        assert!(out.contains("TOPSECRET"), "the control: rg reads .env again: {out}");
    }
    assert!(
        !covered("rg --hidden -g '!.git' API_KEY", p),
        "not covered with .rgignore's !.env"
    );
}

#[test]
fn tree_info_reads_a_linked_info_file_and_is_not_covered() {
    if !have_bash() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gitconfig"), "[github]\n\ttoken = TOPSECRET\n").unwrap();
    let p = dir.path().join("p");
    std::fs::create_dir(&p).unwrap();
    std::fs::write(p.join("g"), "x\n").unwrap();
    std::os::unix::fs::symlink("../gitconfig", p.join(".info")).unwrap();
    let out = bash("tree --info", &[], &p);
    if !out.contains("command not found") {
        assert!(out.contains("TOPSECRET"), "the control: tree prints the comment: {out}");
    }
    assert!(!covered("tree --info", &p));
    assert!(!covered("tree --infofile .info", &p));
    assert!(covered("tree", &p));
}

#[test]
fn a_pattern_through_a_links_dotdot_lists_the_parent_of_its_target_and_is_not_covered() {
    if !have_bash() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("inner")).unwrap();
    std::fs::write(outside.join("outside-name.txt"), "x\n").unwrap();
    std::fs::write(outside.join("inner/..hidden-name"), "x\n").unwrap();
    let p = dir.path().join("p");
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("src/a.txt"), "a\n").unwrap();
    // Read as written, `link/..` is the project itself; the kernel takes
    // `..` from the link's target, and so do bash's and zsh's globbing.
    std::os::unix::fs::symlink("../outside/inner", p.join("link")).unwrap();
    std::os::unix::fs::symlink("src", p.join("near")).unwrap();
    for (command, names) in [
        ("echo link/../*", "outside-name.txt"),
        ("printf '%s\\n' link/../o*", "outside-name.txt"),
        ("echo link/..?*", "..hidden-name"),
        ("echo link/../inner/../*", "outside-name.txt"),
        ("echo */../*", "outside-name.txt"),
        ("echo link/*", "..hidden-name"),
    ] {
        // The control: the real shells list the outside directory's names.
        let out = bash(command, &["dotglob"], &p);
        assert!(out.contains(names), "bash lists outside with `{command}`: {out}");
        if let Some(out) = zsh(command, &p) {
            assert!(out.contains(names), "zsh lists outside with `{command}`: {out}");
        }
        assert!(!covered(command, &p), "`{command}` is not covered");
    }
    // A link inside the project, and `..` that stays in it, are covered.
    for command in ["echo src/../*", "echo near/*", "echo near/../src/*", "wc -l near/*.txt"] {
        assert!(covered(command, &p), "`{command}` is covered");
    }
}

/// What zsh (with `GLOB_DOTS`) prints running `command` in `cwd`, when
/// zsh is installed.
fn zsh(command: &str, cwd: &std::path::Path) -> Option<String> {
    let out = std::process::Command::new("zsh")
        .args(["-f", "-o", "globdots", "-c", command])
        .current_dir(cwd)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}
