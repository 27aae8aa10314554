//! Unanswered calls are reminded, escalated to a second person, then fail
//! UNAVAILABLE saying nobody answered (`tether serve --remind-after
//! --escalate-after --escalate-cmd`), through the real binary: headless,
//! and with two consoles (`tether serve` and `tether attach`, each in its
//! own pseudo-terminal) that both ring and say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod pty_support;
mod web_support;
use pty_support::*;

/// The six-digit code in the main console's header, once it is not `old`.
fn code_on(console: &Console, old: Option<&str>) -> String {
    let screen = console.wait_until("an attach code", |s| {
        s.find("code ").is_some_and(|at| Some(&s[at + 5..at + 11]) != old)
    });
    let at = screen.find("code ").unwrap() + 5;
    screen[at..at + 6].to_owned()
}

/// `tether attach` in a pseudo-terminal, once it is in.
fn attach(served: &Served, code: &str) -> Console {
    let args = strings(&["attach", "--socket", served.socket.to_str().unwrap(), "--code", code]);
    let attached = Console::spawn_sized(None, &args, false, SIZE);
    attached.wait_for("attached");
    served.sees().wait_for("1 attached");
    attached
}

fn bells(console: &Console) -> usize {
    console.screen.lock().unwrap().screen().audible_bell_count()
}

/// Waits until `console` has rung more than `before` times: how many.
fn rang_since(console: &Console, before: usize, what: &str) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = bells(console);
        if now > before {
            return now;
        }
        assert!(Instant::now() < deadline, "{what} did not ring");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `file` holds `n` events.
fn events_after(file: &std::path::Path, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let got = events_in(file);
        if got.len() >= n {
            return got;
        }
        assert!(Instant::now() < deadline, "{} events of {n}: {got:#?}", got.len());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn poke(served: &Served, call: &str) -> std::process::Child {
    served.send_json(
        &format!("{call}.json"),
        &json!({"session": {"session_id": "s1", "label": "agent1"},
                "tools": [{"name": "poke", "body": {"return": 1}}],
                "calls": [{"id": call, "name": "poke", "arguments": "{\"path\": \"/tmp/x\"}"}]}),
    )
}

#[test]
fn two_consoles_ring_the_reminder_the_second_person_is_called_and_nobody_answering_is_unavailable_on_both() {
    let dir = Served::dir_with(&[("ask.json", &asking("poke", "pokes are asked"))]);
    let notify = format!("cat >> {}/notify.jsonl", dir.path().display());
    let escalate = format!("cat >> {}/escalated.jsonl", dir.path().display());
    let served = Served::console(
        dir,
        &[
            "--attach",
            "--policy",
            "{dir}/ask.json",
            "--approval-timeout",
            "5",
            "--remind-after",
            "1500ms",
            "--escalate-after",
            "3s",
            "--notify-cmd",
            &notify,
            "--escalate-cmd",
            &escalate,
        ],
    );
    let attached = attach(&served, &code_on(served.sees(), None));
    let agent = poke(&served, "c1");
    served.sees().wait_for("poke (c1)");
    attached.wait_for("poke (c1)");
    let main_rang = rang_since(served.sees(), 0, "the main console, when it came,");
    let attached_rang = rang_since(&attached, 0, "the attached console, when it came,");

    // --remind-after: both screens ring again and say so; so is the notify command told.
    let reminder = "reminder: poke (c1) in agent1 still waits for an answer";
    served.sees().wait_for(reminder);
    attached.wait_for(reminder);
    rang_since(served.sees(), main_rang, "the main console, reminded,");
    rang_since(&attached, attached_rang, "the attached console, reminded,");
    let told = events_after(&served.path("notify.jsonl"), 2);
    assert_eq!(told[1]["event"], "approval/reminder", "{told:#?}");
    assert_eq!(told[1]["call_id"], "c1");

    // --escalate-after: the second command is run with the approval's details.
    let escalated = events_after(&served.path("escalated.jsonl"), 1);
    assert_eq!(escalated.len(), 1, "{escalated:#?}");
    let second = &escalated[0];
    assert_eq!(second["event"], "approval/escalated");
    assert_eq!(
        (&second["tool"], &second["call_id"]),
        (&json!("poke"), &json!("c1")),
        "{second}"
    );
    assert_eq!(second["scope"], "agent1", "{second}");
    assert_eq!(second["reason"], "pokes are asked", "{second}");
    assert!(second["args_preview"].as_str().unwrap().contains("/tmp/x"), "{second}");
    let left = second["expires_in_ms"].as_u64().unwrap();
    assert!(left <= 2_100, "escalated after 3 s: {left} ms left");

    // Nobody answers: UNAVAILABLE, saying so, on both screens; never a rejection.
    let got = outcome(agent);
    assert_eq!(got["code"], "UNAVAILABLE", "{got}");
    assert_eq!(
        got["value"]["message"], "approval timed out: nobody answered within 5 s",
        "{got}"
    );
    let closed = "approval of poke (c1, batch 1) closed unanswered: no answer in 5 s";
    // The note comes with the close, the row's code with the outcome after it.
    let both = |s: &str| s.contains(closed) && s.contains("UNAVAILABLE");
    for console in [served.sees(), &attached] {
        let screen = console.wait_until("the close and the call's UNAVAILABLE", both);
        assert!(!screen.contains("rejected"), "nobody rejected it:\n{screen}");
    }
    let told = events_after(&served.path("notify.jsonl"), 3);
    let names: Vec<&str> = told.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["approval/waiting", "approval/reminder", "approval/closed"]);
    assert_eq!(told[2]["answer"], "timed out");
    let journal = served.quit();
    let result = journal
        .iter()
        .find(|e| e["event"] == "tool/result" && e["call_id"] == "c1")
        .unwrap();
    assert_eq!(result["code"], "UNAVAILABLE", "{result}");
    drop(attached);
}

fn events_in(file: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn an_unanswered_call_is_reminded_escalated_then_unavailable_because_nobody_answered() {
    let dir = Served::dir_with(&[("ask.json", &asking("poke", "pokes are asked"))]);
    let notify = format!("cat >> {}/notify.jsonl", dir.path().display());
    let escalate = format!("cat >> {}/escalated.jsonl", dir.path().display());
    let served = Served::headless(
        dir,
        &[
            "--policy",
            "{dir}/ask.json",
            "--answer",
            "attached",
            "--attach",
            "--approval-timeout",
            "3",
            "--remind-after",
            "1s",
            "--escalate-after",
            "2s",
            "--notify-cmd",
            &notify,
            "--escalate-cmd",
            &escalate,
        ],
    );
    let started = Instant::now();
    let agent = served.send_json(
        "poke.json",
        &json!({"session": {"session_id": "s1"}, "tools": [{"name": "poke", "body": {"return": 1}}],
                "calls": [{"id": "c1", "name": "poke", "arguments": "{}"}]}),
    );
    let got = outcome(agent);
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert_eq!(got["code"], "UNAVAILABLE", "{got}");
    assert_eq!(
        got["value"]["message"], "approval timed out: nobody answered within 3 s",
        "{got}"
    );
    // The commands run detached: give them a moment to write.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (told, escalated) = loop {
        let told = events_in(&served.path("notify.jsonl"));
        let escalated = events_in(&served.path("escalated.jsonl"));
        if told.len() >= 3 && !escalated.is_empty() {
            break (told, escalated);
        }
        assert!(Instant::now() < deadline, "{told:#?} {escalated:#?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let names: Vec<&str> = told.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["approval/waiting", "approval/reminder", "approval/closed"]);
    let left = told[1]["expires_in_ms"].as_u64().unwrap();
    assert!((1_500..=2_100).contains(&left), "reminded after 1 s: {left} ms left");
    assert_eq!(told[2]["answer"], "timed out");
    assert_eq!(escalated.len(), 1, "{escalated:#?}");
    assert_eq!(escalated[0]["event"], "approval/escalated");
    assert_eq!(escalated[0]["call_id"], "c1");
    let left = escalated[0]["expires_in_ms"].as_u64().unwrap();
    assert!(left <= 1_100, "escalated after 2 s: {left} ms left");
}

#[test]
fn a_duration_that_is_not_one_is_refused() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--headless", "--remind-after", "soon"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a duration"));
}

#[test]
fn a_rule_may_set_its_own_wait_and_tether_check_refuses_one_that_is_not_a_duration() {
    let policy = r#"{"rules": [{"id": "ask-poke", "stage": "pre-execute", "match": {"tool": "poke"},
                     "action": {"type": "ask", "reason": "quick", "timeout": "1s"}}]}"#;
    let bad = r#"{"rules": [{"id": "ask-poke", "stage": "pre-execute", "match": {"tool": "poke"},
                  "action": {"type": "ask", "timeout": "soon"}}]}"#;
    let dir = Served::dir_with(&[("ask.json", policy), ("bad.json", bad)]);
    let checked = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("check")
        .arg(dir.path().join("bad.json"))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(!checked.status.success(), "{said}");
    assert!(said.contains("\"timeout\"?: \"10m\""), "{said}");
    let served = Served::headless(
        dir,
        &[
            "--policy",
            "{dir}/ask.json",
            "--answer",
            "attached",
            "--attach",
            "--approval-timeout",
            "60",
            "--journal",
            "{dir}/journal.jsonl",
        ],
    );
    let started = Instant::now();
    let agent = served.send_json(
        "poke.json",
        &json!({"session": {"session_id": "s1"}, "tools": [{"name": "poke", "body": {"return": 1}}],
                "calls": [{"id": "c1", "name": "poke", "arguments": "{}"}]}),
    );
    let got = outcome(agent);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the rule's 1 s, not the console's 60 s"
    );
    assert_eq!(got["code"], "UNAVAILABLE", "{got}");
    assert_eq!(
        got["value"]["message"],
        "approval timed out: nobody answered within 1 s"
    );
    // The journal says how long it waited: the rule's second, not the console's minute.
    let recorded = journal_result(&served.path("journal.jsonl"), "c1");
    assert_eq!(recorded["decided_by"], "timeout", "{recorded}");
    let waited = recorded["waited_ms"].as_u64().unwrap();
    assert!((1_000..10_000).contains(&waited), "waited {waited} ms: {recorded}");
}

/// The `tool/result` line of `call_id` in the journal at `path`, once written.
fn journal_result(path: &std::path::Path, call_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let found = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|l| l["event"] == "tool/result" && l["call_id"] == call_id);
        if let Some(found) = found {
            return found;
        }
        assert!(Instant::now() < deadline, "no result for {call_id} in {text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Pairs a device through the link's form as a browser would: its cookie.
async fn paired_cookie(base: &str, link: &str, http: &reqwest::Client) -> String {
    let token = link.rsplit('/').next().unwrap();
    let response = http
        .post(format!("{base}/pair"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("sec-fetch-site", "same-origin")
        .body(format!("token={token}&name=phone"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 303);
    let set = response.headers()["set-cookie"].to_str().unwrap().to_owned();
    set[..set.find(';').unwrap()].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_quarter_of_the_time_left_every_screen_and_the_page_are_reminded_not_only_the_notify_command() {
    let port = web_support::free_port();
    let base = format!("http://127.0.0.1:{port}");
    let web_addr = format!("127.0.0.1:{port}");
    let dir = Served::dir_with(&[("ask.json", &asking("poke", "pokes are asked"))]);
    let notify = format!("cat >> {}/notify.jsonl", dir.path().display());
    let served = Served::console(
        dir,
        &[
            "--attach",
            "--web",
            &web_addr,
            "--policy",
            "{dir}/ask.json",
            "--approval-timeout",
            "8",
            "--notify-cmd",
            &notify,
        ],
    );
    // The first code pairs the page, the next attaches the second console.
    let first = code_on(served.sees(), None);
    let link = web_support::pair_link(&served.socket, &first);
    let http = web_support::client();
    let cookie = paired_cookie(&base, &link, &http).await;
    let attached = attach(&served, &code_on(served.sees(), Some(&first)));
    let page = || async {
        let got = http
            .get(format!("{base}/"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        got.text().await.unwrap()
    };

    let agent = poke(&served, "c1");
    served.sees().wait_for("poke (c1)");
    attached.wait_for("poke (c1)");
    let main_rang = rang_since(served.sees(), 0, "the main console, when it came,");
    let attached_rang = rang_since(&attached, 0, "the attached console, when it came,");
    let html = page().await;
    assert!(
        html.contains("call c1<") && !html.contains("class=\"reminded\""),
        "{html}"
    );

    // 6 s in, a quarter of the 8 s is left: every screen rings and says so.
    let reminder = "reminder: poke (c1) in agent1 still waits for an answer";
    served.sees().wait_for(reminder);
    attached.wait_for(reminder);
    rang_since(served.sees(), main_rang, "the main console, reminded,");
    rang_since(&attached, attached_rang, "the attached console, reminded,");
    let html = page().await;
    assert!(
        html.contains("<span class=\"reminded\">reminder: still waits</span>"),
        "the page marks it:\n{html}"
    );
    let told = events_after(&served.path("notify.jsonl"), 2);
    assert_eq!(told[1]["event"], "approval/reminder", "{told:#?}");

    let got = outcome(agent);
    assert_eq!(got["code"], "UNAVAILABLE", "{got}");
    assert_eq!(
        got["value"]["message"],
        "approval timed out: nobody answered within 8 s"
    );
    drop(attached);
}
