//! End to end with two real consoles on one serve (`tether serve --attach`
//! and `tether attach`), each in its own pseudo-terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod pty_support;
use pty_support::*;

const ASK_POKE: &str = r#"{"rules": [{"id": "ask-poke", "stage": "pre-execute", "match": {"tool": "poke"}, "action": {"type": "ask", "reason": "pokes are asked"}}]}"#;

/// A batch of one asked call whose arguments hold a bidi override and an ESC.
fn hostile_call(dir: &Path, agent: usize) -> PathBuf {
    let batch = json!({
        "session": {"session_id": format!("agent-{agent}"), "owner": "you", "label": format!("agent{agent}")},
        "tools": [{"name": "poke", "description": "Pokes", "body": {"return": agent}}],
        "calls": [{"id": format!("a{agent}c0"), "name": "poke", "arguments": "{\"path\": \"/tmp/\\u202etxt.exe\\u001b[2J\"}"}],
    });
    let path = dir.join(format!("batch{agent}.json"));
    std::fs::write(&path, batch.to_string()).unwrap();
    path
}

fn send(served: &Served, agent: usize) -> Child {
    served.send(&hostile_call(served.dir.path(), agent))
}

/// The six-digit code in the main console's header.
fn code_on(console: &Console) -> String {
    let screen = console.wait_until("an attach code", |s| s.contains("code "));
    let at = screen.find("code ").unwrap() + 5;
    screen[at..at + 6].to_owned()
}

fn attach(socket: &Path, code: &str, extra: &[&str]) -> Console {
    let mut args = strings(&["attach", "--socket", socket.to_str().unwrap(), "--code", code]);
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    // 30 rows: at 24 the prompt (its key row wraps in 80 columns) covers
    // the last line of the events pane, where the notes these tests wait for are.
    Console::spawn_sized(None, &args, false, (30, 80))
}

fn attach_once(socket: &Path, code: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["attach", "--socket", socket.to_str().unwrap(), "--code", code])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `tether serve --attach`, asking for every `poke`.
fn serve(extra: &[&str]) -> Served {
    let dir = Served::dir_with(&[("ask.json", ASK_POKE)]);
    let mut args = vec!["--attach", "--policy", "{dir}/ask.json"];
    args.extend_from_slice(extra);
    Served::console(dir, &args)
}

#[test]
fn y_in_an_attached_console_approves_and_every_console_says_who_answered() {
    let notified = tempfile::tempdir().unwrap();
    let file = notified.path().join("notify.jsonl");
    let notify = format!("cat >> {}", file.display());
    let served = serve(&["--notify-cmd", &notify]);
    let code = code_on(served.sees());
    // Tall enough that its events pane still shows the answer after the
    // agent's disconnect lines come in below it.
    let args = strings(&["attach", "--socket", served.socket.to_str().unwrap(), "--code", &code]);
    let mut attached = Console::spawn_sized(None, &args, false, SIZE);
    attached.wait_for("attached");
    served.sees().wait_for("1 attached");
    let agent = send(&served, 0);
    // The prompts themselves (a call's row shows before its request is asked).
    attached.wait_for_prompt("a0c0");
    let screen = served.sees().wait_for_prompt("a0c0");
    assert!(screen.contains("\\u{202e}"), "shown escaped:\n{screen}");
    let bells = served.sees().screen.lock().unwrap().screen().audible_bell_count();
    assert!(bells >= 1, "the main console rang its terminal");
    attached.keys("y");
    // The console that answered names itself as the others name it.
    let own = attached.wait_for("approved by you (attach 2");
    assert!(own.contains("poke (a0c0) approved by you (attach 2"), "{own}");
    let screen = served.sees().wait_for("approved by attach 2");
    assert!(screen.contains("poke (a0c0) approved by attach 2"), "{screen}");
    assert_eq!(outcome(agent)["value"], 0);

    // The notify command read the request and how it ended, escaped.
    let deadline = Instant::now() + DEADLINE;
    let lines = loop {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.lines().count() >= 2 || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        !lines.contains('\u{1b}') && !lines.contains('\u{202e}'),
        "nothing raw: {lines:?}"
    );
    let events: Vec<Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events[0]["event"], "approval/waiting");
    let preview = events[0]["args_preview"].as_str().unwrap();
    assert!(
        preview.contains("\\u{202e}txt.exe") && preview.contains("[2J"),
        "{preview}"
    );
    assert_eq!(
        (events[0]["queue_position"].clone(), events[0]["queue_length"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(events[1]["event"], "approval/closed");
    assert_eq!(events[1]["answer"], "approved");
    assert!(events[1]["by"].as_str().unwrap().starts_with("attach 2"));

    // Serve stops: the attached console says so and gives the terminal back.
    let journal = served.quit();
    let attached_record = journal.iter().find(|e| e["event"] == "console/attach").unwrap();
    assert!(
        attached_record["console"].as_str().unwrap().starts_with("attach 2"),
        "{attached_record}"
    );
    let result = journal
        .iter()
        .find(|e| e["event"] == "tool/result" && e["call_id"] == "a0c0")
        .unwrap();
    assert!(
        result["decided_by"].as_str().unwrap().starts_with("human@attach 2"),
        "the journal names the console that answered: {result}"
    );
    let (_, screen) = attached.quit_after_serve();
    assert!(
        screen.contents().contains("tether serve stopped"),
        "{}",
        screen.contents()
    );
}

/// The time before an events line (`+12.3s`) of the line holding `text`.
fn event_time(screen: &str, text: &str) -> f64 {
    let line = screen
        .lines()
        .find(|l| l.contains(text) && l.contains('+'))
        .unwrap_or_else(|| panic!("no events line with {text:?}:\n{screen}"));
    let at = line.find('+').unwrap() + 1;
    let end = at + line[at..].find('s').unwrap();
    line[at..end].parse().unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// Every console counts its events' times from when serve started: a
/// console attached seconds later shows the same time for the same line.
#[test]
fn an_attached_console_times_events_on_the_main_consoles_clock() {
    let served = serve(&[]);
    let code = code_on(served.sees());
    std::thread::sleep(Duration::from_secs(3));
    let mut args = strings(&["attach", "--socket", served.socket.to_str().unwrap(), "--code", &code]);
    args.push("--view".into());
    let attached = Console::spawn_sized(None, &args, false, (40, 140));
    attached.wait_for("attached");
    let agent = send(&served, 0);
    let there = attached.wait_until("the request in the events pane", |s| {
        s.lines().any(|l| l.contains("approval requested") && l.contains('+'))
    });
    let here = served.sees().wait_until("the request in the events pane", |s| {
        s.lines().any(|l| l.contains("approval requested") && l.contains('+'))
    });
    let (main_at, attached_at) = (
        event_time(&here, "approval requested"),
        event_time(&there, "approval requested"),
    );
    assert!(main_at >= 3.0, "{main_at}");
    assert!(
        (main_at - attached_at).abs() <= 0.5,
        "main {main_at} s, attached {attached_at} s:\n{there}"
    );
    drop(agent);
    drop(attached);
}

#[test]
fn a_killed_attach_leaves_the_request_to_the_main_console_and_a_second_answer_is_refused() {
    let mut served = serve(&[]);
    let code = code_on(served.sees());
    let mut attached = attach(&served.socket, &code, &["--view"]);
    attached.wait_for("attached");
    let agent = send(&served, 1);
    attached.wait_for_prompt("a1c0");
    attached.keys("y");
    attached.wait_for("cannot answer");
    attached.child.kill().unwrap();
    served.sees().wait_for("attach 2");
    served.sees().wait_for("0 attached");
    let screen = served.sees().wait_for_prompt("a1c0");
    assert!(screen.contains("Approval 1 of 1"), "still waiting:\n{screen}");
    served.screen().keys("y");
    assert_eq!(outcome(agent)["value"], 1);
    let journal = served.quit();
    let kinds: Vec<&str> = journal
        .iter()
        .filter(|e| e["event"].as_str().is_some_and(|k| k.starts_with("console/")))
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["console/attach", "console/detach"], "{journal:?}");
    let result = journal
        .iter()
        .find(|e| e["event"] == "tool/result" && e["call_id"] == "a1c0")
        .unwrap();
    assert_eq!(result["decided_by"], "human@main", "{result}");
}

#[test]
fn a_wrong_code_rotates_the_code_and_slows_the_next_try_and_never_locks_the_human_out() {
    let served = serve(&[]);
    let first = code_on(served.sees());
    let wrong = |code: &str| {
        if code == "000000" {
            "111111".to_owned()
        } else {
            "000000".to_owned()
        }
    };
    let timed = |code: &str| {
        let started = std::time::Instant::now();
        let output = attach_once(&served.socket, code);
        (output, started.elapsed())
    };
    let (output, took_first) = timed(&wrong(&first));
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("wrong attach code") && said.contains("shows a new one"),
        "{said}"
    );
    // A new code is on the screen after each wrong one.
    let next_code = |previous: &str| {
        let screen = served.sees().wait_until("a new attach code", |s| {
            s.contains("code ") && !s.contains(&format!("code {previous}"))
        });
        let at = screen.find("code ").unwrap() + 5;
        screen[at..at + 6].to_owned()
    };
    let second = next_code(&first);
    // The old code is no good any more.
    let (output, took_second) = timed(&first);
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("wrong attach code"),
        "the old code"
    );
    assert!(
        took_second >= took_first + std::time::Duration::from_millis(900),
        "each wrong code waits longer: {took_first:?}, then {took_second:?}"
    );
    // Three wrong codes in, the human still attaches with the code shown now.
    let third = next_code(&second);
    let (output, _) = timed(&wrong(&third));
    assert!(String::from_utf8_lossy(&output.stdout).contains("wrong attach code"));
    let now = next_code(&third);
    let mut attached = attach(&served.socket, &now, &["--view"]);
    attached.wait_for("attached");
    served.sees().wait_for("1 attached");
    attached.child.kill().unwrap();
    served.quit();
}

#[test]
fn headless_serve_answered_attached_waits_for_a_console_that_attaches_late() {
    let dir = Served::dir_with(&[("ask.json", ASK_POKE)]);
    let mut served = Served::headless(
        dir,
        &[
            "--attach",
            "--answer",
            "attached",
            "--approval-timeout",
            "60",
            "--policy",
            "{dir}/ask.json",
        ],
    );
    let code_line = served.stderr_line("attach code ");
    let code = code_line["attach code ".len().."attach code ".len() + 6].to_owned();
    let agent = send(&served, 2);
    // Nobody is attached yet: the call waits.
    let waiting = served.stderr_line("approval waiting");
    assert!(waiting.contains("a2c0"), "{waiting}");
    std::thread::sleep(Duration::from_secs(1));
    let mut attached = attach(&served.socket, &code, &[]);
    attached.wait_for_prompt("a2c0");
    attached.keys("y");
    assert_eq!(outcome(agent)["value"], 2);
}
