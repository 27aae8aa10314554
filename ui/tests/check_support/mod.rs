//! What the `tether check` tests share: the command run on files written
//! into a directory of their own, paths shown as the files' names.
#![allow(dead_code)]

use std::process::Command;

/// A scenario with one scope, one tool and one call.
pub const SCENARIO_HEAD: &str = r#"{
  "scopes": [{"id": "a"}],
  "tools": [{"name": "t", "body": {"return": 1}}],
  "batches": [{"calls": [{"id": "c", "name": "t"}]}]
}"#;

/// `tether check` on `files` (name, text) written into one directory, with
/// `vars` set and the other variables the server lists use removed: its
/// exit code and stdout, each path shown as the file's name.
pub fn check_files_with_env(files: &[(&str, &str)], vars: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<_> = files
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    command.arg("check").args(&paths);
    for var in ["TETHER_TEST_TOKEN", "TETHER_TEST_UNSET"] {
        command.env_remove(var);
    }
    command.envs(vars.iter().copied());
    let output = command.output().unwrap();
    let shown = format!("{}/", dir.path().display());
    let stdout = String::from_utf8(output.stdout).unwrap().replace(&shown, "");
    (output.status.code().unwrap(), stdout)
}

/// `tether check` on one file `name` holding `text`.
pub fn check(name: &str, text: &str) -> (i32, String) {
    check_files_with_env(&[(name, text)], &[])
}

/// `tether check` on several files written to one directory.
pub fn check_together(files: &[(&str, &str)]) -> (i32, String) {
    check_files_with_env(files, &[])
}

/// `tether check` on one file with `vars` set.
pub fn check_with_env(name: &str, text: &str, vars: &[(&str, &str)]) -> (i32, String) {
    check_files_with_env(&[(name, text)], vars)
}
