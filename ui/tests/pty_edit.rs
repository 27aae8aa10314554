//! End to end in a real pseudo-terminal: edit before approving (issue 34).
//! `e` on a prompt opens the arguments; the agent's tool runs the edited
//! ones, policy judges them again, and the journal keeps both versions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Child, Command};

use serde_json::{Value, json};

mod pty_support;
use pty_support::*;

/// Every `run` is asked, except a command holding `rm`, which is denied.
const POLICY: &str = r#"{"rules": [
  {"id": "no-rm", "stage": "pre-execute", "match": {"tool": "run", "args": [{"pointer": "/command", "regex": "\\brm\\b"}]}, "action": {"type": "deny", "reason": "rm is never run"}},
  {"id": "ask-run", "stage": "pre-execute", "match": {"tool": "run"}, "action": {"type": "ask", "reason": "commands are asked"}}
]}"#;

/// One `run` call whose body returns the arguments it was given, so the
/// agent's printed outcome shows which arguments ran.
fn batch(command: &str) -> Value {
    json!({
        "session": {"session_id": "agent-1", "owner": "you", "label": "agent1"},
        "tools": [{
            "name": "run",
            "description": "Runs a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"], "additionalProperties": false},
            "body": {"echo": true}
        }],
        "calls": [{"id": "c1", "name": "run", "arguments": json!({"command": command}).to_string()}],
    })
}

/// A console asking for `echo hello`, the editor open on it, and the agent.
fn editing() -> (Served, Child) {
    let (mut served, agent) = asking(&[]);
    let screen = served.screen();
    screen.keys("e");
    screen.wait_for("Edit, then approve");
    (served, agent)
}

/// `tether serve EXTRA` asking for `echo hello` (the whole prompt on
/// screen), and the agent waiting for it.
fn asking(extra: &[&str]) -> (Served, Child) {
    let dir = Served::dir_with(&[("policy.json", POLICY)]);
    let mut args = vec!["--policy", "{dir}/policy.json"];
    args.extend_from_slice(extra);
    let mut served = Served::console(dir, &args);
    let agent = served.send_json("batch.json", &batch("echo hello"));
    served.screen().wait_until("the whole prompt", |s| {
        s.contains("Approval 1 of 1") && s.contains("(or a wider rule)")
    });
    (served, agent)
}

/// Puts the cursor right after `hello` (line 2 is `  "command": "echo hello"`).
fn to_end_of_command(screen: &mut Console) {
    // Down to the command's line, to its end, back over the closing quote.
    screen.keys("\x1b[B");
    screen.keys("\x1b[F");
    screen.keys("\x1b[D");
}

/// Esc out of the editor, then `key` on the prompt it goes back to: what
/// the agent was told.
fn out_of_the_editor_then(screen: &mut Console, key: &str, agent: Child) -> Value {
    screen.keys("\x1b");
    screen.wait_gone("Edit, then approve");
    screen.wait_for("Approval 1 of 1");
    screen.keys(key);
    screen.wait_gone("Approval 1 of 1");
    outcome(agent)
}

#[test]
fn an_edited_approval_runs_the_edited_arguments_and_the_journal_keeps_both() {
    let (mut served, agent) = editing();
    let screen = served.screen();
    to_end_of_command(screen);
    screen.keys(" world");
    screen.wait_for("\"echo hello world\"");
    screen.wait_for("valid JSON that the tool's schema accepts");
    screen.keys("\x13");
    screen.wait_gone("Edit, then approve");
    screen.wait_for("approved with edits by you");
    let outcome = outcome(agent);
    assert_eq!(outcome["code"], Value::Null, "{outcome}");
    assert_eq!(
        outcome["value"],
        json!({"command": "echo hello world"}),
        "the tool ran the edited arguments: {outcome}"
    );
    let journal = served.quit();
    let call = journal
        .iter()
        .find(|e| e["event"] == "tool/call" && e["call_id"] == "c1")
        .unwrap();
    let model: Value = serde_json::from_str(call["arguments"].as_str().unwrap_or("null"))
        .unwrap_or_else(|_| call["arguments"].clone());
    assert_eq!(model, json!({"command": "echo hello"}), "the model's version: {call}");
    let result = result(&journal, "c1");
    assert_eq!(result["answer"], "approved with edits", "{result}");
    assert_eq!(
        result["edited_arguments"],
        json!({"command": "echo hello world"}),
        "{result}"
    );
    assert_eq!(result["answered_by"], "main", "{result}");
    assert_eq!(result["decided_by"], "human@main", "{result}");

    // Replayed, the journal is honest about the edit: the recorded decider
    // says so, and the edit that ran is shown; the replay judges the model's
    // call (the tool/call line), as it has no human to edit it again.
    let dir = tempfile::tempdir().unwrap();
    let (recorded, policy) = (dir.path().join("recorded.jsonl"), dir.path().join("policy.json"));
    let lines: Vec<String> = journal.iter().map(Value::to_string).collect();
    std::fs::write(&recorded, lines.join("\n") + "\n").unwrap();
    std::fs::write(&policy, POLICY).unwrap();
    let replay = |json: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
        command.arg("replay").arg(&recorded).arg("--policy").arg(&policy);
        command.args(["--headless", "--answer", "approve"]);
        if json {
            command.arg("--json");
        }
        let output = command.output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let table = replay(false);
    assert!(table.contains("human@main (edited)"), "{table}");
    assert!(
        table.contains(
            "EDITED batch 1 call c1 (run): recorded approved with edits by human@main, which ran {\"command\":\"echo hello world\"}; replayed as the model wrote it"
        ),
        "{table}"
    );
    let json = replay(true);
    let line: Value = json
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["call_id"] == "c1")
        .unwrap_or_else(|| panic!("{json}"));
    assert_eq!(
        line["recorded"]["decision"]["edited_arguments"],
        json!({"command": "echo hello world"}),
        "{line}"
    );
    assert_eq!(
        line["decision"]["answer"], "approved",
        "the replay's own answer is no edit: {line}"
    );
}

#[test]
fn invalid_json_is_refused_with_its_line_and_column() {
    let (mut served, agent) = editing();
    let screen = served.screen();
    to_end_of_command(screen);
    // Past the closing quote, then a stray character: line 2 is broken.
    screen.keys("\x1b[C");
    screen.keys("x");
    let shown = screen.wait_for("not JSON at line 2, column");
    assert!(shown.contains("expected"), "says what was expected:\n{shown}");
    screen.keys("\x13");
    let shown = screen.wait_for("Ctrl+S refused: not JSON at line 2");
    assert!(shown.contains("Edit, then approve"), "the editor stays open:\n{shown}");
    let outcome = out_of_the_editor_then(screen, "y", agent);
    assert_eq!(outcome["value"], json!({"command": "echo hello"}), "{outcome}");
    served.quit();
}

#[test]
fn a_schema_error_is_shown_with_its_json_path_and_never_approved() {
    let (mut served, agent) = editing();
    let screen = served.screen();
    // `"command": 5`: JSON, but not a string.
    screen.keys("\x1b[B\x1b[F");
    for _ in 0.."\"echo hello\"".len() {
        screen.keys("\x7f");
    }
    screen.keys("5");
    let shown = screen.wait_for("at /command");
    assert!(shown.contains("not of type"), "{shown}");
    screen.keys("\x13");
    screen.wait_for("Ctrl+S refused: arguments do not match the schema");
    let outcome = out_of_the_editor_then(screen, "\x1b", agent);
    assert_eq!(outcome["code"], "DENIED", "Esc on the prompt rejects: {outcome}");
    served.quit();
}

#[test]
fn esc_goes_back_to_the_prompt_with_the_arguments_unchanged() {
    let (mut served, agent) = editing();
    let screen = served.screen();
    to_end_of_command(screen);
    screen.keys(" && echo typed");
    screen.wait_for("echo hello && echo typed");
    screen.keys("\x1b");
    screen.wait_gone("Edit, then approve");
    let prompt = screen.wait_for("Approval 1 of 1");
    assert!(
        !prompt.contains("typed"),
        "the prompt shows the model's arguments:\n{prompt}"
    );
    screen.keys("y");
    screen.wait_gone("Approval 1 of 1");
    let outcome = outcome(agent);
    assert_eq!(outcome["value"], json!({"command": "echo hello"}), "{outcome}");
    served.quit();
}

#[test]
fn an_edit_that_a_deny_rule_now_matches_is_denied() {
    let (mut served, agent) = editing();
    let screen = served.screen();
    to_end_of_command(screen);
    screen.keys("; rm -rf build");
    screen.wait_for("rm -rf build\"");
    screen.wait_for("valid JSON that the tool's schema accepts");
    screen.keys("\x13");
    screen.wait_gone("Edit, then approve");
    let outcome = outcome(agent);
    assert_eq!(outcome["code"], "DENIED", "{outcome}");
    let message = outcome["value"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the edited arguments were denied") && message.contains("rm is never run"),
        "{outcome}"
    );
    let journal = served.quit();
    let result = result(&journal, "c1");
    assert_eq!(result["decided_by"], "rule:no-rm", "{result}");
    assert_eq!(result["answer"], "approved with edits", "{result}");
    assert_eq!(
        result["edited_arguments"],
        json!({"command": "echo hello; rm -rf build"}),
        "{result}"
    );
}

#[test]
fn an_attached_console_edits_too_and_the_journal_names_it() {
    let (served, agent) = asking(&["--attach"]);
    let header = served.sees().wait_until("an attach code", |s| s.contains("code "));
    let at = header.find("code ").unwrap() + 5;
    let code = &header[at..at + 6];
    let mut attached = Console::spawn_sized(
        None,
        &strings(&["attach", "--socket", served.socket.to_str().unwrap(), "--code", code]),
        false,
        (24, 80),
    );
    attached.wait_until("the whole prompt", |s| s.contains("Approval 1 of 1"));
    attached.keys("e");
    attached.wait_for("Edit, then approve");
    to_end_of_command(&mut attached);
    attached.keys(" from attach");
    attached.wait_for("echo hello from attach\"");
    attached.keys("\x13");
    attached.wait_gone("Edit, then approve");
    let outcome = outcome(agent);
    assert_eq!(
        outcome["value"],
        json!({"command": "echo hello from attach"}),
        "{outcome}"
    );
    let journal = served.quit();
    let result = result(&journal, "c1");
    assert_eq!(result["answer"], "approved with edits", "{result}");
    let by = result["answered_by"].as_str().unwrap_or_default();
    assert!(by.starts_with("attach "), "the attached console answered: {result}");
    drop(attached);
}
