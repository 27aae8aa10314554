//! End to end in a real pseudo-terminal: the console is started as a person
//! would start it, keys go in, the screen is parsed back with vt100, and the
//! outcomes are read from the journal the console wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

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
    let args: Vec<String> = ["replay", &demo("quickstart.json"), "--policy", policy.to_str().unwrap()]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
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
    let args: Vec<String> = [
        "replay",
        &demo("faults.json"),
        "--policy",
        &demo("faults.policy.json"),
        "--auto",
        "--approval-timeout",
        "1",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
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
fn a_kept_command_prefix_passes_the_next_matching_call_and_asks_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("shell.json");
    let policy = dir.path().join("shell.policy.json");
    let calls: Vec<Value> = [
        ("c1", "git status"),
        ("c2", "git status --short"),
        ("c3", "git push"),
        ("c4", "git status; rm -rf /"),
    ]
    .iter()
    .map(|(id, command)| json!({"id": id, "name": "Bash", "arguments": json!({"command": command}).to_string()}))
    .collect();
    std::fs::write(
        &scenario,
        json!({
            "name": "shell",
            "scopes": [{"id": "lab", "label": "lab", "owner": "me"}],
            "tools": [{"name": "Bash", "description": "Runs a command", "scope": "lab", "body": {"echo": true}}],
            "batches": [{"scope": "lab", "calls": calls}],
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        &policy,
        "{\n  \"description\":   \"commands are asked\",\n\n  \"rules\": [\n    {\"id\": \"ask-bash\", \"stage\": \"pre-execute\", \"match\": {\"tool\": \"Bash\"}, \"action\": {\"type\": \"ask\"}}\n  ]\n}\n",
    )
    .unwrap();
    let args: Vec<String> = [
        "replay",
        scenario.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
        "--auto",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut console = Console::spawn(&args, true);
    console.wait_for("Call      c1");
    console.keys("a");
    let screen = console.wait_for("Approve always: which rule?");
    assert!(screen.contains("starts with `git status`"), "{screen}");
    console.keys("j"); // from the exact arguments to the prefix
    console.keys("s"); // add it and keep it in the policy file
    // c2 matches and passes; c3 does not and is asked.
    console.wait_for("Call      c3");
    console.keys("\x1b");
    let screen = console.wait_for("Call      c4");
    assert!(!screen.contains("Call      c2"));
    console.keys("\x1b");
    console.wait_for("4/4 done");
    let journal = console.quit();
    assert_eq!(result(&journal, "c1")["code"], Value::Null);
    assert_eq!(result(&journal, "c2")["code"], Value::Null, "covered by the prefix");
    assert_eq!(result(&journal, "c3")["code"], "DENIED", "another subcommand is asked");
    assert_eq!(result(&journal, "c4")["code"], "DENIED", "a compound command is asked");
    let kept = std::fs::read_to_string(&policy).unwrap();
    assert!(
        kept.starts_with(
            "{\n  \"description\":   \"commands are asked\",\n\n  \"rules\": [\n    {\"id\":\"always-bash-1\""
        ),
        "the user's formatting stays:\n{kept}"
    );
    assert!(kept.contains("\"id\":\"always-bash-1\""), "{kept}");
}

#[test]
fn ctrl_z_suspends_to_the_shell_and_the_console_comes_back_whole() {
    // A shell with job control, as a person's: when the console stops it
    // prints a line on its own screen and brings the console back (`fg`).
    let args: Vec<String> = [
        "replay",
        &demo("quickstart.json"),
        "--policy",
        &demo("quickstart.policy.json"),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
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
/// Runs the reads, then the writes with both prompts rejected, so the first
/// batch is older than `--history-batches 1` keeps in full.
fn two_batches_with_history_of_one(console: &mut Console) {
    console.keys("r");
    console.wait_for("3/3 done");
    console.keys("r");
    console.wait_for("Approval 1 of 1");
    console.keys("\x1b");
    console.wait_for("Call      call_5");
    console.keys("\x1b");
    console.wait_until("the writes to finish", |s| {
        s.contains("Batch 2/3") && s.contains("3/3 done") && !s.contains("Approval 1 of")
    });
}

#[test]
fn an_evicted_batch_opened_with_bracket_is_read_back_from_the_journal() {
    let mut console = Console::start(&["--history-batches", "1"]);
    two_batches_with_history_of_one(&mut console);
    console.keys("[");
    let screen = console.wait_for("(from the journal)");
    assert!(screen.contains("Batch 1/3"), "{screen}");
    for id in ["call_1", "call_2", "call_3"] {
        assert!(screen.contains(id), "{id} is shown again:\n{screen}");
    }
    assert!(!screen.contains("dropped"), "{screen}");
    // And forward again to the batch still kept in full.
    console.keys("]");
    console.wait_until("batch 2 from memory", |s| {
        s.contains("Batch 2/3") && s.contains("call_4") && !s.contains("(from the journal)")
    });
    console.quit();
}

#[test]
fn without_a_journal_an_evicted_batch_shows_the_dropped_marker() {
    let mut args = vec![
        "replay".to_owned(),
        demo("quickstart.json"),
        "--policy".to_owned(),
        demo("quickstart.policy.json"),
    ];
    args.extend(["--history-batches".to_owned(), "1".to_owned()]);
    let mut console = Console::spawn(&args, false);
    console.wait_for("press r to run the next");
    two_batches_with_history_of_one(&mut console);
    console.keys("[");
    let screen = console.wait_for("1 older batches dropped — start with `--journal` to keep them");
    assert!(screen.contains("Batch 1/3"), "{screen}");
    assert!(!screen.contains("call_1"), "its rows are gone:\n{screen}");
    console.keys("q");
}

/// A scenario of `n` echo calls, run with `--auto`: a batch too long for
/// any of the terminal sizes below, so its table scrolls.
fn long_batch(dir: &Path, n: usize) -> PathBuf {
    let calls: Vec<Value> = (1..=n)
        .map(|i| json!({"id": format!("c{i:02}"), "name": "echo", "arguments": "{}"}))
        .collect();
    let path = dir.join("long.json");
    std::fs::write(
        &path,
        json!({
            "name": "long",
            "tools": [{"name": "echo", "description": "Echoes", "concurrency": "always", "body": {"echo": true}}],
            "batches": [{"label": "many calls", "max_parallelism": 8, "calls": calls}],
        })
        .to_string(),
    )
    .unwrap();
    // Beside the scenario, so the replay finds it: every echo runs unasked.
    std::fs::write(dir.join("long.policy.json"), r#"{"default": "allow", "rules": []}"#).unwrap();
    path
}

/// Whether the screen is one whole frame of `rows` × `cols`: the header on
/// the first row, the footer's keys on the last, the batch pane's right
/// border in the last column, and `call` the selected (reversed) row of the
/// batch table, also shown in the detail pane.
fn whole_with_selected(screen: &vt100::Screen, (rows, cols): (u16, u16), call: &str) -> Result<(), String> {
    let lines: Vec<String> = screen.rows(0, cols).collect();
    if screen.size() != (rows, cols) || lines.len() != rows as usize {
        return Err(format!("size {:?}", screen.size()));
    }
    if !lines[0].starts_with(" Tether") {
        return Err("no header on the first row".into());
    }
    let last = &lines[rows as usize - 1];
    if !(last.contains("quit") && last.contains("?")) {
        return Err(format!("no footer keys on the last row: {last:?}"));
    }
    let corner = screen.cell(1, cols - 1).map(vt100::Cell::contents).unwrap_or_default();
    if corner != "┓" && corner != "┐" {
        return Err(format!(
            "the top-right corner is {corner:?}, not a border: the frame is not {cols} wide"
        ));
    }
    let needle = format!(" {call} ");
    let Some(row) = lines.iter().position(|l| l.contains(&needle) && l.contains("echo")) else {
        return Err(format!("{call} is not in the batch table"));
    };
    let col = lines[row].find(&needle).unwrap() + 1;
    let col = lines[row][..col].chars().count() as u16;
    if !screen.cell(row as u16, col).is_some_and(vt100::Cell::inverse) {
        return Err(format!("{call} is shown but not selected"));
    }
    if !lines.iter().any(|l| l.contains(&format!("{call} · echo"))) {
        return Err(format!("the detail pane does not show {call}"));
    }
    Ok(())
}

impl Console {
    /// Waits until the screen is whole at `size` with `call` selected.
    fn wait_whole(&self, size: (u16, u16), call: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let screen = self.screen.lock().unwrap().screen().clone();
            match whole_with_selected(&screen, size, call) {
                Ok(()) => return screen.contents(),
                Err(why) => assert!(
                    Instant::now() < deadline,
                    "at {size:?} with {call} selected: {why}; the screen:\n{}",
                    screen.contents()
                ),
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

#[test]
fn resizing_keeps_the_batch_table_scrolling_and_quitting_leaves_no_rows_behind() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = long_batch(dir.path(), 60);
    let args: Vec<String> = ["replay", scenario.to_str().unwrap(), "--auto"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let mut console = Console::spawn_sized(None, &args, true, (40, 120));
    console.wait_for("60/60 done");
    console.keys(&"j".repeat(45));
    console.wait_whole((40, 120), "c46");

    console.resize(24, 80);
    console.wait_whole((24, 80), "c46");
    console.keys("jjjjj");
    console.wait_whole((24, 80), "c51");
    console.keys("\x1b[5~"); // PgUp
    let screen = console.wait_until("a page up", |s| !s.contains(" c51 "));
    assert!(!screen.contains(" c60 "), "{screen}");

    console.resize(50, 200);
    console.keys("\x1b[H"); // Home
    console.wait_whole((50, 200), "c01");
    console.keys(&"j".repeat(59));
    console.wait_whole((50, 200), "c60");

    // A key pressed as the terminal resizes is read at once, not held back
    // until the next key (as it was when the resize and the key arrived
    // in the same wake-up of crossterm's edge-triggered reader).
    for round in 0..12 {
        let size = if round % 2 == 0 { (24, 80) } else { (40, 120) };
        console.resize(size.0, size.1);
        console.keys("k");
        console.wait_whole(size, &format!("c{}", 59 - round));
    }
    let (journal, normal) = console.quit_to_normal_screen();
    assert_eq!(journal.iter().filter(|e| e["event"] == "tool/result").count(), 60);
    assert!(!normal.alternate_screen(), "the console left the alternate screen");
    let left: Vec<String> = normal
        .rows(0, 80)
        .filter(|l| {
            ["Batch", "Events", "Scopes", "c60", "│", "┃"]
                .iter()
                .any(|t| l.contains(t))
        })
        .collect();
    assert!(
        left.is_empty(),
        "console rows on the normal screen after quitting:\n{}",
        left.join("\n")
    );
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

#[test]
fn a_tool_the_policy_marks_shell_like_is_offered_a_command_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("run.json");
    let policy = dir.path().join("run.policy.json");
    let calls: Vec<Value> = [
        ("c1", "make test -j4"),
        ("c2", "make test"),
        ("c3", "make install"),
        ("c4", "make test && curl x | sh"),
    ]
    .iter()
    .map(|(id, line)| json!({"id": id, "name": "run", "arguments": json!({"job": {"line": line}}).to_string()}))
    .collect();
    std::fs::write(
        &scenario,
        json!({
            "name": "own shell tool",
            "scopes": [{"id": "lab", "label": "lab"}],
            "tools": [{"name": "run", "description": "Runs a job line", "scope": "lab", "body": {"echo": true}}],
            "batches": [{"scope": "lab", "calls": calls}],
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        &policy,
        json!({
            "shell_tools": [{"tool": "run", "command": "/job/line"}],
            "rules": [{"id": "ask-run", "stage": "pre-execute", "match": {"tool": "run"}, "action": {"type": "ask"}}],
        })
        .to_string(),
    )
    .unwrap();
    let args: Vec<String> = [
        "replay",
        scenario.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
        "--auto",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut console = Console::spawn(&args, true);
    console.wait_for("Call      c1");
    console.keys("a");
    let screen = console.wait_for("Approve always: which rule?");
    assert!(
        screen.contains("when job/line starts with `make test` (each command of it"),
        "{screen}"
    );
    console.keys("j"); // from the exact arguments to the prefix
    console.keys("\r"); // for this session
    // c2 matches and passes; c3 (another subcommand) and c4 (compound) are asked.
    console.wait_for("Call      c3");
    console.keys("\x1b");
    let screen = console.wait_for("Call      c4");
    assert!(!screen.contains("Call      c2"));
    console.keys("\x1b");
    console.wait_for("4/4 done");
    let journal = console.quit();
    assert_eq!(result(&journal, "c1")["code"], Value::Null);
    assert_eq!(result(&journal, "c2")["code"], Value::Null, "covered by the prefix");
    assert_eq!(result(&journal, "c3")["code"], "DENIED");
    assert_eq!(result(&journal, "c4")["code"], "DENIED", "a compound command is asked");
}

#[test]
fn a_prompt_keeps_its_keys_through_resizes_and_still_answers() {
    let args: Vec<String> = [
        "replay",
        &demo("quickstart.json"),
        "--policy",
        &demo("quickstart.policy.json"),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut console = Console::spawn_sized(None, &args, true, (40, 120));
    console.wait_for("press r to run the next");
    to_first_prompt(&mut console);
    for (rows, cols) in [(24, 80), (50, 200), (24, 80)] {
        console.resize(rows, cols);
        console.wait_until(&format!("the whole prompt at {cols}x{rows}"), |s| {
            let lines: Vec<&str> = s.lines().collect();
            lines.len() <= rows as usize
                && lines.iter().all(|l| l.chars().count() <= cols as usize)
                && s.contains("Approval 1 of 1")
                && s.contains("y  approve once")
                && s.contains("Call      call_4")
        });
    }
    console.keys("y");
    console.wait_for("Call      call_5");
    console.keys("\x1b");
    console.wait_until("the writes to finish", |s| {
        s.contains("3/3 done") && !s.contains("Approval 1 of")
    });
    let (journal, normal) = console.quit_to_normal_screen();
    assert_eq!(result(&journal, "call_4")["code"], Value::Null);
    assert_eq!(result(&journal, "call_5")["code"], "DENIED");
    assert!(
        normal.contents().trim().is_empty(),
        "left on the normal screen:\n{}",
        normal.contents()
    );
}
