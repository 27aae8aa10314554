//! The real bash, as the catalogue's tests run it: a command in a scratch
//! project, with the shell options a user's config may set, its output and
//! errors read back.
// Each test crate uses part of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

/// What bash prints (standard output, then standard error) running
/// `command` in `cwd` with `shopts` set as a sourced config sets them:
/// before the command is read.
pub fn bash(command: &str, shopts: &[&str], cwd: &Path) -> String {
    bash_with(command, shopts, cwd, &[])
}

/// [`bash`] with variables added to its environment (`LC_ALL`).
pub fn bash_with(command: &str, shopts: &[&str], cwd: &Path, env: &[(&str, &OsStr)]) -> String {
    let mut bash = Command::new("bash");
    bash.envs(env.iter().copied());
    for shopt in shopts {
        bash.args(["-O", shopt]);
    }
    let out = bash
        .args(["-c", command])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether bash can be run; in CI it must be.
pub fn have_bash() -> bool {
    let found = Command::new("bash")
        .args(["-c", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "bash must be installed in CI");
        eprintln!("skipped: no bash on PATH");
    }
    found
}

/// `tether explain` in `cwd` with `env` added: covered, and what it said.
pub fn explain_with(command: &str, cwd: &Path, env: &[(&str, &OsStr)]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["explain", "--cwd"])
        .arg(cwd)
        .args(["--", command])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether the read-only catalogue covers every command of `command`, run
/// in `cwd`.
pub fn covered(command: &str, cwd: &Path) -> bool {
    tether_console::shell::Script::parse(command)
        .segments
        .is_ok_and(|segments| {
            !segments.is_empty()
                && segments
                    .iter()
                    .all(|segment| tether_console::shell::catalogue::covers(segment, Some(cwd)).is_ok())
        })
}
