//! A catalogued name that runs something else: a function the environment
//! exports (bash imports it and runs it before any file), or a file found
//! through a relative `PATH` entry or one inside the project. Each is shown
//! running the other program under the real bash, and is not covered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;

mod real_bash_support;
use real_bash_support::{bash_with, explain_with as explain, have_bash};

/// A project with `bin/cat`, a program that says it ran.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("a.txt"), "a\n").unwrap();
    std::fs::create_dir(p.join("bin")).unwrap();
    let planted = p.join("bin/cat");
    std::fs::write(&planted, "#!/bin/sh\necho PLANTED-RAN\n").unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

#[test]
fn an_exported_function_or_a_path_into_the_project_makes_a_name_not_covered() {
    if !have_bash() {
        return;
    }
    let dir = project();
    let p = dir.path();
    let system = std::env::var("PATH").unwrap();
    let inside = OsString::from(format!("{}:{system}", p.join("bin").display()));
    let relative = OsString::from(format!("bin:{system}"));
    let function = OsStr::new("() {  echo FUNCTION-RAN\n}");
    for (env, ran, says) in [
        (
            vec![("BASH_FUNC_cat%%", function)],
            "FUNCTION-RAN",
            "exports a function `cat`",
        ),
        (
            vec![("PATH", inside.as_os_str())],
            "PLANTED-RAN",
            "inside the working directory",
        ),
        (
            vec![("PATH", relative.as_os_str())],
            "PLANTED-RAN",
            "relative directory `bin`",
        ),
    ] {
        // The control: bash runs the other program.
        assert!(bash_with("cat a.txt", &[], p, &env).contains(ran), "{ran}");
        let (covered, out) = explain("cat a.txt", p, &env);
        assert!(!covered, "`cat a.txt` is not covered: {out}");
        assert!(out.contains(says), "{out}");
    }
    // Without them, and for another name, it is covered.
    assert!(explain("cat a.txt", p, &[]).0);
    let inside = [("PATH", inside.as_os_str())];
    assert!(explain("head a.txt", p, &inside).0, "no `head` in the project's bin");
    let other = [("BASH_FUNC_ls%%", function)];
    assert!(explain("cat a.txt", p, &other).0, "a function of another name");
}
