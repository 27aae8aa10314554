//! The history read behind a content-printing git command (`git log -p`)
//! in a repository of 20,000 commits, after a ref changed: what is new read
//! alone (the last read's tips still tips: a commit made) against the
//! whole history read again (a tip gone: a ref deleted — what every ref
//! change cost before), medians of the same run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tether_console::files::policy::{Policy, Stage, Starter};
use tether_console::files::source::Document;
use tether_tools::{ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;

const COMMITS: usize = 20_000;
const FILES: usize = 500;
const ROUNDS: usize = 15;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A repository of `COMMITS` commits on `main`, each changing one of
/// `FILES` files, written by `git fast-import`.
fn repository(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stream = std::io::BufWriter::new(child.stdin.take().unwrap());
    for i in 0..COMMITS {
        let body = format!("pub const N: usize = {i};\n");
        let message = format!("change {i}\n");
        write!(
            stream,
            "commit refs/heads/main\ncommitter B <b@b> {} +0000\ndata {}\n{message}",
            1_700_000_000 + i,
            message.len()
        )
        .unwrap();
        write!(
            stream,
            "M 100644 inline src/f{}.rs\ndata {}\n{body}\n",
            i % FILES,
            body.len()
        )
        .unwrap();
    }
    drop(stream);
    assert!(child.wait().unwrap().success());
    git(dir, &["reset", "-q", "--hard", "main"]);
}

/// The starter policy deciding `git log -p` in `cwd`: the index of the
/// rule that decides it.
fn decide(policy: &Policy, cwd: &str) -> usize {
    let mut call = ToolCall::new("c", "Bash", json!({ "command": "git log -p" }).to_string());
    call.invocation_context = Some(json!({ "cwd": cwd }));
    let execution = ToolExecution::new(&call, None, CancellationToken::new());
    policy
        .all_rules()
        .filter(|r| r.stage == Stage::PreExecute)
        .position(|r| r.matcher.matches(&execution))
        .unwrap_or(usize::MAX)
}

fn timed(policy: &Policy, cwd: &str) -> (Duration, usize) {
    let start = Instant::now();
    let rule = decide(policy, cwd);
    (start.elapsed(), rule)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let made = Instant::now();
    repository(dir.path());
    println!("{COMMITS} commits written in {:.1} s", made.elapsed().as_secs_f64());
    let cwd = dir.path().to_str().unwrap().to_owned();
    let policy =
        Policy::from_document(&Document::parse("starter.json".into(), Starter::ClaudeCode.text()).unwrap()).unwrap();
    let (first, covered) = timed(&policy, &cwd);
    let (cached, again) = timed(&policy, &cwd);
    let rule = |at: usize| {
        policy
            .all_rules()
            .filter(|r| r.stage == Stage::PreExecute)
            .nth(at)
            .map_or_else(|| "no rule".to_owned(), |r| r.id.to_string())
    };
    println!("`git log -p` decided by {} ({})", rule(covered), rule(again));
    // A read past its time bound leaves the history unknown and the command
    // asked: counted, as it changes what was measured.
    let mut other = 0;
    let tree = git(dir.path(), &["rev-parse", "HEAD^{tree}"]);
    let (mut new_only, mut whole) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // A commit on a ref of its own: every tip read before is still one.
        let commit = git(
            dir.path(),
            &[
                "-c",
                "user.name=B",
                "-c",
                "user.email=b@b",
                "commit-tree",
                &tree,
                "-p",
                "HEAD",
                "-m",
                &format!("r{round}"),
            ],
        );
        git(dir.path(), &["update-ref", &format!("refs/bench/r{round}"), &commit]);
        let (took, decided) = timed(&policy, &cwd);
        other += usize::from(decided != covered);
        new_only.push(took);
        // The ref deleted: a tip is gone, and the whole history is read.
        git(dir.path(), &["update-ref", "-d", &format!("refs/bench/r{round}")]);
        let (took, decided) = timed(&policy, &cwd);
        other += usize::from(decided != covered);
        whole.push(took);
    }
    if other > 0 {
        println!("{other} of {} reads decided otherwise than the first", 2 * ROUNDS);
    }
    let (new_only, whole) = (median(new_only), median(whole));
    println!(
        "first read {:.1} ms; cached {:.3} ms; the read after a ref changed, medians of {ROUNDS}: whole history {:.1} ms, what is new {:.1} ms",
        ms(first),
        ms(cached),
        ms(whole),
        ms(new_only)
    );
    println!(
        "SUMMARY git_history: after a commit in a {COMMITS}-commit repository `git log -p` is decided in p50 {:.1} ms (the whole history read again: {:.1} ms, {:.0}x)",
        ms(new_only),
        ms(whole),
        whole.as_secs_f64() / new_only.as_secs_f64()
    );
}
