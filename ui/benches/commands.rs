//! The `command` matcher on 200 commands an agent really runs: per command,
//! the bash grammar's read and the starter policy's shell rules deciding it,
//! against today's alternative, a regex rule on the command text, in the
//! same run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use serde_json::json;
use tether_console::files::policy::{Policy, Stage, Starter};
use tether_console::files::source::Document;
use tether_tools::{ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;

/// Commands of the kind an hour on a Rust project runs (reads, searches,
/// git, builds), some compound, some with quotes and pipes.
const SEED: &[&str] = &[
    "git status",
    "git status --short",
    "git diff",
    "git diff --stat HEAD~1",
    "git log --oneline -20",
    "git log -p -- src/main.rs",
    "git show HEAD:Cargo.toml",
    "git branch --show-current",
    "git status && git diff --stat",
    "ls",
    "ls -la src",
    "ls -la src/shell | grep rs",
    "cat Cargo.toml",
    "head -n 40 src/lib.rs",
    "tail -n 100 target/log.txt",
    "wc -l src/*.rs",
    "rg 'fn main' src",
    "rg -n \"impl Display\" --type rust",
    "grep -rn TODO src | head -20",
    "find src -name '*.rs' | sort",
    "find . -type f -name Cargo.toml -not -path './target/*'",
    "pwd",
    "which cargo",
    "echo \"build done\"",
    "cargo test",
    "cargo test -p tether --lib shell",
    "cargo build --release 2>&1 | tail -5",
    "cargo clippy --workspace --all-targets -- -D warnings",
    "cargo fmt --all --check",
    "rm -rf target/debug/incremental",
    "mkdir -p tests/fixtures",
    "git add -A && git commit -m 'shell: read commands as bash does'",
    "sed -n '1,40p' src/main.rs",
    "python3 -c 'import json; print(1)'",
    "npm install --no-fund",
    "diff -u a.txt b.txt",
    "du -sh target",
    "stat Cargo.lock",
    "tree -L 2 src",
    "cd ui && cargo test",
];

fn corpus() -> Vec<String> {
    // 200 commands: the seed, then each with a varied argument.
    (0..200)
        .map(|i| {
            let base = SEED[i % SEED.len()];
            if i < SEED.len() {
                base.to_owned()
            } else {
                format!("{base} x{i}")
            }
        })
        .collect()
}

fn policy(text: &str) -> Policy {
    Policy::from_document(&Document::parse("bench.json".into(), text.into()).unwrap()).unwrap()
}

fn decide(policy: &Policy, execution: &ToolExecution) -> usize {
    policy
        .all_rules()
        .filter(|r| r.stage == Stage::PreExecute)
        .position(|r| r.matcher.matches(execution))
        .unwrap_or(usize::MAX)
}

/// Each call's decision times over `rounds` rounds of the whole corpus,
/// taken round-robin (a command repeated back to back would be served
/// from the parse cache, which a real call never is).
fn samples(policy: &Policy, calls: &[ToolExecution], rounds: usize) -> Vec<Vec<Duration>> {
    let mut samples = vec![Vec::with_capacity(rounds); calls.len()];
    for _ in 0..rounds {
        for (call, taken) in calls.iter().zip(samples.iter_mut()) {
            let start = Instant::now();
            std::hint::black_box(decide(policy, call));
            taken.push(start.elapsed());
        }
    }
    samples
}

fn median(mut taken: Vec<Duration>) -> Duration {
    taken.sort();
    taken[taken.len() / 2]
}

/// The median decision over every call and round.
fn p50(policy: &Policy, calls: &[ToolExecution], rounds: usize) -> Duration {
    median(samples(policy, calls, rounds).concat())
}

/// Each call's median over `rounds` rounds.
fn per_command(policy: &Policy, calls: &[ToolExecution], rounds: usize) -> Vec<Duration> {
    samples(policy, calls, rounds).into_iter().map(median).collect()
}

fn main() {
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().to_str().unwrap().to_owned();
    let corpus_commands = corpus();
    let calls: Vec<ToolExecution> = corpus_commands
        .iter()
        .map(|command| {
            let mut call = ToolCall::new("c", "Bash", json!({ "command": command }).to_string());
            call.invocation_context = Some(json!({ "cwd": cwd }));
            ToolExecution::new(&call, None, CancellationToken::new())
        })
        .collect();
    let starter = policy(&Starter::ClaudeCode.text());
    // The same shell rules without the working-directory check, to show
    // what the path resolution costs.
    let mut without: serde_json::Value = serde_json::from_str(&Starter::ClaudeCode.text()).unwrap();
    for rule in without["rules"].as_array_mut().unwrap() {
        if let Some(m) = rule["match"].as_object_mut() {
            m.remove("command_paths_within");
        }
        // Its examples of paths outside the project no longer hold.
        rule.as_object_mut().unwrap().remove("examples");
    }
    let no_paths = policy(&without.to_string());
    let regex = policy(
        r#"{"rules": [
          {"id": "ask-rm", "stage": "pre-execute", "match": {"tool": "Bash", "args": [{"pointer": "/command", "regex": "(^|[;&|\\s])rm\\s"}]}, "action": {"type": "ask"}},
          {"id": "git", "stage": "pre-execute", "match": {"tool": "Bash", "args": [{"pointer": "/command", "regex": "^git (status|diff|log|show|branch)( |$)"}]}, "action": {"type": "allow"}},
          {"id": "reads", "stage": "pre-execute", "match": {"tool": "Bash", "args": [{"pointer": "/command", "regex": "^(ls|cat|head|tail|wc|rg|grep|find|pwd|which|echo)( |$)"}]}, "action": {"type": "allow"}}
        ]}"#,
    );
    // Warm up (the parser per thread, the allocator).
    p50(&starter, &calls, 2);
    let rounds = 25;
    let mut ratios = Vec::new();
    for run in 1..=3 {
        let command = p50(&starter, &calls, rounds);
        let command_no_paths = p50(&no_paths, &calls, rounds);
        let text = p50(&regex, &calls, rounds);
        println!(
            "run {run}: starter policy (command rules, paths in cwd) p50 {:.1} µs a command; without the path check {:.1} µs; regex rules {:.2} µs ({:.0}×)",
            command.as_secs_f64() * 1e6,
            command_no_paths.as_secs_f64() * 1e6,
            text.as_secs_f64() * 1e6,
            command.as_secs_f64() / text.as_secs_f64()
        );
        ratios.push((command, command_no_paths, text));
    }
    // Where the time goes: each command's median over the rounds.
    let mut each: Vec<(Duration, &str)> = per_command(&starter, &calls, 15)
        .into_iter()
        .zip(corpus_commands.iter().map(String::as_str))
        .collect();
    each.sort_by(|a, b| b.cmp(a));
    let at = |q: usize| each[(each.len() - 1) * (100 - q) / 100].0.as_secs_f64() * 1e6;
    println!(
        "per command (its median of 15 rounds): p90 {:.1} µs, p75 {:.1} µs, p50 {:.1} µs, p25 {:.1} µs; the slowest:",
        at(90),
        at(75),
        at(50),
        at(25)
    );
    for (took, command) in each.iter().take(12) {
        println!("  {:>7.1} µs  {command}", took.as_secs_f64() * 1e6);
    }
    ratios.sort();
    let (command, no_paths, text) = ratios[1];
    println!(
        "SUMMARY commands: the starter policy decides a command in p50 {:.1} µs ({:.1} µs without the path check) = {:.0}x a regex rule's {:.2} µs (goal: 20 µs)",
        command.as_secs_f64() * 1e6,
        no_paths.as_secs_f64() * 1e6,
        command.as_secs_f64() / text.as_secs_f64(),
        text.as_secs_f64() * 1e6
    );
}
