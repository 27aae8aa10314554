//! `tether replay --headless`: demos, expectations, exit codes, answers,
//! JSON output and journals replayed against a new policy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../demos").join(name)
}

fn tether(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether")).args(args).output().unwrap()
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn every_demo_replays_with_all_its_expectations_met() {
    for name in ["quickstart", "filesystem", "scopes", "faults"] {
        let scenario = demo(&format!("{name}.json"));
        let policy = demo(&format!("{name}.policy.json"));
        let output = tether(&[
            "replay",
            scenario.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "--headless",
        ]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{name}:\n{stdout}");
        assert!(stdout.contains(" 0 failed"), "{name}:\n{stdout}");
    }
}

#[test]
fn without_a_scenario_the_bundled_default_demo_replays() {
    let output = tether(&["replay", "--headless", "--json"]);
    assert!(output.status.success());
    let lines = json_lines(&output);
    assert_eq!(lines.last().unwrap()["summary"]["expectations"]["failed"], 0);
    assert_eq!(lines.len(), 9, "eight calls and a summary");
}

#[test]
fn json_lines_carry_every_field_in_declared_order() {
    let scenario = demo("faults.json");
    let policy = demo("faults.policy.json");
    let output = tether(&[
        "replay",
        scenario.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
        "--headless",
        "--json",
    ]);
    let lines = json_lines(&output);
    let first = &lines[0];
    let keys: Vec<&str> = first.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "batch",
            "call_id",
            "name",
            "arguments",
            "mode",
            "code",
            "value",
            "decided_by",
            "decision"
        ]
    );
    let ids: Vec<&str> = lines.iter().filter_map(|l| l["call_id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12"
        ]
    );
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["calls"], 12);
    assert_eq!(summary["codes"]["INVALID_ARGS"], 3);
    assert_eq!(summary["codes"]["ABORTED"], 3);
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

const ASKING: &str = r#"{
  "tools": [{"name": "t", "body": {"return": "ran"}}],
  "batches": [{"calls": [{"id": "c1", "name": "t", "expect": {"code": null}}]}]
}"#;
const ASK_POLICY: &str = r#"{"rules": [{"id": "ask-all", "stage": "pre-execute", "action": {"type": "ask"}}]}"#;

#[test]
fn a_failed_expectation_exits_1_and_says_what_differed() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.json", ASKING);
    let policy = write(dir.path(), "p.json", ASK_POLICY);
    let output = tether(&["replay", &scenario, "--policy", &policy, "--headless"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAILED batch 1 call c1 (t): expected success, got UNAVAILABLE (approval unavailable: nobody is there to answer)"),
        "{stdout}"
    );
    let json = tether(&["replay", &scenario, "--policy", &policy, "--headless", "--json"]);
    let lines = json_lines(&json);
    assert_eq!(lines[1]["expectation_failed"]["call_id"], "c1");
    assert_eq!(lines[2]["summary"]["expectations"]["failed"], 1);
}

/// A call id or tool name that carries terminal control characters is
/// shown escaped in the failure line too, as in the table: replaying a
/// scenario made from an agent's journal must not let it drive the terminal.
#[test]
fn a_failed_expectation_line_escapes_the_call_id_and_the_tool_name() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = ASKING.replace(r#""id": "c1""#, r#""id": "c1\u001b]0;owned\u0007""#);
    assert_ne!(hostile, ASKING);
    let scenario = write(dir.path(), "s.json", &hostile);
    let policy = write(dir.path(), "p.json", ASK_POLICY);
    let output = tether(&["replay", &scenario, "--policy", &policy, "--headless"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}'),
        "no raw escape reaches the terminal: {stdout:?}"
    );
    assert!(
        stdout.contains(r"FAILED batch 1 call c1\u{1b}]0;owned\u{7} (t): expected success"),
        "{stdout}"
    );
}

#[test]
fn the_answer_flag_answers_every_unscripted_approval() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.json", ASKING);
    let policy = write(dir.path(), "p.json", ASK_POLICY);
    for (answer, code, decided_by) in [
        ("approve", Value::Null, "script"),
        ("reject", Value::from("DENIED"), "script"),
        ("none", Value::from("UNAVAILABLE"), "no-answerer"),
        ("timeout", Value::from("UNAVAILABLE"), "timeout"),
    ] {
        let output = tether(&[
            "replay",
            &scenario,
            "--policy",
            &policy,
            "--headless",
            "--json",
            "--answer",
            answer,
        ]);
        let lines = json_lines(&output);
        assert_eq!(
            (&lines[0]["code"], lines[0]["decided_by"].as_str()),
            (&code, Some(decided_by)),
            "{answer}"
        );
    }
}

#[test]
fn bad_input_exits_2_with_the_position() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.json", "{\n  \"tools\": [],\n  \"batches\": [}\n");
    let output = tether(&["replay", &scenario, "--headless"]);
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("s.json:3:15: invalid JSON"), "{stdout}");
}

#[test]
fn a_policy_naming_a_scope_the_scenario_lacks_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.json", ASKING);
    let policy = write(
        dir.path(),
        "p.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"pre-execute\",\n  \"match\": {\"scope\": \"ghost\"}, \"action\": {\"type\": \"allow\"}}]}",
    );
    let output = tether(&["replay", &scenario, "--policy", &policy, "--headless"]);
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("p.json:2:13: unknown scope \"ghost\": the scenario defines no scopes"),
        "{stdout}"
    );
}

#[test]
fn a_journal_replays_against_a_new_policy_and_shows_what_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("session.jsonl");
    let scenario = demo("filesystem.json");
    let policy = demo("filesystem.policy.json");
    let first = tether(&[
        "replay",
        scenario.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
        "--headless",
        "--journal",
        journal.to_str().unwrap(),
    ]);
    assert!(first.status.success());
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
    let output = tether(&[
        "replay",
        journal.to_str().unwrap(),
        "--policy",
        &stricter,
        "--headless",
        "--json",
    ]);
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
    let output = tether(&[
        "replay",
        &scenario,
        "--policy",
        &policy,
        "--headless",
        "--journal",
        journal.to_str().unwrap(),
    ]);
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
    let output = tether(&["replay", &journal, "--policy", &same, "--headless", "--json"]);
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
    let output = tether(&["replay", &journal, "--policy", &stricter, "--headless"]);
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
    let json = tether(&["replay", &journal, "--policy", &stricter, "--headless", "--json"]);
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
fn json_output_escapes_bidi_and_zero_width_characters() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(
        dir.path(),
        "s.json",
        "{\"tools\": [{\"name\": \"t\", \"body\": {\"echo\": true}}], \"batches\": [{\"calls\": [{\"id\": \"c\u{200b}1\", \"name\": \"t\", \"arguments\": \"{\\\"file\\\": \\\"evil\u{202e}txt.exe\\\"}\"}]}]}",
    );
    let allow = write(dir.path(), "allow.json", r#"{"default": "allow", "rules": []}"#);
    let output = tether(&["replay", &scenario, "--policy", &allow, "--headless", "--json"]);
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(!stdout.contains('\u{202e}') && !stdout.contains('\u{200b}'), "{stdout}");
    assert!(
        stdout.contains("evil\\u202etxt.exe") && stdout.contains("c\\u200b1"),
        "{stdout}"
    );
    let lines = json_lines(&output);
    assert_eq!(
        lines[0]["value"]["file"], "evil\u{202e}txt.exe",
        "still the same JSON value"
    );
}

#[test]
fn with_json_bad_input_is_a_json_error_object_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.json", "{\n  \"tools\": [,\n}");
    let output = tether(&["replay", &scenario, "--headless", "--json"]);
    assert_eq!(output.status.code(), Some(2));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let error = &lines[0]["error"];
    assert_eq!(error["errors"][0]["line"], 2, "{error}");
    assert!(
        error["errors"][0]["path"].as_str().unwrap().ends_with("s.json"),
        "{error}"
    );
    assert!(error["message"].as_str().unwrap().contains("invalid JSON"), "{error}");
}
#[test]
fn a_rotated_journal_replays_as_one_journal() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("session.jsonl");
    let scenario = demo("quickstart.json");
    let policy = demo("quickstart.policy.json");
    let first = tether(&[
        "replay",
        scenario.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
        "--headless",
        "--answer",
        "approve",
        "--journal",
        journal.to_str().unwrap(),
    ]);
    assert!(first.status.success());
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
fn a_scenario_replayed_without_policy_uses_the_policy_beside_it_and_says_so() {
    let scenario = demo("quickstart.json");
    let output = tether(&["replay", scenario.to_str().unwrap(), "--headless", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("using the policy beside the scenario")
            && stderr.contains("quickstart.policy.json")
            && stderr.contains("--policy FILE chooses another"),
        "{stderr}"
    );
    let lines = json_lines(&output);
    let delete = lines.iter().find(|l| l["name"] == "delete_all_notes").unwrap();
    assert_eq!(delete["code"], "DENIED", "{delete}");
    assert_eq!(delete["decided_by"], "rule:never-delete-everything", "{delete}");
}

#[test]
fn without_any_policy_no_call_runs_unasked() {
    // The quick start without its policy beside it: every call that reaches
    // the policy stage is asked, and with nobody to answer none runs.
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("quickstart.json");
    std::fs::copy(demo("quickstart.json"), &scenario).unwrap();
    let output = tether(&["replay", scenario.to_str().unwrap(), "--headless", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stderr.is_empty(), "no policy was found, so none is announced");
    let lines = json_lines(&output);
    let delete = lines.iter().find(|l| l["name"] == "delete_all_notes").unwrap();
    assert_eq!(delete["code"], "UNAVAILABLE", "asked, and nobody answered: {delete}");
    let weather = lines.iter().find(|l| l["call_id"] == "call_1").unwrap();
    assert_eq!(weather["code"], "UNAVAILABLE", "{weather}");
    // Rejecting every approval: delete_all_notes is denied by the human.
    let output = tether(&[
        "replay",
        scenario.to_str().unwrap(),
        "--headless",
        "--json",
        "--answer",
        "reject",
    ]);
    let lines = json_lines(&output);
    let delete = lines.iter().find(|l| l["name"] == "delete_all_notes").unwrap();
    assert_eq!(
        (&delete["code"], &delete["decided_by"]),
        (&json!("DENIED"), &json!("script"))
    );
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_journal_replay_shows_the_recorded_decider_next_to_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let policy = write(dir.path(), "p.json", ASK_POLICY);
    let journal = fixture("journal-v2.jsonl");
    let output = tether(&["replay", &journal, "--policy", &policy, "--headless"]);
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

    let json = tether(&["replay", &journal, "--policy", &policy, "--headless", "--json"]);
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
    let output = tether(&["replay", &journal, "--policy", &same, "--headless"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.code().is_some_and(|c| c < 2), "{stdout}");
    let row = stdout.lines().find(|l| l.contains("toolu_1")).unwrap();
    assert!(row.contains(" ok ") && row.contains("rule:allow-all"), "{row}");
    assert!(row.contains("  -  "), "no recorded decider, shown as -: {row}");
    let json = tether(&["replay", &journal, "--policy", &same, "--headless", "--json"]);
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
    let table = tether(&[
        "replay",
        &journal,
        "--policy",
        &policy,
        "--headless",
        "--decided-by",
        "human",
    ]);
    let stdout = String::from_utf8_lossy(&table.stdout);
    assert!(stdout.contains("2 calls (shown of 3 replayed)"), "{stdout}");
    assert!(!stdout.contains("toolu_2"), "{stdout}");
}

#[test]
fn a_value_cut_in_the_table_ends_in_an_ellipsis() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(200);
    let scenario = write(
        dir.path(),
        "s.json",
        &format!(
            r#"{{"tools": [{{"name": "t", "body": {{"return": "{long}"}}}}, {{"name": "u", "body": {{"return": "short"}}}}], "batches": [{{"calls": [{{"id": "c1", "name": "t"}}, {{"id": "c2", "name": "u"}}]}}]}}"#
        ),
    );
    // The policy beside the scenario lets both calls run.
    write(dir.path(), "s.policy.json", r#"{"default": "allow", "rules": []}"#);
    let output = tether(&["replay", &scenario, "--headless"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let c1 = stdout.lines().find(|l| l.contains(" c1 ")).unwrap();
    assert!(c1.ends_with("x…"), "{c1}");
    assert_eq!(c1.split_whitespace().last().unwrap().chars().count(), 60, "{c1}");
    let c2 = stdout.lines().find(|l| l.contains(" c2 ")).unwrap();
    assert!(c2.ends_with("\"short\""), "an uncut value has no mark: {c2}");
}

#[test]
fn json_piped_into_a_reader_that_stops_early_exits_quietly() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    // Far more than a pipe holds, so the writer is still writing when the reader goes.
    let calls: Vec<String> = (0..3_000)
        .map(|i| format!(r#"{{"id": "c{i}", "name": "t"}}"#))
        .collect();
    let scenario = write(
        dir.path(),
        "s.json",
        &format!(
            r#"{{"tools": [{{"name": "t", "body": {{"return": "{}"}}}}], "batches": [{{"max_parallelism": 8, "calls": [{}]}}]}}"#,
            "y".repeat(100),
            calls.join(",")
        ),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["replay", &scenario, "--headless", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader (as `head -1`) is gone here.
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(first.contains("\"call_id\":\"c0\""), "{first}");
    assert!(!stderr.contains("Broken pipe") && !stderr.contains("Error"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}
