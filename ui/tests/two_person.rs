//! The two-person rule through the real binary: `{"type": "ask",
//! "approvals": 2}` runs a call only after two distinct answerers approve —
//! the console `tether serve` runs in, a console attached with `tether
//! attach`, a web device paired over HTTP — each counted once; any rejection
//! rejects; a scripted `--answer approve` is one answerer at most; `tether
//! check` refuses a number outside 1 to 5.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};

mod pty_support;
mod web_support;
use pty_support::*;
use web_support::*;

fn policy(approvals: Value) -> String {
    json!({"rules": [{"id": "two-people", "stage": "pre-execute", "match": {"tool": "poke"},
        "action": {"type": "ask", "reason": "pokes need two people", "approvals": approvals}}]})
    .to_string()
}

fn batch(call: &str) -> Value {
    json!({
        "session": {"session_id": "agent-1", "label": "agent1"},
        "tools": [{"name": "poke", "body": {"return": 5}}],
        "calls": [{"id": call, "name": "poke", "arguments": "{}"}],
    })
}

/// The six-digit code in the main console's header, once it is not `old`.
fn code_on(console: &Console, old: Option<&str>) -> String {
    let screen = console.wait_until("an attach code", |s| {
        s.find("code ")
            .and_then(|at| s.get(at + 5..at + 11))
            .is_some_and(|code| code.chars().all(|c| c.is_ascii_digit()) && Some(code) != old)
    });
    let at = screen.find("code ").unwrap() + 5;
    screen[at..at + 6].to_owned()
}

/// The notify command's events once there are `n` of them.
fn notified(served: &Served, n: usize) -> Vec<Value> {
    wait_for_lines(&served.path("notify.jsonl"), n)
}

/// Pairs a web device through the link's form: its cookie's secret.
async fn pair(base: &str, link: &str, name: &str) -> String {
    let token = link.rsplit('/').next().unwrap();
    let response = client()
        .post(format!("{base}/pair"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("sec-fetch-site", "same-origin")
        .body(format!("token={token}&name={name}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 303);
    let cookie = response.headers()["set-cookie"].to_str().unwrap().to_owned();
    cookie["tether_device=".len()..cookie.find(';').unwrap()].to_owned()
}

/// The page as the device sees it.
async fn page(base: &str, secret: &str) -> String {
    client()
        .get(format!("{base}/"))
        .header("cookie", format!("tether_device={secret}"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The page once it shows `text` (the queue changes as consoles answer).
async fn page_with(base: &str, secret: &str, text: &str) -> String {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let html = page(base, secret).await;
        if html.contains(text) {
            return html;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the page never showed {text:?}:\n{html}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `tether serve --attach --web` in a terminal with the two-person policy,
/// a web device paired (its secret), and a second console attached.
async fn two_consoles_and_a_phone() -> (Served, Console, String, String) {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let dir = Served::dir_with(&[("two.json", &policy(json!(2)))]);
    let web_addr = format!("127.0.0.1:{port}");
    let served = Served::console(
        dir,
        &[
            "--attach",
            "--policy",
            "{dir}/two.json",
            "--web",
            &web_addr,
            "--notify-cmd",
            "cat >> {dir}/notify.jsonl",
        ],
    );
    let code = code_on(served.sees(), None);
    let link = pair_link(&served.socket, &code);
    let secret = pair(&base, &link, "phone").await;
    let code = code_on(served.sees(), Some(&code));
    let args = strings(&["attach", "--socket", served.socket.to_str().unwrap(), "--code", &code]);
    let attached = Console::spawn_sized(None, &args, false, SIZE);
    attached.wait_for("attached");
    served.sees().wait_for("1 attached");
    (served, attached, base, secret)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_runs_after_the_console_and_a_web_device_approve_and_the_same_one_twice_counts_once() {
    let (mut served, attached, base, secret) = two_consoles_and_a_phone().await;
    let agent = served.send_json("c1.json", &batch("c1"));
    served.sees().wait_for("0 of 2 approvals");
    attached.wait_for("0 of 2 approvals");
    let first = page_with(&base, &secret, "0 of 2 approvals").await;
    let stale = first_binding(&first);
    // No rule is offered on a call two people must approve.
    let screen = served.sees().contents();
    assert!(!screen.contains("approve always"), "{screen}");
    served.screen().keys("a");
    served.sees().wait_for("approve always is not offered");

    served.screen().keys("y");
    served
        .sees()
        .wait_for("approved (1 of 2 approvals; the call waits for another answerer) by you");
    let main = served.sees().wait_for("1 of 2 approvals: human@main");
    assert!(main.contains("Approval 1 of 1"), "the call still waits:\n{main}");
    attached.wait_for("1 of 2 approvals: human@main");
    let html = page_with(&base, &secret, "1 of 2 approvals: human@main").await;
    // The notify command is told the call waits again, for whom, and where
    // the re-asked prompt opens.
    let told = notified(&served, 3);
    // The commands run side by side: the last two may end in either order.
    let mut events: Vec<&str> = told.iter().map(|e| e["event"].as_str().unwrap()).collect();
    events[1..].sort_unstable();
    assert_eq!(
        events,
        ["approval/waiting", "approval/closed", "approval/waiting"],
        "{told:#?}"
    );
    assert_eq!(told[0]["approvals_needed"], 2, "{told:#?}");
    assert_eq!(told[0]["approvers"], json!([]), "{told:#?}");
    let closed = told.iter().find(|e| e["event"] == "approval/closed").unwrap();
    assert_eq!(closed["answer"], "1 of 2 approvals", "{told:#?}");
    assert_eq!(closed["by"], "main", "{told:#?}");
    assert_eq!(closed["url"], told[0]["url"], "{told:#?}");
    let again = &told[1..].iter().find(|e| e["event"] == "approval/waiting").unwrap();
    assert_eq!(again["approvals_needed"], 2, "{told:#?}");
    assert_eq!(again["approvers"], json!(["human@main"]), "{told:#?}");
    assert_eq!(again["call_id"], "c1", "{told:#?}");
    let url = again["url"].as_str().unwrap();
    assert_ne!(url, told[0]["url"].as_str().unwrap(), "the re-asked prompt's own page");
    let id = url.rsplit('/').next().unwrap();
    assert!(
        html.contains(&format!("id=\"approval-{id}\"")),
        "{url} is not the card on the page:\n{html}"
    );

    // The console that approved, again: refused, and the call still waits.
    served.screen().keys("y");
    served.sees().wait_for("your approval is counted already");
    let main = served.sees().wait_for("1 of 2 approvals: human@main");
    assert!(main.contains("Approval 1 of 1"), "{main}");
    // The page's answer to the first prompt counts for nothing now.
    let (status, body) = post_answer(&base, Some(&secret), Some(&base), &stale, "approve").await;
    assert_eq!(status, 409, "{body}");

    let (status, body) = post_answer(&base, Some(&secret), Some(&base), &first_binding(&html), "approve").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(outcome(agent)["value"], 5);
    attached.wait_for("approved by web:phone");

    let journal = served.quit();
    let result = result(&journal, "c1");
    assert_eq!(
        result["approvers"],
        json!(["human@main", "human@web:phone"]),
        "{result}"
    );
    assert_eq!(result["approvals_needed"], 2, "{result}");
    assert_eq!(result["decided_by"], "human@web:phone", "{result}");
    let _ = attached.quit_after_serve();

    // A replay of the journal under the same rule: the two recorded
    // approvals stand (a replay has nobody to ask), and it shows both.
    let dir = Served::dir_with(&[("two.json", &policy(json!(2)))]);
    let lines: Vec<String> = journal.iter().map(Value::to_string).collect();
    let recorded = dir.path().join("journal.jsonl");
    std::fs::write(&recorded, lines.join("\n") + "\n").unwrap();
    let replay = |extra: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
            .arg("replay")
            .arg(&recorded)
            .arg("--policy")
            .arg(dir.path().join("two.json"))
            .arg("--headless")
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let table = replay(&[]);
    let row = table
        .lines()
        .find(|l| l.contains("c1"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("human@main + human@web:phone"), "{table}");
    assert!(!table.contains("CHANGED"), "{table}");
    let json: Value = serde_json::from_str(replay(&["--json"]).lines().next().unwrap()).unwrap();
    assert_eq!(json["code"], Value::Null, "{json}");
    assert_eq!(
        json["now_decided_by"], "human@main + human@web:phone (recorded answer)",
        "{json}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_by_the_second_answerer_rejects_with_its_reason() {
    let (served, mut attached, base, secret) = two_consoles_and_a_phone().await;
    let agent = served.send_json("c1.json", &batch("c1"));
    served.sees().wait_for("0 of 2 approvals");
    // The phone approves first: its banner says the call still waits.
    let html = page_with(&base, &secret, "0 of 2 approvals").await;
    let (status, body) = post_answer(&base, Some(&secret), Some(&base), &first_binding(&html), "approve").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("Approval 1 of 2 counted: poke (c1) waits for another approver"),
        "{body}"
    );
    assert!(!body.contains("Approved: poke"), "{body}");
    attached.wait_for("1 of 2 approvals: human@web:phone");
    attached.keys("n");
    attached.wait_for("Reason for the model");
    attached.keys_now("not on a Friday");
    attached.keys_now("\u{13}");
    let got = outcome(agent);
    assert_eq!(got["code"], "DENIED", "{got}");
    assert!(got.to_string().contains("not on a Friday"), "{got}");
    served.sees().wait_for("rejected (not on a Friday) by attach 2");

    let journal = served.quit();
    let result = result(&journal, "c1");
    assert_eq!(result["approvers"], json!(["human@web:phone"]), "{result}");
    assert_eq!(result["answer"], "rejected", "{result}");
    assert!(
        result["decided_by"].as_str().unwrap().starts_with("human@attach 2"),
        "{result}"
    );
    let _ = attached.quit_after_serve();
}

#[test]
fn a_scripted_approval_alone_does_not_pass_a_two_person_rule() {
    let dir = Served::dir_with(&[("two.json", &policy(json!(2)))]);
    let mut served = Served::headless(dir, &["--policy", "{dir}/two.json", "--answer", "approve"]);
    // Said at start: nobody can ever give the second approval.
    let warning = served.stderr_line("two-people");
    assert!(
        warning.contains("needs 2 approvals") && warning.contains("--answer attached") && warning.contains("--web"),
        "{warning}"
    );
    let got = outcome(served.send_json("c1.json", &batch("c1")));
    assert_eq!(got["code"], "UNAVAILABLE", "never approved: {got}");
    let message = got["value"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("needs 2 approvals") && message.contains("a scripted answer counts as one at most"),
        "{got}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escalation_already_sent_is_sent_again_with_the_prompt_the_second_person_can_answer() {
    let port = free_port();
    let dir = Served::dir_with(&[("two.json", &policy(json!(2)))]);
    let web_addr = format!("127.0.0.1:{port}");
    let mut served = Served::console(
        dir,
        &[
            "--policy",
            "{dir}/two.json",
            "--web",
            &web_addr,
            "--escalate-after",
            "500ms",
            "--escalate-cmd",
            "cat >> {dir}/escalated.jsonl",
        ],
    );
    let mut agent = served.send_json("c1.json", &batch("c1"));
    served.sees().wait_for("0 of 2 approvals");
    let first = wait_for_lines(&served.path("escalated.jsonl"), 1);
    assert_eq!(first[0]["event"], "approval/escalated", "{first:#?}");
    assert_eq!(first[0]["approvers"], json!([]), "{first:#?}");
    served.screen().keys("y");
    served.sees().wait_for("1 of 2 approvals: human@main");
    let told = wait_for_lines(&served.path("escalated.jsonl"), 2);
    assert_eq!(told[1]["event"], "approval/escalated", "{told:#?}");
    assert_eq!(told[1]["approvers"], json!(["human@main"]), "{told:#?}");
    assert_eq!(told[1]["approvals_needed"], 2, "{told:#?}");
    assert_ne!(
        told[1]["url"], told[0]["url"],
        "the re-asked prompt's own link: {told:#?}"
    );
    let _ = served.quit();
    let _ = agent.kill();
    let _ = agent.wait();
}

/// The JSON lines of `file` once there are `n`.
fn wait_for_lines(file: &Path, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let told: Vec<Value> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if told.len() >= n {
            return told;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} lines of {n}: {told:#?}",
            told.len()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_console_alone_is_told_at_start_that_a_two_person_rule_can_never_be_approved() {
    let dir = Served::dir_with(&[("two.json", &policy(json!(2)))]);
    let served = Served::console(dir, &["--policy", "{dir}/two.json"]);
    let screen = served.sees().wait_for("two-people needs 2 approvals");
    assert!(screen.contains("--attach"), "{screen}");
    let _ = served.quit();
    // With a second answerer possible, nothing is said.
    let dir = Served::dir_with(&[("two.json", &policy(json!(2)))]);
    let served = Served::console(dir, &["--attach", "--policy", "{dir}/two.json"]);
    let screen = served.sees().wait_for("attach from another terminal");
    assert!(!screen.contains("two-people needs"), "{screen}");
    let _ = served.quit();
}

fn check(dir: &Path, name: &str) -> (bool, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("check")
        .arg(dir.join(name))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), said)
}

#[test]
fn tether_check_refuses_approvals_below_one_or_above_five_where_they_are() {
    let written = |approvals: &str| {
        format!(
            "{{\"rules\": [\n  {{\"id\": \"two-people\", \"stage\": \"pre-execute\", \"match\": {{\"tool\": \"poke\"}},\n   \"action\": {{\"type\": \"ask\", \"approvals\": {approvals}}}}}]}}\n"
        )
    };
    let files = [
        ("zero.json", written("0")),
        ("six.json", written("6")),
        ("half.json", written("1.5")),
        ("two.json", written("2")),
        ("five.json", written("5")),
    ];
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let dir = Served::dir_with(&borrowed);
    for (name, value) in [("zero.json", "0"), ("six.json", "6"), ("half.json", "1.5")] {
        let (ok, said) = check(dir.path(), name);
        assert!(!ok, "{name}: {said}");
        assert!(said.contains(&format!("{name}:3:")), "file, line and column: {said}");
        assert!(
            said.contains(&format!("\"approvals\": {value} is not a number of approvers"))
                && said.contains("from 1 to 5"),
            "{said}"
        );
        assert!(!said.contains("oneOf"), "one error, in our words: {said}");
    }
    for name in ["two.json", "five.json"] {
        let (ok, said) = check(dir.path(), name);
        assert!(ok, "{name}: {said}");
    }
}
