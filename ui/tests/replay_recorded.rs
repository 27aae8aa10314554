//! `tether replay --headless` of a journal against a new policy: what it
//! changes, recorded blocks and deciders, rotated and older journals, and
//! the filters that pick the calls a question asks about.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod replay_support;

use std::path::{Path, PathBuf};

use replay_support::*;
use serde_json::Value;

/// The demo `name` replayed under its own policy (and `extra`), recorded in
/// a journal in `dir`: the journal's path.
fn demo_recorded(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let journal = dir.join("session.jsonl");
    let mut args = extra.to_vec();
    args.extend(["--journal", journal.to_str().unwrap()]);
    let first = replay(
        &demo(&format!("{name}.json")),
        &demo(&format!("{name}.policy.json")),
        &args,
    );
    assert!(first.status.success(), "{first:?}");
    journal
}

#[test]
fn a_journal_replays_against_a_new_policy_and_shows_what_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let journal = demo_recorded(dir.path(), "filesystem", &[]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&journal).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // The same policy reproduces the recording, except what needed a human:
    // nobody answers in a replay without --answer.
    let stricter = write(
        dir.path(),
        "stricter.json",
        r#"{"default": "allow", "rules": [
            {"id": "no-writes", "stage": "pre-execute", "match": {"tool": "write_*"}, "action": {"type": "deny", "reason": "read-only day"}},
            {"id": "no-shell", "stage": "pre-execute", "match": {"tool": "shell"}, "action": {"type": "deny", "reason": "no"}},
            {"id": "no-keys", "stage": "post-execute", "result": {"regex": "AKIA"}, "action": {"type": "block", "reason": "key"}}
        ]}"#,
    );
    let output = replay(journal.to_str().unwrap(), &stricter, &["--json"]);
    let lines = json_lines(&output);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a changed outcome fails its recorded expectation"
    );
    let changed: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["expectation_failed"]["call_id"].as_str())
        .collect();
    // w1 was approved by a human and is now denied by a rule; w2 was vetoed by
    // a guard and is now denied by a rule (same code: unchanged); r4's
    // blocked result never reached the journal, so its recorded block stands.
    assert_eq!(changed, ["w1"]);
    let w1 = lines.iter().find(|l| l["call_id"] == "w1").unwrap();
    assert_eq!(
        (w1["code"].as_str(), w1["decided_by"].as_str()),
        (Some("DENIED"), Some("rule:no-writes"))
    );
    let r2 = lines.iter().find(|l| l["call_id"] == "r2").unwrap();
    assert_eq!(
        r2["value"],
        serde_json::json!({"path": "Cargo.toml"}),
        "bodies return what was recorded"
    );
    assert_eq!(lines.last().unwrap()["summary"]["expectations"]["changed"], 1);
}

/// Records a scenario's run into a journal and returns the journal's path.
fn record(dir: &Path, scenario: &str, policy: &str) -> String {
    let journal = dir.join("recorded.jsonl");
    let scenario = write(dir, "recorded.json", scenario);
    let policy = write(dir, "recorded.policy.json", policy);
    let output = replay(&scenario, &policy, &["--journal", journal.to_str().unwrap()]);
    assert!(output.status.code().is_some_and(|c| c < 2), "{output:?}");
    journal.to_str().unwrap().to_owned()
}

#[test]
fn a_journal_whose_batches_reuse_call_ids_replays_each_against_its_own_recording() {
    let dir = tempfile::tempdir().unwrap();
    // Models number calls per step: both batches have a `c1`.
    let journal = record(
        dir.path(),
        r#"{
          "tools": [{"name": "a", "body": {"return": "first"}}, {"name": "b", "body": {"fail": "second failed"}}],
          "batches": [
            {"calls": [{"id": "c1", "name": "a"}]},
            {"calls": [{"id": "c1", "name": "b"}]}
          ]
        }"#,
        r#"{"default": "allow", "rules": []}"#,
    );
    let same = write(dir.path(), "same.json", r#"{"default": "allow", "rules": []}"#);
    let output = replay(&journal, &same, &["--json"]);
    let lines = json_lines(&output);
    assert_eq!(output.status.code(), Some(0), "nothing changed: {lines:#?}");
    let values: Vec<&Value> = lines
        .iter()
        .filter(|l| l["call_id"] == "c1")
        .map(|l| &l["value"])
        .collect();
    assert_eq!(
        values,
        [
            &serde_json::json!("first"),
            &serde_json::json!({"message": "second failed"})
        ]
    );
}

#[test]
fn a_recorded_block_is_reported_as_blocked_with_recorded_and_new_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let journal = record(
        dir.path(),
        r#"{
          "tools": [{"name": "read", "body": {"return": "AKIA0123"}}, {"name": "write", "body": {"return": "ok"}}],
          "batches": [{"calls": [{"id": "c1", "name": "read"}, {"id": "c2", "name": "write"}]}]
        }"#,
        r#"{"default": "allow", "rules": [{"id": "no-keys", "stage": "post-execute", "result": {"regex": "AKIA"}, "action": {"type": "block", "reason": "a cloud key"}}]}"#,
    );
    let stricter = write(
        dir.path(),
        "stricter.json",
        r#"{"default": "allow", "rules": [{"id": "read-only", "stage": "pre-execute", "match": {"tool": "write"}, "action": {"type": "deny", "reason": "read-only day"}}]}"#,
    );
    let output = replay(&journal, &stricter, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let c1 = stdout.lines().find(|l| l.contains(" c1 ")).unwrap();
    assert!(
        c1.contains("BLOCKED") && !c1.contains("ok"),
        "a recorded block stays blocked: {c1}"
    );
    assert!(
        stdout.contains(
            "CHANGED batch 1 call c2 (write): recorded ok by body → now DENIED by rule:read-only (read-only day)"
        ),
        "{stdout}"
    );
    let json = replay(&journal, &stricter, &["--json"]);
    let lines = json_lines(&json);
    let c1 = lines.iter().find(|l| l["call_id"] == "c1").unwrap();
    assert_eq!(c1["code"], "BLOCKED", "{c1}");
    assert_eq!(c1["recorded"]["code"], "BLOCKED", "{c1}");
    let c2 = lines.iter().find(|l| l["call_id"] == "c2").unwrap();
    assert_eq!(
        (c2["recorded"]["code"].clone(), c2["code"].clone()),
        (Value::Null, serde_json::json!("DENIED"))
    );
}

#[test]
fn a_rotated_journal_replays_as_one_journal() {
    let dir = tempfile::tempdir().unwrap();
    let journal = demo_recorded(dir.path(), "quickstart", &["--answer", "approve"]);
    // Cut the recording as rotation does: whole batches per numbered file.
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut files: Vec<String> = Vec::new();
    let mut last_batch = None;
    for line in text.lines() {
        let batch = serde_json::from_str::<Value>(line).unwrap()["batch"].as_u64();
        if batch.is_none() {
            // The run's header: rotation repeats it at the top of each file.
            continue;
        }
        if batch != last_batch {
            files.push(String::new());
            last_batch = batch;
        }
        files.last_mut().unwrap().push_str(&format!("{line}\n"));
    }
    assert_eq!(files.len(), 3, "three batches");
    for (n, text) in files.iter().enumerate() {
        let path = if n == 0 {
            journal.clone()
        } else {
            PathBuf::from(format!("{}.{n}", journal.display()))
        };
        std::fs::write(path, text).unwrap();
    }
    let output = tether(&["replay", journal.to_str().unwrap(), "--headless", "--json"]);
    let lines = json_lines(&output);
    let calls: Vec<&str> = lines.iter().filter_map(|l| l["call_id"].as_str()).collect();
    assert_eq!(
        calls,
        [
            "call_1", "call_2", "call_3", "call_4", "call_5", "call_6", "call_7", "call_8"
        ],
        "every batch of every file, in order"
    );
}

#[test]
fn a_journal_replay_shows_the_recorded_decider_next_to_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let policy = write(dir.path(), "p.json", ASK_POLICY);
    let journal = fixture("journal-v2.jsonl");
    let output = replay(&journal, &policy, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "recorded under policy /home/ada/project/ask.json (sha256 6f1ed002ab55…), approval timeout 120 s"
        ),
        "{stdout}"
    );
    let header = stdout.lines().find(|l| l.starts_with("BATCH")).unwrap();
    assert!(header.contains("RECORDED BY") && header.contains("NOW BY"), "{header}");
    // The new policy asks for the write again; a replay has no human, so
    // the one the journal recorded answers as he did.
    let row = stdout.lines().find(|l| l.contains("toolu_1")).unwrap();
    assert!(row.contains("human@main (recorded answer)"), "{row}");
    let kept = stdout.lines().find(|l| l.contains("toolu_2 ")).unwrap();
    assert!(kept.contains("always-rule: git status …"), "{kept}");
    assert!(!stdout.contains("CHANGED batch 1 call toolu_1"), "{stdout}");
    // The always-rule was the session's: it is not in the file, so the
    // call is asked now and nobody recorded an answer to it.
    assert!(
        stdout.contains(
            "CHANGED batch 1 call toolu_2 (Bash): recorded ok by always-rule: git status … → now UNAVAILABLE by rule:ask-all"
        ),
        "{stdout}"
    );

    let json = replay(&journal, &policy, &["--json"]);
    let lines = json_lines(&json);
    let first = &lines[0];
    assert_eq!(first["recorded"]["decided_by"], "human@main", "{first}");
    assert_eq!(first["recorded"]["decision"]["waited_ms"], 3150, "{first}");
    assert_eq!(first["now_decided_by"], "human@main (recorded answer)", "{first}");
    assert_eq!(first["decision"]["asked_by"], "ask-all", "{first}");
    let rejected = &lines[2];
    assert_eq!(
        rejected["recorded"]["decision"]["reason"], "not the build dir",
        "{rejected}"
    );
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(
        summary["recorded_under"][0]["policy_sha256"],
        "6f1ed002ab5595859014ebf0951522d9ee9af0d6d9d4b4b6e1b4b1c5c3a0c7d2"
    );
}

#[test]
fn a_journal_from_before_decisions_were_recorded_still_replays() {
    let dir = tempfile::tempdir().unwrap();
    let same = write(
        dir.path(),
        "allow.json",
        r#"{"rules": [{"id": "allow-all", "stage": "pre-execute", "match": {"tool": "Write"}, "action": {"type": "allow"}}]}"#,
    );
    let journal = fixture("journal-v1.jsonl");
    let output = replay(&journal, &same, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.code().is_some_and(|c| c < 2), "{stdout}");
    let row = stdout.lines().find(|l| l.contains("toolu_1")).unwrap();
    assert!(row.contains(" ok ") && row.contains("rule:allow-all"), "{row}");
    assert!(row.contains("  -  "), "no recorded decider, shown as -: {row}");
    let json = replay(&journal, &same, &["--json"]);
    let lines = json_lines(&json);
    assert_eq!(lines[0]["recorded"]["decided_by"], Value::Null);
    assert_eq!(lines[0]["code"], Value::Null);
    assert_eq!(lines[0]["now_decided_by"], "rule:allow-all");
}

#[test]
fn filters_show_only_the_calls_a_question_asks_about() {
    let dir = tempfile::tempdir().unwrap();
    let policy = write(dir.path(), "p.json", ASK_POLICY);
    let journal = fixture("journal-v2.jsonl");
    let shown = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["replay", &journal, "--policy", &policy, "--headless", "--json"];
        args.extend(extra);
        json_lines(&tether(&args))
            .iter()
            .filter_map(|l| l["call_id"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(shown(&["--decided-by", "human"]), ["toolu_1", "toolu_3"]);
    assert_eq!(shown(&["--decided-by", "always-rule"]), ["toolu_2"]);
    assert_eq!(
        shown(&["--decided-by", "rule:ask-all"]).len(),
        3,
        "the new decider counts too"
    );
    assert_eq!(shown(&["--tool", "Bash"]), ["toolu_2", "toolu_3"]);
    assert_eq!(shown(&["--code", "denied"]), ["toolu_3"]);
    assert_eq!(shown(&["--decided-by", "human", "--code", "ok"]), ["toolu_1"]);
    let table = replay(&journal, &policy, &["--decided-by", "human"]);
    let stdout = String::from_utf8_lossy(&table.stdout);
    assert!(stdout.contains("2 calls (shown of 3 replayed)"), "{stdout}");
    assert!(!stdout.contains("toolu_2"), "{stdout}");
}
