//! `tether check` on policies and batch files: every shape, rule and
//! cross-file error in one run, a policy checked against its scenario.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check_support;

use check_support::*;

#[test]
fn a_policy_checked_with_its_scenario_names_only_scopes_and_tools_the_scenario_has() {
    let scenario = r#"{
  "scopes": [{"id": "a"}],
  "tools": [{"name": "read_file", "body": {"return": 1}}],
  "batches": [{"calls": [{"id": "c", "name": "read_file"}]}]
}"#;
    let policy = r#"{"rules": [
  {"id": "reads", "stage": "pre-execute", "match": {"tool": "read_*", "scope": "a"}, "action": {"type": "allow"}},
  {"id": "typo", "stage": "pre-execute", "match": {"tool": "raed_file"}, "action": {"type": "deny", "reason": "no"}},
  {"id": "gone", "stage": "guard", "match": {"scope": "b"}, "action": {"type": "veto", "reason": "no"}}
]}"#;
    let (code, out) = check_together(&[("s.json", scenario), ("p.json", policy)]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "s.json: ok (scenario: 1 scope, 1 tool, 1 batch, 1 call)\n\
         p.json:3:52: tool \"raed_file\" matches no tool: the scenario defines read_file\n\
         p.json:4:46: unknown scope \"b\": the scenario defines a\n"
    );
    // Alone, the policy cannot be checked against anything and passes.
    let (code, out) = check("p.json", policy);
    assert_eq!((code, out.as_str()), (0, "p.json: ok (policy: 3 rules)\n"));
}

#[test]
fn a_policy_with_shape_and_rule_errors_reports_both_in_one_run() {
    // Rule 0 has a bad shape (an unknown stage); rule 1 a regex that does not
    // compile: both are reported, in file order.
    let policy = "{\"rules\": [\n  {\"id\": \"r0\", \"stage\": \"sometime\", \"action\": {\"type\": \"allow\"}},\n  {\"id\": \"r1\", \"stage\": \"pre-execute\", \"match\": {\"args\": [{\"pointer\": \"/p\", \"regex\": \"(\"}]}, \"action\": {\"type\": \"allow\"}}\n]}";
    let (code, out) = check("p.json", policy);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("p.json:2:"), "{out}");
    assert!(
        lines[1].starts_with("p.json:3:") && lines[1].contains("invalid regex"),
        "{out}"
    );
}

#[test]
fn a_duplicate_id_and_a_bad_regex_are_reported_with_the_shape_errors_of_their_own_rules() {
    // Rule 0 has an unknown stage (a shape error) and shares its id with
    // rule 1; rule 2's action is misspelt (a shape error) and its regex does
    // not compile. One run reports all four, in file order.
    let policy = "{\"rules\": [\n  {\"id\": \"a\", \"stage\": \"sometime\", \"action\": {\"type\": \"allow\"}},\n  {\"id\": \"a\", \"stage\": \"pre-execute\", \"action\": {\"type\": \"allow\"}},\n  {\"id\": \"b\", \"stage\": \"pre-execute\", \"match\": {\"args\": [{\"pointer\": \"/p\", \"regex\": \"(\"}]}, \"action\": {\"type\": \"alow\"}}\n]}";
    let (code, out) = check("p.json", policy);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(
        lines[0].starts_with("p.json:2:15: \"sometime\" is unknown; expected"),
        "{out}"
    );
    assert_eq!(
        lines[1], "p.json:3:4: duplicate rule id \"a\"; rule ids must be unique",
        "{out}"
    );
    assert_eq!(
        lines[2], "p.json:4:76: invalid regex \"(\": error: unclosed group",
        "{out}"
    );
    assert!(
        lines[3].starts_with("p.json:4:93: {\"type\":\"alow\"} is not valid"),
        "{out}"
    );
}

#[test]
fn shape_reference_and_cross_file_errors_are_all_reported_in_one_run() {
    // The scenario has a shape error (a batch field that does not exist), a
    // reference error (a batch in a scope it does not define) and a call of
    // a tool it never declares; the policy names a tool the scenario lacks.
    // One run reports all four, each file's errors in position order.
    let scenario = r#"{
  "scopes": [{"id": "a"}],
  "tools": [{"name": "read_file", "body": {"return": 1}}],
  "batches": [{"scope": "nowhere", "colour": "red",
    "calls": [{"id": "c", "name": "read_file"}, {"id": "d", "name": "write_file"}]}]
}"#;
    let policy = r#"{"rules": [
  {"id": "w", "stage": "pre-execute", "match": {"tool": "write_file"}, "action": {"type": "ask"}}
]}"#;
    let (code, out) = check_together(&[("s.json", scenario), ("p.json", policy)]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(
        lines[0].starts_with("s.json:4:16: unknown scope \"nowhere\"; expected one of: \"a\""),
        "{out}"
    );
    assert!(
        lines[1].starts_with("s.json:4:36: unknown field \"colour\"; expected one of:"),
        "{out}"
    );
    assert!(
        lines[2].starts_with(
            "s.json:5:61: tool \"write_file\" is not declared under \"tools\"; expected one of: read_file"
        ),
        "{out}"
    );
    assert_eq!(
        lines[3],
        "p.json:2:49: tool \"write_file\" matches no tool: the scenario defines read_file"
    );
}

#[test]
fn a_scenario_whose_tool_list_is_unreadable_skips_only_the_tool_cross_checks() {
    // Tools is not a list (a shape error): which tools exist is unknown, so
    // neither the calls nor the policy's tool globs are checked against it;
    // the scope check still runs.
    let scenario = r#"{"scopes": [{"id": "a"}], "tools": {"name": "t"},
  "batches": [{"calls": [{"id": "c", "name": "anything"}]}]}"#;
    let policy = r#"{"rules": [
  {"id": "w", "stage": "guard", "match": {"tool": "zz", "scope": "b"}, "action": {"type": "veto", "reason": "no"}}
]}"#;
    let (code, out) = check_together(&[("s.json", scenario), ("p.json", policy)]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("s.json:1:27: ") && lines[0].contains("not of type \"array\""),
        "{out}"
    );
    assert!(lines[1].starts_with("p.json:2:"), "{out}");
    assert!(lines[1].contains("unknown scope \"b\""), "{out}");
}

#[test]
fn a_shell_tool_the_scenario_does_not_have_is_reported_with_the_rest() {
    let scenario = r#"{"tools": [{"name": "run", "body": {"echo": true}}], "batches": []}"#;
    let policy = r#"{"shell_tools": [{"tool": "run"}, {"tool": "exec", "command": "line"}],
  "rules": []}"#;
    let (code, out) = check_together(&[("s.json", scenario), ("p.json", policy)]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "s.json: ok (scenario: 0 scopes, 1 tool, 0 batches, 0 calls)");
    assert!(
        lines[1].starts_with("p.json:1:36: tool \"exec\" matches no tool: the scenario defines run"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("p.json:1:52: invalid JSON pointer \"line\""),
        "{out}"
    );
    // Alone, the marked tools are checked for their own shape only.
    let (code, out) = check(
        "p.json",
        r#"{"shell_tools": [{"tool": "run", "command": "/job/line"}], "rules": []}"#,
    );
    assert_eq!((code, out.as_str()), (0, "p.json: ok (policy: 0 rules)\n"));
}

#[test]
fn a_batch_file_gets_every_shape_error_and_every_unregistered_tool_at_once() {
    let batch = r#"{"session": {"session_id": "s", "lable": "x"},
  "tools": [{"name": "lookup", "body": {"echo": true}, "concurency": "always"}],
  "calls": [{"id": "c1", "name": "lookup", "arguments": 5},
            {"id": "c2", "name": "remember", "arguments": "{}"}]}"#;
    let (code, out) = check("b.json", batch);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].starts_with("b.json:1:33: unknown field \"lable\""), "{out}");
    assert!(
        lines[1].starts_with("b.json:2:56: unknown field \"concurency\""),
        "{out}"
    );
    assert!(
        lines[2].starts_with("b.json:3:44: 5 is not of types \"string\", \"object\"; expected the raw argument text"),
        "{out}"
    );
    assert!(
        lines[3]
            .starts_with("b.json:4:26: tool \"remember\" is not registered under \"tools\"; expected one of: lookup"),
        "{out}"
    );
}
