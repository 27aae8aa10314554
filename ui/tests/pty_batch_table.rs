//! End to end in a real pseudo-terminal: the batch table — a batch evicted
//! from memory read back from the journal (or marked dropped without one),
//! the table scrolling through resizes, and a prompt that keeps its keys
//! through them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod pty_support;
use pty_support::*;

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
    let args = strings(&["replay", scenario.to_str().unwrap(), "--auto"]);
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
fn a_prompt_keeps_its_keys_through_resizes_and_still_answers() {
    let args = strings(&[
        "replay",
        &demo("quickstart.json"),
        "--policy",
        &demo("quickstart.policy.json"),
    ]);
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
