//! End to end in a real pseudo-terminal: the console is started as a person
//! would start it, keys go in, the screen is parsed back with vt100, and the
//! outcomes are read from the journal the console wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
mod pty_support;
use pty_support::*;

#[test]
fn approve_then_reject_with_a_typed_reason_reaches_the_model() {
    let mut console = Console::start(&[]);
    to_first_prompt(&mut console);
    let screen = console.contents();
    assert!(screen.contains("save_note") && screen.contains("call_4"), "{screen}");
    assert!(screen.contains("this replaces a note of yours"));
    console.keys("y");
    // The second write asks in turn.
    console.wait_for("Call      call_5");
    console.keys("n");
    console.wait_for("Reason for the model");
    console.keys("too vague,");
    console.keys("\r");
    console.keys("say what changes");
    console.keys("\x13"); // Ctrl+S
    console.wait_until("the batch to finish with call_5 denied", |s| {
        s.contains("3/3 done") && !s.contains("Approval 1 of") && s.contains("DENIED")
    });
    let journal = console.quit();
    assert_eq!(result(&journal, "call_4")["code"], Value::Null);
    assert_eq!(result(&journal, "call_5")["code"], "DENIED");
    assert_eq!(
        result(&journal, "call_5")["value"]["message"],
        "rejected by the approver: too vague,\nsay what changes"
    );
    assert_eq!(
        result(&journal, "call_6")["code"],
        "DENIED",
        "the delete rule still applies"
    );
}

#[test]
fn esc_rejects_and_v_shows_every_argument() {
    let mut console = Console::start(&[]);
    to_first_prompt(&mut console);
    console.keys("v");
    console.wait_for("All arguments of call_4");
    console.keys("\x1b");
    console.wait_until("the prompt back, whole", |s| {
        !s.contains("All arguments") && s.contains("Approval 1 of 1") && s.contains("(or a wider rule)")
    });
    console.keys("\x1b");
    console.wait_for("Call      call_5");
    console.keys("\x1b");
    console.wait_for("3/3 done");
    let journal = console.quit();
    assert_eq!(
        result(&journal, "call_4")["value"]["message"],
        "rejected by the approver"
    );
}

#[test]
fn an_unanswered_prompt_times_out_unavailable_never_denied() {
    // Two seconds a prompt: long enough to be seen on a loaded machine
    // (with one, both prompts could come and go between two looks).
    let mut console = Console::start(&["--approval-timeout", "2"]);
    console.keys("r");
    console.wait_for("batch 1 finished");
    console.keys("r");
    console.wait_until("a prompt with its countdown", |s| {
        s.contains("Approval 1 of 1") && ["0:00 left", "0:01 left", "0:02 left"].iter().any(|t| s.contains(t))
    });
    // Both writes time out in turn; the screen clears the prompt each time.
    console.wait_for("3/3 done");
    console.wait_gone("Approval 1 of");
    let journal = console.quit();
    for id in ["call_4", "call_5"] {
        assert_eq!(result(&journal, id)["code"], "UNAVAILABLE");
        assert_eq!(
            result(&journal, id)["value"]["message"],
            "approval timed out: nobody answered within 2 s"
        );
    }
}

#[test]
fn approve_always_answers_the_later_call_of_the_same_tool_and_scope() {
    let mut console = Console::start(&[]);
    to_first_prompt(&mut console);
    let screen = console.contents();
    assert!(
        screen.contains("allow tool \"save_note\" in scope \"assistant\""),
        "the exact rule is shown:\n{screen}"
    );
    console.keys("a");
    console.wait_for("Approve always: which rule?");
    console.keys("G"); // the widest: the whole tool, chosen explicitly
    console.keys("\r");
    // A rule of the policy asks save_*: the whole tool needs a second Enter.
    let screen = console.wait_for("press Enter again to add it");
    assert!(
        screen.contains("ask-before-writing"),
        "the rule it passes over is named:\n{screen}"
    );
    console.keys("\r");
    // A second prompt would hold the batch open: it can only finish without one.
    // (Both are checked on one screen: a frame can be read half-drawn.)
    console.wait_until("the batch to finish with no prompt", |s| {
        s.contains("3/3 done") && !s.contains("Approval 1 of")
    });
    console.keys("\t\t"); // to the detail pane, then look at the events
    let journal = console.quit();
    assert_eq!(result(&journal, "call_4")["code"], Value::Null);
    assert_eq!(
        result(&journal, "call_5")["code"],
        Value::Null,
        "approved by the always rule"
    );
}

#[test]
fn quitting_with_an_approval_pending_answers_it_and_the_journal_records_every_call() {
    let mut console = Console::start(&[]);
    to_first_prompt(&mut console);
    let journal = console.quit();
    let unavailable = result(&journal, "call_4");
    assert_eq!(unavailable["code"], "UNAVAILABLE");
    assert!(
        unavailable["value"]["message"]
            .as_str()
            .unwrap()
            .contains("console was closed")
    );
    for id in ["call_5", "call_6"] {
        assert_eq!(result(&journal, id)["code"], "ABORTED_BEFORE_DISPATCH", "{id}");
    }
    let declared = journal.iter().filter(|e| e["event"] == "tool/call").count();
    let results = journal.iter().filter(|e| e["event"] == "tool/result").count();
    assert_eq!((declared, results), (6, 6));
}

#[test]
fn help_opens_from_the_key_table_and_closes() {
    let mut console = Console::start(&[]);
    console.keys("?");
    // Read once the whole list is drawn (a frame can be read half-drawn).
    console.wait_until("the help with the prompt's keys", |s| {
        s.contains("Keys (Esc closes)") && s.contains("always: pick a rule that fits the call")
    });
    console.keys("\x1b");
    console.wait_gone("Keys (Esc closes)");
    console.quit();
}

#[test]
fn an_agent_connected_to_serve_is_approved_by_hand_in_its_own_scope() {
    let dir = Served::dir_with(&[(
        "ask.json",
        r#"{"default": "allow", "rules": [{"id": "ask-remember", "stage": "pre-execute", "match": {"tool": "remember"}, "action": {"type": "ask", "reason": "the agent wants to store a fact"}}]}"#,
    )]);
    let mut served = Served::console(dir, &["--policy", "{dir}/ask.json"]);
    let agent = served.send(Path::new(&demo("batch.send.json")));
    let console = served.screen();
    let screen = console.wait_until("the whole prompt", |s| {
        s.contains("Approval 1 of 1") && s.contains("(or a wider rule)")
    });
    assert!(
        screen.contains("remember") && screen.contains("script-1"),
        "the prompt names the agent:\n{screen}"
    );
    assert!(screen.contains("the agent wants to store a fact"), "{screen}");
    console.keys("y");
    let output = agent.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "c4 fails INVALID_ARGS, so send exits 1");
    let outcomes: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let codes: Vec<&Value> = outcomes.iter().map(|o| &o["code"]).collect();
    assert_eq!(
        codes,
        [&Value::Null, &Value::Null, &Value::Null, &json!("INVALID_ARGS")]
    );
    assert_eq!(outcomes[2]["decided_by"], "human");
    // The agent's scope came and went in the tree; the console goes on.
    console.wait_for("agent script disconnected");
    let journal = served.quit();
    assert_eq!(result(&journal, "c3")["code"], Value::Null);
}

#[test]
fn p_reloads_the_policy_file_and_a_broken_file_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    let deny_weather = r#"{"default": "allow", "rules": [{"id": "no-weather", "stage": "pre-execute", "match": {"tool": "weather"}, "action": {"type": "deny", "reason": "no weather today"}}]}"#;
    std::fs::write(&policy, deny_weather).unwrap();
    let args = strings(&["replay", &demo("quickstart.json"), "--policy", policy.to_str().unwrap()]);
    let mut console = Console::spawn(&args, true);
    console.wait_for("press r to run the next");
    // A broken file is refused and the rules in force stay.
    std::fs::write(&policy, "{\"rules\": [").unwrap();
    console.keys("p");
    console.wait_for("policy not reloaded");
    console.keys("r");
    console.wait_for("batch 1 finished");
    // A good file replaces them: no rule is left to deny anything.
    std::fs::write(&policy, r#"{"default": "allow", "rules": []}"#).unwrap();
    console.keys("p");
    console.wait_for("0 rules");
    console.keys("r");
    console.wait_until("the second batch", |s| {
        s.contains("Batch 2/3") && s.contains("3/3 done")
    });
    let journal = console.quit();
    assert_eq!(
        result(&journal, "call_1")["code"],
        "DENIED",
        "the old rule was kept through the broken reload"
    );
    assert_eq!(
        result(&journal, "call_6")["code"],
        Value::Null,
        "after the good reload nothing denies the delete"
    );
}

#[test]
fn a_body_panic_the_engine_catches_leaves_the_terminal_to_the_console() {
    let args = strings(&[
        "replay",
        &demo("faults.json"),
        "--policy",
        &demo("faults.policy.json"),
        "--auto",
        "--approval-timeout",
        "1",
    ]);
    let console = Console::spawn(&args, true);
    let screen = console.wait_until("the last batch to finish", |s| {
        s.contains("Batch 4/4") && s.contains("2/2 done")
    });
    assert!(
        !screen.contains("panicked at"),
        "a panic report on the screen:\n{screen}"
    );
    assert!(
        console.screen.lock().unwrap().screen().alternate_screen(),
        "the console left the alternate screen:\n{screen}"
    );
    // One `q` quits: the terminal is still in raw mode.
    let journal = console.quit();
    assert_eq!(result(&journal, "f6")["code"], "TOOL_ERROR");
}

/// A batch file for `tether send`: `n` parallel calls that policy asks about.
fn asking_batch(dir: &Path, agent: usize, n: usize) -> PathBuf {
    let calls: Vec<Value> = (0..n)
        .map(|i| json!({"id": format!("a{agent}c{i}"), "name": "poke", "arguments": "{}"}))
        .collect();
    let batch = json!({
        "session": {"session_id": format!("agent-{agent}"), "owner": "you", "label": format!("agent{agent}")},
        "tools": [{"name": "poke", "description": "Pokes", "concurrency": "always", "body": {"return": 1}}],
        "max_parallelism": 16,
        "calls": calls,
    });
    let path = dir.join(format!("batch{agent}.json"));
    std::fs::write(&path, batch.to_string()).unwrap();
    path
}

#[test]
fn quitting_with_twenty_pending_calls_from_three_agents_writes_every_outcome_first() {
    // The race this guards against lost about one run in five: three runs.
    for run in 0..3 {
        let served = Served::asking("poke", &[]);
        let agents: Vec<_> = [(0, 7), (1, 7), (2, 6)]
            .iter()
            .map(|&(agent, n)| served.send(&asking_batch(served.dir.path(), agent, n)))
            .collect();
        served.sees().wait_for("Approval 1 of 20");
        let journal = served.quit();
        for (agent, child) in agents.into_iter().enumerate() {
            let output = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert_eq!(
                output.status.code(),
                Some(1),
                "run {run}, agent {agent}: every call fails UNAVAILABLE, so send exits 1: {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let outcomes: Vec<Value> = stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|o| o.get("call_id").is_some())
                .collect();
            assert_eq!(outcomes.len(), if agent == 2 { 6 } else { 7 }, "run {run}: {stdout}");
            for outcome in &outcomes {
                assert_eq!(outcome["code"], "UNAVAILABLE", "run {run}: {outcome}");
            }
        }
        let results = journal.iter().filter(|e| e["event"] == "tool/result").count();
        assert_eq!(results, 20, "run {run}");
    }
}

#[test]
fn ctrl_z_suspends_to_the_shell_and_the_console_comes_back_whole() {
    // A shell with job control, as a person's: when the console stops it
    // prints a line on its own screen and brings the console back (`fg`).
    let args = strings(&[
        "replay",
        &demo("quickstart.json"),
        "--policy",
        &demo("quickstart.policy.json"),
    ]);
    let mut console = Console::spawn_under(
        Some(r#"set -m; "$0" "$@"; echo "[the shell has the terminal]"; sleep 1; fg"#),
        &args,
        true,
    );
    console.wait_for("press r to run the next");
    console.keys("\x1a"); // Ctrl+Z
    console.wait_until("the shell's own screen", |s| s.contains("[the shell has the terminal]"));
    console.wait_until("the console back on the alternate screen", |s| {
        s.contains("press r to run the next")
    });
    assert!(console.screen.lock().unwrap().screen().alternate_screen());
    console.keys("r");
    console.wait_for("3/3 done");
    console.quit();
}

#[test]
fn a_prompt_closed_by_a_disconnect_or_a_timeout_names_its_call_batch_and_reason() {
    let served = Served::asking("poke", &["--approval-timeout", "3"]);
    let send = |agent: usize| served.send(&asking_batch(served.dir.path(), agent, 1));
    let console = served.sees();
    // The agent goes away while its call waits for the human.
    let mut first = send(0);
    console.wait_for("Call      a0c0");
    first.kill().unwrap();
    first.wait().unwrap();
    console.wait_for("approval of poke (a0c0, batch 1) closed unanswered: agent agent0 disconnected");
    // Nobody answers the next agent's call.
    let mut second = send(1);
    console.wait_for("Call      a1c0");
    console.wait_for("approval of poke (a1c0, batch 2) closed unanswered: no answer in 3 s");
    second.wait().unwrap();
    served.quit();
}
