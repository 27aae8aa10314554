//! Reviewers in policy files (docs/policy.md, "Reviewers"): what does not
//! load and what `tether check` says of it, the starters' reviewer, and a
//! journal replayed with its recorded reviews or with the reviewer live.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod reviewers_support;

use reviewers_support::*;
use serde_json::{Value, json};
use tether_console::files::policy::Policy;
use tether_console::files::source::Document;

#[test]
fn a_policy_that_routes_to_no_reviewer_or_to_one_of_several_by_default_does_not_load() {
    let errors = |file: Value| {
        let doc = Document::parse("p.json".into(), serde_json::to_string_pretty(&file).unwrap()).unwrap();
        Policy::from_document(&doc)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    let none = errors(json!({"default": "review", "rules": []}));
    assert_eq!(none.len(), 1, "{none:?}");
    assert!(
        none[0].starts_with("p.json:2:")
            && none[0].contains("\"default\": \"review\" sends every call no rule decides to the policy's only reviewer, and the policy has no \"reviewers\""),
        "{none:?}"
    );
    for (file, says) in [
        (
            json!({
                "default": "review",
                "reviewers": {"a": {"command": "true"}, "b": {"command": "true"}},
                "rules": []
            }),
            "the policy's reviewers are a, b",
        ),
        (
            json!({
                "reviewers": {"a": {"command": "true"}},
                "rules": [{"id": "x", "stage": "pre-execute", "action": {"type": "review", "reviewer": "b"}}]
            }),
            "unknown reviewer \"b\": the policy's reviewers are a",
        ),
        (
            json!({
                "reviewers": {"a": {"command": "true", "model": {"api": "openai", "model": "m", "api_key_env": "K"}}},
                "rules": []
            }),
            "expected exactly one of \"command\"",
        ),
        (
            json!({
                "reviewers": {"a": {"model": {"api": "anthropic", "model": "m", "api_key_env": "sk-ant-123-456"}}},
                "rules": []
            }),
            "never the key itself",
        ),
        (
            json!({
                "reviewers": {"a": {"command": "true"}},
                "rules": [{"id": "x", "stage": "guard", "action": {"type": "review", "reviewer": "a"}}]
            }),
            "action \"review\" does not belong to stage \"guard\"",
        ),
    ] {
        let said = errors(file);
        assert!(said[0].contains(says), "{said:?}");
    }
}

/// `tether` with these arguments in `dir`; (exit code, stdout, stderr).
fn tether(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_journal_replay_shows_the_recorded_review_and_calls_the_reviewer_again_only_with_review_live() {
    let dir = tempfile::tempdir().unwrap();
    // The reviewer counts its runs: one line each.
    let reviewer = r#"echo run >> runs.txt; if grep -q rm; then echo '{"decision": "deny", "reason": "removes files"}'; else echo '{"decision": "allow", "reason": "reads"}'; fi"#;
    let policy = json!({"default": "review", "reviewers": {"gate": {"command": reviewer}},
                        "rules": [{"id": "writes", "stage": "pre-execute", "match": {"tool": "fs.write"}, "action": {"type": "allow"}}]});
    let mut scenario: Value = serde_json::from_str(SCENARIO).unwrap();
    scenario["batches"] = json!([{"scope": "agent0", "calls": [
        call("c1", "shell", json!({"cmd": "ls"})),
        call("c2", "shell", json!({"cmd": "rm -rf src"})),
        call("c3", "fs.write", json!({}))
    ]}]);
    std::fs::write(dir.path().join("p.json"), policy.to_string()).unwrap();
    std::fs::write(dir.path().join("s.json"), scenario.to_string()).unwrap();
    let runs = || {
        std::fs::read_to_string(dir.path().join("runs.txt"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let (code, out, err) = tether(
        dir.path(),
        &[
            "replay",
            "s.json",
            "--policy",
            "p.json",
            "--headless",
            "--review",
            "live",
            "--journal",
            "j.jsonl",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(runs(), 2);

    // By default the recorded verdicts answer again, and nothing runs.
    let (code, out, err) = tether(
        dir.path(),
        &[
            "replay",
            "j.jsonl",
            "--policy",
            "p.json",
            "--headless",
            "--decided-by",
            "reviewer",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(runs(), 2, "the reviewer was not called");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("1 ")).collect();
    assert_eq!(rows.len(), 2, "only the reviewer's calls: {out}");
    assert!(out.contains("RECORDED BY"), "{out}");
    for (call, code) in [("c1", "ok"), ("c2", "DENIED")] {
        let row = rows.iter().find(|r| r.split_whitespace().nth(1) == Some(call)).unwrap();
        let words: Vec<&str> = row.split_whitespace().collect();
        // RECORDED, RECORDED BY, NOW, NOW BY
        assert_eq!(&words[4..8], [code, "reviewer:gate", code, "reviewer:gate"], "{row}");
    }
    let (_, json_out, _) = tether(
        dir.path(),
        &[
            "replay",
            "j.jsonl",
            "--policy",
            "p.json",
            "--headless",
            "--json",
            "--decided-by",
            "reviewer:gate",
        ],
    );
    let denied: Value = json_out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["call_id"] == "c2")
        .unwrap();
    assert_eq!(
        denied["decision"]["review_reason"], "recorded: removes files",
        "{denied}"
    );
    assert_eq!(
        denied["recorded"]["decision"]["review_reason"], "removes files",
        "{denied}"
    );

    // --review live calls it again.
    let (code, out, err) = tether(
        dir.path(),
        &[
            "replay",
            "j.jsonl",
            "--policy",
            "p.json",
            "--headless",
            "--review",
            "live",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(runs(), 4);
}

#[test]
fn the_starters_carry_a_commented_reviewer_and_with_reviewer_routes_the_rest_to_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let (code, plain, err) = tether(dir.path(), &["policy", "init", "claude-code"]);
    assert_eq!(code, 0, "{err}");
    let comment = serde_json::from_str::<Value>(&plain).unwrap()["$comment"].clone();
    assert!(
        comment[2].as_str().unwrap().starts_with("\"reviewers\": {\"gate\""),
        "{comment}"
    );
    let loaded = Policy::from_document(&Document::parse("p.json".into(), plain).unwrap()).unwrap();
    assert!(loaded.reviewers.is_empty());
    assert_eq!(loaded.unmatched.as_str(), "ask");

    for (agent, api, env) in [
        ("claude-code", "anthropic", "ANTHROPIC_API_KEY"),
        ("codex", "openai", "OPENAI_API_KEY"),
    ] {
        let (code, text, err) = tether(dir.path(), &["policy", "init", agent, "--with-reviewer"]);
        assert_eq!(code, 0, "{err}");
        let loaded = Policy::from_document(&Document::parse("p.json".into(), text).unwrap()).unwrap();
        assert_eq!(loaded.unmatched.as_str(), "review");
        let reviewer = &loaded.reviewers[0];
        match &reviewer.kind {
            tether_console::files::policy::ReviewerKind::Model(model) => {
                assert_eq!((model.api.as_str(), model.api_key_env.as_str()), (api, env));
            }
            other => panic!("{other:?}"),
        }
        // The starter's own rules still come first.
        assert!(loaded.rules.len() > 5);
    }
}

#[test]
fn tether_check_reports_every_reviewer_error_at_its_place_and_names_the_reviewers_of_a_good_policy() {
    let dir = tempfile::tempdir().unwrap();
    let bad = "{\n  \"default\": \"review\",\n  \"reviewers\": {\n    \"gate\": {\"command\": \"true\", \"timeout_ms\": \"soon\"},\n    \"model\": {\"model\": {\"api\": \"gemini\", \"model\": \"m\", \"api_key_env\": \"K\"}}\n  },\n  \"rules\": [\n    {\"id\": \"x\", \"stage\": \"pre-execute\", \"action\": {\"type\": \"review\", \"reviewer\": \"nobody\"}}\n  ]\n}\n";
    std::fs::write(dir.path().join("bad.json"), bad).unwrap();
    let good = json!({"default": "review", "reviewers": {"gate": {"command": "true"}}, "rules": []});
    std::fs::write(dir.path().join("good.json"), good.to_string()).unwrap();
    let (code, out, _) = tether(dir.path(), &["check", "bad.json", "good.json"]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("bad.json:2:3: \"default\": \"review\" sends every call"),
        "{out}"
    );
    assert_eq!(lines[1], "bad.json:4:33: \"soon\" is not of type \"integer\"");
    assert_eq!(
        lines[2],
        "bad.json:5:25: \"gemini\" is unknown; expected \"anthropic\" or \"openai\""
    );
    assert_eq!(
        lines[3],
        "bad.json:8:70: unknown reviewer \"nobody\": the policy's reviewers are gate, model"
    );
    assert_eq!(lines[4], "good.json: ok (policy: 0 rules, 1 reviewer: gate)");
}
