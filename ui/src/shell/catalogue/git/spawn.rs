//! git run by Tether itself, to read what a command would print: with the
//! repository named (no discovery, no `GIT_*` variable of the console's
//! own), configuration that keeps it from running programs (no pager, no
//! fsmonitor, no signature checks, no lazy fetching of a partial clone's
//! missing objects, no prompts), bounded in time and output.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::repo::Repo;

/// The most a run may print (a history of a million objects is ~60 MB).
const MAX_OUTPUT: u64 = 128 << 20;

/// Runs `git ARGS` on `repo`, returning what it printed, or why not.
pub(super) fn git(repo: &Repo, args: &[&str], limit: Duration) -> Result<Vec<u8>, String> {
    git_fed(repo, args, &[], limit)
}

/// Like [`git`], with `input` on git's standard input (`rev-list --stdin`:
/// more revisions than a command line holds).
pub(super) fn git_fed(repo: &Repo, args: &[&str], input: &[u8], limit: Duration) -> Result<Vec<u8>, String> {
    let mut command = Command::new("git");
    command
        .env_clear()
        .envs(
            ["PATH", "HOME", "XDG_CONFIG_HOME"]
                .iter()
                .filter_map(|k| Some((k, std::env::var_os(k)?))),
        )
        .env("LC_ALL", "C")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        .arg("--no-pager")
        // Replaced objects are read as written: with `--all` (which holds
        // refs/replace) both an original and its replacement are read, as
        // `git --no-replace-objects show` and `git show` print them.
        .arg("--no-replace-objects")
        .arg("--git-dir")
        .arg(&repo.git_dir)
        .args(["-c", "core.fsmonitor=false"])
        .args(["-c", "core.untrackedCache=false"])
        .args(["-c", "log.showSignature=false"])
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(args)
        .current_dir(repo.top.as_deref().unwrap_or(&repo.git_dir))
        .stdin(if input.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().map_err(|e| format!("git cannot be run: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // Written beside the reading, so neither pipe can fill and stall git.
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut stdin, &input);
        });
    }
    let mut stdout = child.stdout.take().ok_or("git's output cannot be read")?;
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let read = (&mut stdout).take(MAX_OUTPUT + 1).read_to_end(&mut out);
        let _ = done.send(read.map(|_| out));
    });
    let read = finished.recv_timeout(limit);
    let over = matches!(&read, Ok(Ok(out)) if out.len() as u64 > MAX_OUTPUT);
    if read.is_err() || over {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| format!("git: {e}"))?;
    let out = match read {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(format!("git's output: {e}")),
        Err(_) => return Err(format!("git took more than {} s", limit.as_secs_f32())),
    };
    if out.len() as u64 > MAX_OUTPUT {
        return Err(format!("git printed more than {} MB", MAX_OUTPUT >> 20));
    }
    if !status.success() {
        return Err(format!("`git {}` failed ({status})", args.join(" ")));
    }
    Ok(out)
}
