//! `tether replay --headless`: demos, expectations, exit codes, answers,
//! bad input and JSON output. Journals replayed against a new policy are in
//! `replay_recorded.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod replay_support;

use std::process::Command;

use replay_support::*;
use serde_json::{Value, json};

#[test]
fn every_demo_replays_with_all_its_expectations_met() {
    for name in ["quickstart", "filesystem", "scopes", "faults"] {
        let scenario = demo(&format!("{name}.json"));
        let policy = demo(&format!("{name}.policy.json"));
        let output = replay(&scenario, &policy, &[]);
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
    let output = replay(&scenario, &policy, &["--json"]);
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

#[test]
fn a_failed_expectation_exits_1_and_says_what_differed() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.json", ASKING);
    let policy = write(dir.path(), "p.json", ASK_POLICY);
    let output = replay(&scenario, &policy, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAILED batch 1 call c1 (t): expected success, got UNAVAILABLE (approval unavailable: nobody is there to answer)"),
        "{stdout}"
    );
    let json = replay(&scenario, &policy, &["--json"]);
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
    let output = replay(&scenario, &policy, &[]);
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
        let output = replay(&scenario, &policy, &["--json", "--answer", answer]);
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
    let output = replay(&scenario, &policy, &[]);
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("p.json:2:13: unknown scope \"ghost\": the scenario defines no scopes"),
        "{stdout}"
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
    let output = replay(&scenario, &allow, &["--json"]);
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
fn a_scenario_replayed_without_policy_uses_the_policy_beside_it_and_says_so() {
    let scenario = demo("quickstart.json");
    let output = tether(&["replay", &scenario, "--headless", "--json"]);
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
