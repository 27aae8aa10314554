//! "Approve always" in a real terminal (issue 48): the rule the human adds
//! stands where the policy file would put it — just before the rule that
//! asked, or after the file's rules when its default asked — so every rule
//! that decided before it still decides first, kept or not; a rule for a
//! whole shell tool (or one the file's rules ask or deny) is added only on
//! a second key, its warning on screen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pty_support;

use pty_support::{Console, bash_calls, replay_written, result, shell_scenario};
use serde_json::{Value, json};

/// Deploys are denied and curl is asked; anything else gets the default
/// (asked).
const DEPLOYS_DENIED: &str = r#"{
  "rules": [
    {"id": "ask-curl", "stage": "pre-execute", "match": {"command": ["curl *"]}, "action": {"type": "ask"}},
    {"id": "never-deploy", "stage": "pre-execute", "match": {"command": ["make deploy *"]}, "action": {"type": "deny", "reason": "no deploys"}}
  ],
  "default": "ask"
}
"#;

/// A replay of `batches` (each a list of `(call id, command)` for `Bash`)
/// under `policy`, each batch run on `r`.
fn console(policy: &str, batches: &[&[(&str, &str)]]) -> (Console, std::path::PathBuf, tempfile::TempDir) {
    let batches = batches.iter().map(|calls| bash_calls(calls)).collect();
    let (mut console, policy, dir) = replay_written(&shell_scenario(batches), policy, &[]);
    console.wait_for("press r to run the next");
    console.keys("r");
    (console, policy, dir)
}

/// Once batch 1 finished: [`LATER`] run (`r`), the `fetch` it asks
/// rejected, and the console quit; its journal.
fn later_with_fetch_rejected(mut console: Console) -> Vec<Value> {
    console.wait_for("batch 1 finished");
    console.keys("r");
    console.wait_for("Call      fetch");
    console.keys("\x1b");
    console.wait_for("3/3 done");
    console.quit()
}

const LATER: &[(&str, &str)] = &[
    ("deploy", "make deploy prod"),
    ("test", "make test"),
    ("fetch", "curl https://example.com"),
];

#[test]
fn a_kept_rule_goes_after_every_rule_that_decided_before_it() {
    let (mut console, policy, _dir) = console(DEPLOYS_DENIED, &[&[("build", "make")], LATER]);
    console.wait_for("Call      build");
    console.keys("a");
    let screen = console.wait_for("Approve always: which rule?");
    assert!(screen.contains("starts with `make`"), "{screen}");
    console.keys("j"); // from the exact command to "starts with make"
    console.keys("s"); // add it and keep it in the policy file
    console.wait_for("policy reloaded");
    // The deploy is denied by the file, the test passes by the kept rule,
    // and curl is still asked by the rule that asks it.
    let journal = later_with_fetch_rejected(console);
    let deploy = result(&journal, "deploy");
    assert_eq!(deploy["code"], "DENIED", "{deploy}");
    assert_eq!(deploy["decided_by"], "rule:never-deploy", "{deploy}");
    assert_eq!(
        result(&journal, "test")["code"],
        Value::Null,
        "the kept rule allows make test"
    );
    assert_eq!(result(&journal, "fetch")["decided_by"], "human@main", "curl is asked");
    let kept = std::fs::read_to_string(&policy).unwrap();
    let order: Vec<usize> = ["\"ask-curl\"", "\"never-deploy\"", "\"always-bash-1\""]
        .iter()
        .map(|id| kept.find(id).unwrap_or_else(|| panic!("{id} in {kept}")))
        .collect();
    assert!(
        order[0] < order[1] && order[1] < order[2],
        "the default asked: the rule goes after the file's own\n{kept}"
    );
}

#[test]
fn a_session_rule_for_the_whole_tool_never_passes_a_rule_that_asks_before_it() {
    let (mut console, policy, _dir) = console(DEPLOYS_DENIED, &[&[("build", "make")], LATER]);
    console.wait_for("Call      build");
    console.keys("a");
    console.wait_for("Approve always: which rule?");
    console.keys("\x1b[F"); // End: the whole tool
    let screen = console.wait_for("for any arguments (the whole tool)");
    assert!(
        !screen.contains("these rules of the policy"),
        "the default asked: every rule of the file still decides first\n{screen}"
    );
    console.keys("\r");
    let screen = console.wait_until("the rule added, or its second key asked for", |s| {
        s.contains("rule added") || s.contains("press Enter again to add it")
    });
    if !screen.contains("rule added") {
        assert!(screen.contains("a shell tool: any command at all"), "{screen}");
        console.keys("\r");
    }
    // For this session only: the deploy is still denied, and curl, which a
    // rule of the file asks before the default is reached, is still asked.
    let journal = later_with_fetch_rejected(console);
    assert_eq!(result(&journal, "deploy")["decided_by"], "rule:never-deploy");
    assert_eq!(
        result(&journal, "test")["decided_by"],
        "always-rule: any Bash call",
        "{journal:#?}"
    );
    assert_eq!(result(&journal, "fetch")["decided_by"], "human@main");
    assert_eq!(
        std::fs::read_to_string(&policy).unwrap(),
        DEPLOYS_DENIED,
        "Enter keeps nothing"
    );
}

#[test]
fn the_whole_tool_names_the_rules_it_would_pass_over_and_needs_a_second_key() {
    let policy = r#"{"rules": [
    {"id": "deleting-is-asked", "stage": "pre-execute", "match": {"command": ["rm *"]}, "action": {"type": "ask"}},
    {"id": "fetching-is-asked", "stage": "pre-execute", "match": {"tool": "Bash", "command": ["curl *"]}, "action": {"type": "ask"}},
    {"id": "reads-are-fine", "stage": "pre-execute", "match": {"command": ["ls *"]}, "action": {"type": "allow"}}
]}
"#;
    let (mut console, path, _dir) = console(policy, &[&[("clean", "rm -rf build")]]);
    console.wait_for("Call      clean");
    console.keys("a");
    console.wait_for("Approve always: which rule?");
    console.keys("\x1b[F"); // End: the whole tool
    let screen = console.wait_for("these rules of the policy would no");
    assert!(
        screen.contains("deleting-is-asked, fetching-is-asked"),
        "the rule that asked and every later one that asks or denies Bash:\n{screen}"
    );
    assert!(!screen.contains("reads-are-fine"), "{screen}");
    console.keys("s");
    console.wait_for("press s again to add it and keep it");
    console.keys("k"); // a narrower rule: the warning and the first key go
    let screen = console.wait_gone("press s again");
    assert!(!screen.contains("these rules of the policy"), "{screen}");
    console.keys("\x1b[F");
    console.keys("s");
    console.wait_for("press s again to add it and keep it");
    console.keys("s");
    console.wait_for("1/1 done");
    let journal = console.quit();
    assert_eq!(result(&journal, "clean")["decided_by"], "human@main");
    let kept = std::fs::read_to_string(&path).unwrap();
    let (rule, asker) = (
        kept.find("always-bash-1").unwrap(),
        kept.find("deleting-is-asked").unwrap(),
    );
    assert!(rule < asker, "just before the rule that asked:\n{kept}");
}

#[test]
fn a_policy_found_beside_the_scenario_is_not_rewritten_by_s() {
    // A copy of the bundled demo: a failure here must not touch the repository's.
    let dir = tempfile::tempdir().unwrap();
    for name in ["filesystem.json", "filesystem.policy.json"] {
        std::fs::copy(pty_support::demo(name), dir.path().join(name)).unwrap();
    }
    let policy = dir.path().join("filesystem.policy.json");
    let before = std::fs::read_to_string(&policy).unwrap();
    let scenario = dir.path().join("filesystem.json").display().to_string();
    let mut console = Console::spawn(&["replay".to_owned(), scenario, "--auto".to_owned()], true);
    console.wait_for("Call      w1");
    console.keys("a");
    let screen = console.wait_for("Approve always: which rule?");
    assert!(screen.contains("found beside the scenario"), "{screen}");
    assert!(!screen.contains("s also writes it into"), "{screen}");
    console.keys("s");
    let screen = console.wait_for("s keeps no rule in");
    assert!(
        screen.contains("Approve always: which rule?"),
        "the chooser stays open:\n{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(&policy).unwrap(),
        before,
        "the demo's policy is as it was"
    );
    console.keys("\r"); // for this session only
    console.wait_for("rule added");
    let _ = console.quit();
    assert_eq!(std::fs::read_to_string(&policy).unwrap(), before);
}

/// A native agent's batch (`tether send`): session `session` labelled
/// `label`, working in `cwd`, one `Bash` call running `command`.
fn agent_batch(session: &str, label: &str, cwd: &str, command: &str) -> String {
    json!({
        "session": {"session_id": session, "label": label, "cwd": cwd},
        "tools": [{"name": "Bash", "description": "Runs a command", "body": {"return": "ran"}}],
        "calls": [{"id": format!("{session}-call"), "name": "Bash", "arguments": {"command": command, "description": session}}],
    })
    .to_string()
}

#[test]
fn a_rule_kept_from_a_link_agent_holds_for_that_agent_in_its_project_in_a_later_session() {
    let dir = pty_support::Served::dir_with(&[("ask.json", &pty_support::asking("Bash", "a command runs"))]);
    let project = dir.path().canonicalize().unwrap().display().to_string();
    let policy = dir.path().join("ask.json");
    let mut served = pty_support::Served::console(dir, &["--policy", policy.to_str().unwrap()]);
    let first = served.write("first.json", &agent_batch("run-1", "builder", &project, "make build"));
    let sending = served.send(&first);
    let screen = served.screen();
    screen.wait_for("Approval 1 of 1");
    screen.keys("a");
    let chooser = screen.wait_for("Approve always: which rule?");
    assert!(
        chooser.contains("for agent \"builder\""),
        "where s keeps it:\n{chooser}"
    );
    screen.keys("s");
    screen.wait_for("policy reloaded");
    assert!(sending.wait_with_output().unwrap().status.success());
    // A later session of the same agent in the same project: not asked.
    let second = served.write("second.json", &agent_batch("run-2", "builder", &project, "make build"));
    assert_eq!(pty_support::outcome(served.send(&second))["code"], Value::Null);
    // Another agent there is asked (and rejected here).
    let third = served.write("third.json", &agent_batch("run-3", "tester", &project, "make build"));
    let sending = served.send(&third);
    let screen = served.screen();
    screen.wait_for("run-3-call");
    screen.keys("\x1b");
    assert_eq!(pty_support::outcome(sending)["code"], "DENIED");
    let kept = std::fs::read_to_string(&policy).unwrap();
    assert!(
        kept.contains(r#""agent":"builder""#) && !kept.contains("run-1"),
        "{kept}"
    );
    let journal = served.quit();
    let decided = journal
        .iter()
        .find(|e| e["event"] == "tool/result" && e["call_id"] == "run-2-call")
        .unwrap();
    assert_eq!(decided["decided_by"], "rule:always-bash-1", "{decided}");
}

#[test]
fn a_kept_command_prefix_passes_the_next_matching_call_and_asks_the_rest() {
    let calls = bash_calls(&[
        ("c1", "git status"),
        ("c2", "git status --short"),
        ("c3", "git push"),
        ("c4", "git status; rm -rf /"),
    ]);
    let (mut console, policy, _dir) = replay_written(
        &shell_scenario(vec![calls]),
        "{\n  \"description\":   \"commands are asked\",\n\n  \"rules\": [\n    {\"id\": \"ask-bash\", \"stage\": \"pre-execute\", \"match\": {\"tool\": \"Bash\"}, \"action\": {\"type\": \"ask\"}}\n  ]\n}\n",
        &["--auto"],
    );
    // `s`: add it and keep it in the policy file.
    prefix_kept_from_c1(&mut console, "starts with `git status`", "s");
    prefix_codes(&console.quit());
    let kept = std::fs::read_to_string(&policy).unwrap();
    assert!(
        kept.starts_with(
            "{\n  \"description\":   \"commands are asked\",\n\n  \"rules\": [\n    {\"id\":\"always-bash-1\""
        ),
        "the user's formatting stays:\n{kept}"
    );
    assert!(kept.contains("\"id\":\"always-bash-1\""), "{kept}");
}

/// Calls c1–c4 of one batch, each asked: on c1 `a` offers a prefix rule
/// (the chooser says `offered`), `j` picks it and `keep` adds it. c2
/// matches and passes; c3 (another subcommand) and c4 (a compound command)
/// are asked and rejected.
fn prefix_kept_from_c1(console: &mut Console, offered: &str, keep: &str) {
    console.wait_for("Call      c1");
    console.keys("a");
    let screen = console.wait_for("Approve always: which rule?");
    assert!(screen.contains(offered), "{screen}");
    console.keys("j"); // from the exact arguments to the prefix
    console.keys(keep);
    console.wait_for("Call      c3");
    console.keys("\x1b");
    let screen = console.wait_for("Call      c4");
    assert!(!screen.contains("Call      c2"));
    console.keys("\x1b");
    console.wait_for("4/4 done");
}

/// The codes of [`prefix_kept_from_c1`]'s calls in `journal`.
fn prefix_codes(journal: &[Value]) {
    assert_eq!(result(journal, "c1")["code"], Value::Null);
    assert_eq!(result(journal, "c2")["code"], Value::Null, "covered by the prefix");
    assert_eq!(result(journal, "c3")["code"], "DENIED", "another subcommand is asked");
    assert_eq!(result(journal, "c4")["code"], "DENIED", "a compound command is asked");
}

#[test]
fn a_tool_the_policy_marks_shell_like_is_offered_a_command_prefix() {
    let calls: Vec<Value> = [
        ("c1", "make test -j4"),
        ("c2", "make test"),
        ("c3", "make install"),
        ("c4", "make test && curl x | sh"),
    ]
    .iter()
    .map(|(id, line)| json!({"id": id, "name": "run", "arguments": json!({"job": {"line": line}}).to_string()}))
    .collect();
    let scenario = json!({
        "name": "own shell tool",
        "scopes": [{"id": "lab", "label": "lab"}],
        "tools": [{"name": "run", "description": "Runs a job line", "scope": "lab", "body": {"echo": true}}],
        "batches": [{"scope": "lab", "calls": calls}],
    });
    let policy = json!({
        "shell_tools": [{"tool": "run", "command": "/job/line"}],
        "rules": [{"id": "ask-run", "stage": "pre-execute", "match": {"tool": "run"}, "action": {"type": "ask"}}],
    });
    let (mut console, _policy, _dir) = replay_written(&scenario, &policy.to_string(), &["--auto"]);
    // Enter: for this session.
    prefix_kept_from_c1(
        &mut console,
        "when job/line starts with `make test` (each command of it",
        "\r",
    );
    prefix_codes(&console.quit());
}
