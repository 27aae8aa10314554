//! `tether check`: a table of broken files, each with the exact position and
//! message a user gets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn check(name: &str, text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("check")
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let shown = path.display().to_string();
    (output.status.code().unwrap(), stdout.replace(&shown, name))
}

const SCENARIO_HEAD: &str = r#"{
  "scopes": [{"id": "a"}],
  "tools": [{"name": "t", "body": {"return": 1}}],
  "batches": [{"calls": [{"id": "c", "name": "t"}]}]
}"#;

#[test]
fn valid_files_pass_and_say_what_they_are() {
    let (code, out) = check("s.json", SCENARIO_HEAD);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, "s.json: ok (scenario: 1 scope, 1 tool, 1 batch, 1 call)\n");
    let (code, out) = check(
        "p.json",
        r#"{"rules": [{"id": "r", "stage": "guard", "action": {"type": "veto", "reason": "no"}}]}"#,
    );
    assert_eq!((code, out.as_str()), (0, "p.json: ok (policy: 1 rule)\n"));
}

#[test]
fn the_bundled_demos_are_valid() {
    let demos = concat!(env!("CARGO_MANIFEST_DIR"), "/../demos");
    let mut files: Vec<_> = std::fs::read_dir(demos)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8);
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("check")
        .args(&files)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.contains(": ok (")).count(), files.len());
}

/// (file name, content, expected first error line: "file:line:col: message start")
const BROKEN: &[(&str, &str, &str)] = &[
    (
        "args-object.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"pre-execute\", \"action\": {\"type\": \"allow\"},\n  \"match\": {\"args\": {\"pointer\": \"/p\", \"equals\": 1}}}]}",
        "args-object.json:2:13: {\"pointer\":\"/p\",\"equals\":1} is not of type \"array\"; expected a list of conditions, each {\"pointer\": \"/path\"} with exactly one of \"exists\": bool, \"equals\": value, \"regex\": \"pattern\", \"within\": dirs, \"outside\": dirs, \"secret\": bool, e.g. [{\"pointer\": \"/path\", \"regex\": \"^/etc/\"}]",
    ),
    // Syntax.
    (
        "trailing-comma.json",
        "{\n  \"rules\": [],\n}",
        "trailing-comma.json:3:1: invalid JSON: trailing comma",
    ),
    (
        "unclosed.json",
        "{\"rules\": [",
        "unclosed.json:1:11: invalid JSON: EOF while parsing a list",
    ),
    (
        "bare-word.json",
        "{\"tools\": nope}",
        "bare-word.json:1:11: invalid JSON: unexpected word nope: expected a value, text in double quotes (\"like this\"), a number, true, false, null, an object {..} or a list [..]; text needs double quotes: \"nope\"",
    ),
    (
        "empty.json",
        "",
        "empty.json:1:1: invalid JSON: EOF while parsing a value",
    ),
    (
        "single-quotes.json",
        "{'rules': []}",
        "single-quotes.json:1:2: invalid JSON: expected a field name in double quotes",
    ),
    // Not a known kind of file.
    (
        "array.json",
        "[1, 2]",
        "array.json:1:1: expected a scenario (an object with \"tools\" and \"batches\"), a policy (an object with \"rules\"), a batch for tether send (an object with \"session\") or an MCP server list (an object with \"mcpServers\")",
    ),
    // Scenario structure.
    (
        "missing-batches.json",
        "{\"tools\": []}",
        "missing-batches.json:1:1: \"batches\" is a required property",
    ),
    (
        "unknown-field.json",
        "{\"tools\": [], \"batches\": [],\n \"colour\": 1}",
        "unknown-field.json:2:2: unknown field \"colour\"; expected one of:",
    ),
    (
        "tool-no-body.json",
        "{\"tools\": [\n  {\"name\": \"t\"}\n], \"batches\": []}",
        "tool-no-body.json:2:3: \"body\" is a required property",
    ),
    (
        "bad-body.json",
        "{\"tools\": [{\"name\": \"t\",\n \"body\": {\"retrun\": 1}}], \"batches\": []}",
        "bad-body.json:2:2: {\"retrun\":1} is not valid under any of the schemas listed in the 'oneOf' keyword; expected a body: {\"return\": value}",
    ),
    (
        "bad-concurrency.json",
        "{\"tools\": [{\"name\": \"t\", \"body\": {\"echo\": true},\n \"concurrency\": \"sometimes\"}], \"batches\": []}",
        "bad-concurrency.json:2:2: \"sometimes\" is not valid under any of the schemas listed in the 'oneOf' keyword; expected \"always\", \"never\", or {\"pointer\"",
    ),
    (
        "bad-code.json",
        "{\"tools\": [{\"name\": \"t\", \"body\": {\"echo\": true}}], \"batches\": [{\"calls\": [{\"id\": \"c\", \"name\": \"t\",\n \"expect\": {\"code\": \"NOPE\"}}]}]}",
        "bad-code.json:2:13: \"NOPE\" is unknown; expected null for success, or one of UNKNOWN_TOOL",
    ),
    (
        "zero-parallelism.json",
        "{\"tools\": [], \"batches\": [{\n \"max_parallelism\": 0, \"calls\": []}]}",
        "zero-parallelism.json:2:2: 0 is less than the minimum of 1",
    ),
    (
        "arguments-number.json",
        "{\"tools\": [{\"name\": \"t\", \"body\": {\"echo\": true}}], \"batches\": [{\"calls\": [{\"id\": \"c\", \"name\": \"t\",\n \"arguments\": 5}]}]}",
        "arguments-number.json:2:2: 5 is not of types \"string\", \"object\"; expected the raw argument text as a string, or a JSON object",
    ),
    // Scenario references and values.
    (
        "unknown-parent.json",
        "{\"scopes\": [{\"id\": \"a\",\n \"parent\": \"zz\"}], \"tools\": [], \"batches\": []}",
        "unknown-parent.json:2:2: unknown parent scope \"zz\"; expected the id of another scope in this file",
    ),
    (
        "duplicate-scope.json",
        "{\"scopes\": [{\"id\": \"a\"},\n {\"id\": \"a\"}], \"tools\": [], \"batches\": []}",
        "duplicate-scope.json:2:3: duplicate scope id \"a\"; scope ids must be unique",
    ),
    (
        "cycle.json",
        "{\"scopes\": [{\"id\": \"a\", \"parent\": \"b\"},\n {\"id\": \"b\", \"parent\": \"a\"}], \"tools\": [], \"batches\": []}",
        "cycle.json:1:25: scope \"a\" is its own ancestor; parents must form a tree",
    ),
    (
        "owner-conflict.json",
        "{\"scopes\": [{\"id\": \"a\", \"owner\": \"x\"},\n {\"id\": \"b\", \"parent\": \"a\", \"owner\": \"y\"}], \"tools\": [], \"batches\": []}",
        "owner-conflict.json:2:29: owner \"y\" conflicts with \"x\" inherited from an ancestor",
    ),
    (
        "tool-scope.json",
        "{\"tools\": [{\"name\": \"t\", \"body\": {\"echo\": true},\n \"scope\": \"nowhere\"}], \"batches\": []}",
        "tool-scope.json:2:2: unknown scope \"nowhere\"; no scopes are defined",
    ),
    (
        "batch-scope.json",
        "{\"scopes\": [{\"id\": \"a\"}], \"tools\": [], \"batches\": [{\n \"scope\": \"b\", \"calls\": []}]}",
        "batch-scope.json:2:2: unknown scope \"b\"; expected one of: \"a\"",
    ),
    (
        "tool-name.json",
        "{\"tools\": [{\n \"name\": \"read file\", \"body\": {\"echo\": true}}], \"batches\": []}",
        "tool-name.json:2:2: invalid tool name \"read file\": expected 1 to 64 characters",
    ),
    (
        "bad-schema.json",
        "{\"tools\": [{\"name\": \"t\", \"body\": {\"echo\": true},\n \"parameters\": {\"type\": \"strng\"}}], \"batches\": []}",
        "bad-schema.json:2:2: the parameter schema does not compile: \"strng\" is not valid",
    ),
    (
        "duplicate-call.json",
        "{\"tools\": [{\"name\": \"t\", \"body\": {\"echo\": true}}], \"batches\": [{\"calls\": [{\"id\": \"c\", \"name\": \"t\"},\n {\"id\": \"c\", \"name\": \"t\"}]}]}",
        "duplicate-call.json:2:3: duplicate call id \"c\" in this batch",
    ),
    (
        "bad-pointer.json",
        "{\"tools\": [{\"name\": \"t\", \"body\": {\"echo\": true},\n \"concurrency\": {\"pointer\": \"mode\", \"equals\": 1}}], \"batches\": []}",
        "bad-pointer.json:2:18: invalid JSON pointer \"mode\": expected \"\" or a path starting with '/'",
    ),
    // Policies.
    (
        "bad-stage.json",
        "{\"rules\": [{\"id\": \"r\",\n \"stage\": \"during\", \"action\": {\"type\": \"allow\"}}]}",
        "bad-stage.json:2:2: \"during\" is unknown; expected \"pre-execute\", \"guard\", \"execute\" or \"post-execute\"",
    ),
    (
        "wrong-action.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"guard\",\n \"action\": {\"type\": \"allow\"}}]}",
        "wrong-action.json:2:13: action \"allow\" does not belong to stage \"guard\"; expected one of: veto",
    ),
    (
        "deny-no-reason.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"pre-execute\",\n \"action\": {\"type\": \"deny\"}}]}",
        "deny-no-reason.json:2:2: {\"type\":\"deny\"} is not valid under any of the schemas listed in the 'oneOf' keyword; expected an action",
    ),
    (
        "duplicate-rule.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"guard\", \"action\": {\"type\": \"veto\", \"reason\": \"x\"}},\n {\"id\": \"r\", \"stage\": \"guard\", \"action\": {\"type\": \"veto\", \"reason\": \"x\"}}]}",
        "duplicate-rule.json:2:3: duplicate rule id \"r\"",
    ),
    (
        "bad-regex.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"guard\", \"action\": {\"type\": \"veto\", \"reason\": \"x\"},\n \"match\": {\"args\": [{\"pointer\": \"/p\", \"regex\": \"(unclosed\"}]}}]}",
        "bad-regex.json:2:39: invalid regex \"(unclosed\": error: unclosed group",
    ),
    (
        "bad-glob.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"guard\", \"action\": {\"type\": \"veto\", \"reason\": \"x\"},\n \"match\": {\"tool\": \"[a-\"}}]}",
        "bad-glob.json:2:12: invalid tool-name glob",
    ),
    (
        "two-predicates.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"guard\", \"action\": {\"type\": \"veto\", \"reason\": \"x\"},\n \"match\": {\"args\": [{\"pointer\": \"/p\", \"exists\": true, \"regex\": \"x\"}]}}]}",
        "two-predicates.json:2:21: ",
    ),
    (
        "result-on-pre.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"pre-execute\", \"action\": {\"type\": \"allow\"},\n \"result\": {\"regex\": \"x\"}}]}",
        "result-on-pre.json:2:2: \"result\" only applies to post-execute rules",
    ),
    (
        "shell-pointer.json",
        "{\"shell_tools\": [{\"tool\": \"run\",\n \"command\": \"cmd\"}], \"rules\": []}",
        "shell-pointer.json:2:2: invalid JSON pointer \"cmd\": expected the argument that holds the command, a path starting with '/'",
    ),
    (
        "shell-twice.json",
        "{\"shell_tools\": [{\"tool\": \"run\"},\n {\"tool\": \"run\", \"command\": \"/c\"}], \"rules\": []}",
        "shell-twice.json:2:3: tool \"run\" is marked twice; mark each tool once",
    ),
    (
        "shell-field.json",
        "{\"shell_tools\": [{\"tool\": \"run\",\n \"argv\": \"/c\"}], \"rules\": []}",
        "shell-field.json:2:2: unknown field \"argv\"; expected one of: \"tool\", \"command\"",
    ),
    (
        "unknown-rule-field.json",
        "{\"rules\": [{\"id\": \"r\", \"stage\": \"guard\", \"action\": {\"type\": \"veto\", \"reason\": \"x\"},\n \"when\": {}}]}",
        "unknown-rule-field.json:2:2: unknown field \"when\"; expected one of:",
    ),
];

#[test]
fn every_broken_file_gets_its_file_line_column_and_what_was_expected() {
    assert!(BROKEN.len() >= 20);
    let mut mismatches = Vec::new();
    for (name, text, expected) in BROKEN {
        let (code, out) = check(name, text);
        let first = out.lines().next().unwrap_or_default();
        if code != 1 || !first.starts_with(expected) {
            mismatches.push(format!(
                "{name}: exit {code}\n  expected: {expected}\n  got:      {first}"
            ));
        }
    }
    assert!(mismatches.is_empty(), "\n{}", mismatches.join("\n"));
}

#[test]
fn every_error_in_a_file_is_reported_not_just_the_first() {
    let text = "{\"scopes\": [{\"id\": \"a\"}, {\"id\": \"a\"}],\n \"tools\": [{\"name\": \"bad name\", \"scope\": \"q\", \"body\": {\"echo\": true}}],\n \"batches\": [{\"scope\": \"z\", \"calls\": []}]}";
    let (code, out) = check("many.json", text);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 4, "{out}");
}

#[test]
fn a_broken_and_a_valid_file_together_exit_1_and_report_both() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    let bad = dir.path().join("bad.json");
    std::fs::write(&good, SCENARIO_HEAD).unwrap();
    std::fs::write(&bad, "{").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("check")
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout.contains("good.json: ok"));
    assert!(
        stdout.contains("bad.json:1:1: invalid JSON: EOF while parsing an object"),
        "{stdout}"
    );
}

#[test]
fn approval_timeout_belongs_to_the_commands_that_ask_and_is_never_zero() {
    use clap::Parser as _;
    use tether_console::cli::Cli;
    for ok in [
        vec!["tether", "--approval-timeout", "5"],
        vec!["tether", "replay", "s.json", "--approval-timeout", "5"],
        vec!["tether", "serve", "--approval-timeout", "5"],
    ] {
        assert!(Cli::try_parse_from(&ok).is_ok(), "{ok:?}");
    }
    for bad in [
        vec!["tether", "check", "x.json", "--approval-timeout", "5"],
        vec!["tether", "send", "b.json", "--approval-timeout", "5"],
        vec!["tether", "replay", "s.json", "--approval-timeout", "0"],
        vec!["tether", "--approval-timeout", "0"],
    ] {
        assert!(Cli::try_parse_from(&bad).is_err(), "{bad:?} was accepted");
    }
}

#[test]
fn a_batch_file_without_calls_is_refused() {
    let (code, out) = check("b.json", r#"{"session": {"session_id": "s"}, "calls": []}"#);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("b.json:1:") && out.contains("at least one call"), "{out}");
}

/// Runs `tether check` on several files written to one directory.
fn check_together(files: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<_> = files
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("check")
        .args(&paths)
        .output()
        .unwrap();
    let shown = format!("{}/", dir.path().display());
    let stdout = String::from_utf8(output.stdout).unwrap().replace(&shown, "");
    (output.status.code().unwrap(), stdout)
}

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
fn the_all_day_options_are_in_the_help_of_the_commands_that_keep_history() {
    use clap::CommandFactory as _;
    let mut cli = tether_console::cli::Cli::command();
    for name in ["serve", "replay"] {
        let help = cli.find_subcommand_mut(name).unwrap().render_long_help().to_string();
        for option in ["--history-batches", "--history-mb", "--journal-max-mb"] {
            assert!(help.contains(option), "{name} --help lacks {option}:\n{help}");
        }
        assert!(help.contains("all day"), "{name} --help:\n{help}");
    }
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

/// Runs `tether check` on one file with `vars` set and every other
/// environment variable the lists below use removed.
fn check_with_env(name: &str, text: &str, vars: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    command.arg("check").arg(&path);
    for var in ["TETHER_TEST_TOKEN", "TETHER_TEST_UNSET"] {
        command.env_remove(var);
    }
    command.envs(vars.iter().copied());
    let output = command.output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    (
        output.status.code().unwrap(),
        stdout.replace(&path.display().to_string(), name),
    )
}

const SERVERS: &str = r#"{"mcpServers": {
  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "cwd": "work"},
  "web": {"type": "http", "url": "https://example.com/mcp",
          "headers": {"Authorization": "Bearer ${TETHER_TEST_TOKEN}", "X-Team": "${TETHER_TEST_UNSET:-core}"}}
}}"#;

#[test]
fn a_good_mcp_server_list_passes_and_says_what_it_is() {
    let (code, out) = check_with_env("servers.json", SERVERS, &[("TETHER_TEST_TOKEN", "s3cret")]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "servers.json: ok (MCP server list: 2 servers, 1 on stdio, 1 over HTTP)\n"
        )
    );
    assert!(!out.contains("s3cret"), "header values stay secret: {out}");
}

#[test]
fn an_unset_variable_in_a_server_list_is_an_error_that_says_the_file_is_not_at_fault() {
    let (code, out) = check_with_env("servers.json", SERVERS, &[]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with("servers.json:4:23: the environment variable TETHER_TEST_TOKEN is not set"),
        "{out}"
    );
    assert!(
        lines[0].contains("tether mcp serve") && lines[0].contains("well-formed"),
        "{out}"
    );
}

#[test]
fn a_bad_mcp_server_list_gets_every_error_at_its_line_and_column_in_one_run() {
    // Shape errors (an unknown field, an args that is not a list) and the
    // checks after the shape (a name with "__", a bad URL, a reserved header,
    // an unset variable, command and url together) all in one run, in order.
    let servers = "{\"mcpServers\": {\n  \"a\": {\"url\": \"ftp://x/\"},\n  \"b__c\": {\"command\": \"x\"},\n  \"d\": {\"command\": \"x\", \"colour\": 1},\n  \"e\": {\"url\": \"http://x/\", \"headers\": {\"X-Key\": \"${TETHER_TEST_UNSET}\"}},\n  \"f\": {\"command\": \"x\", \"args\": \"-v\"},\n  \"g\": {\"url\": \"http://x/\", \"headers\": {\"Mcp-Session-Id\": \"1\"}},\n  \"h\": {\"url\": \"http://x/\", \"command\": \"y\"}\n}}";
    let (code, out) = check_with_env("servers.json", servers, &[]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let expected = [
        "servers.json:2:9: expected an http:// or https:// URL with a host",
        "servers.json:3:3: server name \"b__c\": use letters, digits, '-' and '_', and no \"__\"",
        "servers.json:4:25: unknown field \"colour\"; expected one of:",
        "servers.json:5:41: the environment variable TETHER_TEST_UNSET is not set",
        "servers.json:6:25: \"-v\" is not of type \"array\"",
        "servers.json:7:41: \"Mcp-Session-Id\" is set by the Streamable HTTP transport itself",
        "servers.json:8:9: a server has a \"command\" (stdio) or a \"url\" (Streamable HTTP), not both",
    ];
    assert_eq!(lines.len(), expected.len(), "{out}");
    for (line, expected) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(expected),
            "{line:?} does not start with {expected:?}\n{out}"
        );
    }
}

#[test]
fn a_server_list_checked_with_a_scenario_and_a_policy_is_reported_with_them() {
    let policy = r#"{"rules": [{"id": "r", "stage": "guard", "action": {"type": "veto", "reason": "no"}}]}"#;
    let servers = r#"{"mcpServers": {"fs": {"command": "npx"}}}"#;
    let (code, out) = check_together(&[("s.json", SCENARIO_HEAD), ("servers.json", servers), ("p.json", policy)]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "s.json: ok (scenario: 1 scope, 1 tool, 1 batch, 1 call)\n\
         servers.json: ok (MCP server list: 1 server, 1 on stdio, 0 over HTTP)\n\
         p.json: ok (policy: 1 rule)\n"
    );
    let broken = r#"{"mcpServers": {"fs": {}}}"#;
    let (code, out) = check_together(&[("servers.json", broken), ("p.json", policy)]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "servers.json:1:17: a server needs a \"command\" (stdio) or a \"url\" (Streamable HTTP)\n\
         p.json: ok (policy: 1 rule)\n"
    );
}

#[test]
fn a_misspelt_server_field_is_reported_once_not_also_as_a_missing_command() {
    let (code, out) = check_with_env(
        "servers.json",
        "{\"mcpServers\": {\n  \"typo\": {\"comand\": \"x\"}\n}}",
        &[],
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("servers.json:2:12: unknown field \"comand\""), "{out}");
}

/// One mistake is one error, and one mistake does not hide the next: two
/// tests in one condition are reported once, in words naming both, and a
/// bad regex beside a bad pointer is still reported.
#[test]
fn each_mistake_in_a_condition_is_reported_once() {
    let (code, out) = check(
        "p.json",
        r#"{"rules": [
 {"id": "a", "stage": "pre-execute", "match": {"args": [{"pointer": "/x", "exists": true, "equals": 1}]}, "action": {"type": "allow"}},
 {"id": "b", "stage": "pre-execute", "match": {"args": [{"pointer": "x", "regex": "("}]}, "action": {"type": "allow"}}
]}"#,
    );
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            r#"p.json:2:57: "exists" and "equals" given together; a condition takes exactly one of "exists", "equals", "regex", "within", "outside" or "secret""#,
            r#"p.json:3:58: invalid JSON pointer "x": expected "" or a path starting with '/'"#,
            r#"p.json:3:74: invalid regex "(": error: unclosed group"#,
        ],
        "{out}"
    );
}
