//! `hash` in the read-only catalogue: the forms that only read bash's table
//! of remembered programs (or remember one as PATH finds it) are covered;
//! `hash -p PATH NAME`, which makes a later `NAME` in the same script run
//! another program, and `-d`/`-r` are refused. Proved with the real bash.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod real_bash_support;
use real_bash_support::{bash, covered, have_bash};

#[test]
fn hash_that_reads_is_covered_and_a_later_word_still_runs_its_program() {
    if !have_bash() {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path();
    std::fs::write(cwd.join("a.txt"), "the file\n").unwrap();
    for form in ["hash", "hash -l", "hash -t cat", "hash cat", "hash -- cat"] {
        let command = format!("{form}; cat a.txt");
        assert!(covered(&command, cwd), "`{command}` is covered");
        assert!(
            bash(&command, &[], cwd).contains("the file"),
            "`{command}` still runs cat"
        );
    }
}

#[test]
fn hash_that_changes_what_a_name_runs_is_refused() {
    if !have_bash() {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path();
    std::fs::write(cwd.join("a.txt"), "the file\n").unwrap();
    let id = bash("command -v id", &[], cwd).trim().to_owned();
    for form in [
        format!("hash -p {id} cat"),
        format!("hash -p{id} cat"),
        format!("hash -lp {id} cat"),
    ] {
        let command = format!("{form}; cat a.txt");
        assert!(!covered(&command, cwd), "`{command}` is refused");
        // The control: the later `cat` runs id.
        let out = bash(&command, &[], cwd);
        assert!(
            !out.contains("the file") && out.contains("a.txt"),
            "`{command}` ran id: {out}"
        );
    }
    for form in ["hash -d cat", "hash -r", "hash -rd cat", "hash --help"] {
        assert!(!covered(form, cwd), "`{form}` is refused");
    }
}
