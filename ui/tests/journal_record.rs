//! The journal keeps what was true when a call was decided: the tools'
//! declarations, the policy in force (and every change of it), the real
//! wait; a replay of it is judged against that record.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

mod pty_support;
use pty_support::{Served, demo};

const ALLOW_ALL: &str =
    r#"{"rules": [{"id": "allow-all", "stage": "pre-execute", "match": {"tool": "*"}, "action": {"type": "allow"}}]}"#;

fn tether(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether")).args(args).output().unwrap()
}

fn records(journal: &Path) -> Vec<Value> {
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `demos/batch.send.json` sent to `tether serve --journal DIR/j.jsonl ARGS`
/// (approving every ask), the console stopped again.
fn recorded_demo_batch(dir: tempfile::TempDir, args: &[&str]) -> Served {
    let mut all = vec!["--answer", "approve", "--journal", "{dir}/j.jsonl"];
    all.extend(args);
    let mut served = Served::headless(dir, &all);
    let sent = served.send_output(Path::new(&demo("batch.send.json")));
    assert_eq!(sent.status.code(), Some(1), "c4 fails: {}", text(&sent.stdout));
    served.stop();
    served
}

#[test]
fn a_replayed_journal_checks_calls_against_the_schemas_they_were_declared_with() {
    let served = recorded_demo_batch(
        Served::dir_with(&[("allow.json", ALLOW_ALL)]),
        &["--policy", "{dir}/allow.json"],
    );
    let journal = served.path("j.jsonl");
    let policy = served.path("allow.json");
    let declared: Vec<Value> = records(&journal)
        .into_iter()
        .filter(|r| r["event"] == "tool/declared")
        .collect();
    let lookup = declared
        .iter()
        .find(|d| d["name"] == "lookup")
        .expect("lookup is declared");
    assert_eq!(lookup["parameters"]["required"][0], "word", "{lookup}");
    assert_eq!(lookup["concurrency"], "always", "{lookup}");
    assert_eq!(lookup["scope"]["label"], "script");
    assert_eq!(declared.len(), 2, "each tool once: {declared:#?}");

    let replayed = tether(&[
        "replay",
        journal.to_str().unwrap(),
        "--headless",
        "--policy",
        policy.to_str().unwrap(),
    ]);
    let table = text(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "nothing changed:\n{table}");
    assert!(!table.contains("CHANGED"), "{table}");
    let row = |call: &str| -> Vec<String> {
        let line = table
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(call))
            .unwrap();
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(
        row("c4")[4..8],
        ["INVALID_ARGS", "schema", "INVALID_ARGS", "schema"],
        "{table}"
    );
    assert_eq!(
        row("c1")[3],
        "PAR",
        "the recorded concurrency rule classifies c1:\n{table}"
    );
}

const DENY_REMEMBER: &str = r#"{"rules": [{"id": "no-remember", "stage": "pre-execute", "match": {"tool": "remember"}, "action": {"type": "deny", "reason": "not now"}}, {"id": "allow-all", "stage": "pre-execute", "match": {"tool": "*"}, "action": {"type": "allow"}}]}"#;

fn sha256_of(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    text(&out.stdout).split_whitespace().next().unwrap().to_owned()
}

#[test]
fn sighup_reloads_a_headless_consoles_policy_and_the_journal_says_which_policy_decided() {
    let dir = Served::dir_with(&[("policy.json", ALLOW_ALL)]);
    let mut served = Served::headless(dir, &["--policy", "{dir}/policy.json", "--journal", "{dir}/j.jsonl"]);
    let policy = served.path("policy.json");
    let batch = Path::new(&demo("batch.send.json")).to_owned();
    let first_sha = sha256_of(&policy);
    served.send_output(&batch);

    std::fs::write(&policy, DENY_REMEMBER).unwrap();
    served.signal("HUP");
    let said = served.stderr_line("policy reloaded");
    assert!(said.contains("policy.json, 2 rules"), "{said}");
    let second_sha = sha256_of(&policy);
    served.send_output(&batch);

    // A file with errors keeps the policy in force and says why.
    std::fs::write(&policy, "{\"rules\": [").unwrap();
    served.signal("HUP");
    let said = served.stderr_line("policy not reloaded");
    assert!(said.contains("stays in force"), "{said}");
    let sent = served.send_output(&batch);
    let outcomes = text(&sent.stdout);
    assert!(
        outcomes.contains("not now"),
        "the reloaded policy still decides: {outcomes}"
    );

    let out = served.stop();
    assert!(out.status.success() || out.status.code().is_none(), "{out:?}");
    let journal = records(&served.path("j.jsonl"));
    let reload = journal
        .iter()
        .find(|r| r["event"] == "policy/reload")
        .expect("a policy/reload record");
    assert_eq!(reload["by"], "SIGHUP");
    assert_eq!(reload["rules"], 2);
    assert_eq!(reload["policy_sha256"], second_sha.as_str());
    assert!(reload["policy_path"].as_str().unwrap().ends_with("policy.json"));
    let failed = journal
        .iter()
        .find(|r| r["event"] == "policy/reload-failed")
        .expect("a policy/reload-failed record");
    assert_eq!(failed["by"], "SIGHUP");
    assert!(failed["error"].as_str().unwrap().contains("policy.json"), "{failed}");
    let shas: Vec<&str> = journal
        .iter()
        .filter(|r| r["event"] == "tool/result" && r["call_id"] == "c3")
        .map(|r| r["policy_sha256"].as_str().unwrap())
        .collect();
    assert_eq!(shas, [first_sha.as_str(), second_sha.as_str(), second_sha.as_str()]);

    // The replay names every policy the journal was recorded under.
    let replayed = tether(&[
        "replay",
        served.path("j.jsonl").to_str().unwrap(),
        "--headless",
        "--answer",
        "approve",
    ]);
    let table = text(&replayed.stdout);
    assert!(
        table.contains(&format!("recorded under policy {}", policy.display())),
        "{table}"
    );
    assert!(table.contains("policy reloaded by SIGHUP:"), "{table}");
    assert!(table.contains("policy reload by SIGHUP failed"), "{table}");
}

#[test]
fn a_journal_replayed_without_a_policy_runs_under_the_one_it_was_recorded_under_and_says_so() {
    let served = recorded_demo_batch(
        Served::dir_with(&[("allow.json", ALLOW_ALL)]),
        &["--policy", "{dir}/allow.json"],
    );
    let journal = served.path("j.jsonl");
    let policy = std::path::absolute(served.path("allow.json")).unwrap();
    let bare = tether(&["replay", journal.to_str().unwrap(), "--headless"]);
    let said = text(&bare.stderr);
    assert!(
        said.contains(&format!(
            "now under the policy the journal was recorded under, {} (--policy FILE for another)",
            policy.display()
        )),
        "{said}"
    );
    assert_eq!(bare.status.code(), Some(0), "{}", text(&bare.stdout));
    assert!(
        text(&bare.stdout).contains(&format!("now under policy {} (sha256", policy.display())),
        "{}",
        text(&bare.stdout)
    );

    let from = tether(&[
        "replay",
        journal.to_str().unwrap(),
        "--headless",
        "--policy-from-journal",
    ]);
    let table = text(&from.stdout);
    assert_eq!(
        from.status.code(),
        Some(0),
        "the recorded policy changes nothing:\n{table}{}",
        text(&from.stderr)
    );
    assert!(
        table.contains(&format!("now under policy {} (sha256", policy.display())),
        "{table}"
    );
    assert!(!text(&from.stderr).contains("now: no policy"));

    // A journal recorded without a policy file has none to offer.
    let none = recorded_demo_batch(tempfile::tempdir().unwrap(), &[]);
    let bare = tether(&["replay", none.path("j.jsonl").to_str().unwrap(), "--headless"]);
    assert!(
        text(&bare.stderr)
            .contains("now: no policy (every call is asked) — pass --policy FILE (the journal names no policy file)"),
        "{}",
        text(&bare.stderr)
    );
    let refused = tether(&[
        "replay",
        none.path("j.jsonl").to_str().unwrap(),
        "--headless",
        "--policy-from-journal",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stdout).contains("recorded without a policy file"),
        "{}",
        text(&refused.stdout)
    );
}

#[test]
fn a_decider_filter_that_matches_nothing_names_the_deciders_the_journal_holds() {
    let served = recorded_demo_batch(
        Served::dir_with(&[("allow.json", ALLOW_ALL)]),
        &["--policy", "{dir}/allow.json"],
    );
    let journal = served.path("j.jsonl");
    let policy = served.path("allow.json");
    let args = [
        "replay",
        journal.to_str().unwrap(),
        "--headless",
        "--policy",
        policy.to_str().unwrap(),
    ];
    let typo = tether(&[&args[..], &["--decided-by", "humn"]].concat());
    let said = text(&typo.stderr);
    assert!(
        said.contains("--decided-by humn matches no call; the deciders here are: rule:allow-all, schema"),
        "{said}"
    );
    let found = tether(&[&args[..], &["--decided-by", "schema"]].concat());
    assert!(
        !text(&found.stderr).contains("matches no call"),
        "{}",
        text(&found.stderr)
    );
}

/// A reload from the console's key is recorded with the key that did it,
/// as the key table (and so the footer and help) names it: `p`, not `R`
/// (which lists the always-rules).
#[test]
fn a_reload_by_key_is_recorded_with_the_key_the_console_binds() {
    let dir = Served::dir_with(&[("policy.json", ALLOW_ALL)]);
    let mut served = Served::console(dir, &["--policy", "{dir}/policy.json"]);
    served.screen().keys("p");
    served.sees().wait_for("policy reloaded from");
    let journal = served.quit();
    let reload = journal
        .iter()
        .find(|r| r["event"] == "policy/reload")
        .expect("a policy/reload record");
    assert_eq!(reload["by"], "key p", "{reload}");
}
