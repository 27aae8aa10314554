//! `tether check`: a table of broken files, each with the exact position and
//! message a user gets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check_support;

use std::process::Command;

use check_support::*;

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
