//! The answering page in a real browser (chromium through WebDriver, at a
//! phone's 390×844): paired from a `tether web pair` link, it answers what
//! `tether send` asks, as the terminal would, and nothing it was not shown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

mod pty_support;
mod web_support;
use pty_support::*;
use web_support::webdriver::{Browser, browser_available};
use web_support::*;

const ASK_POKE: &str = r#"{"rules": [{"id": "ask-poke", "stage": "pre-execute", "match": {"tool": "poke"}, "action": {"type": "ask", "reason": "pokes are asked"}}]}"#;

/// A batch of one asked `poke` whose path holds a bidi override, an ESC and markup.
fn poke(served: &Served, call: &str) -> std::process::Child {
    served.send_json(
        &format!("{call}.json"),
        &json!({
            "session": {"session_id": "agent-1", "owner": "you", "label": "agent1"},
            "tools": [{"name": "poke", "description": "Pokes", "body": {"echo": true}}],
            "calls": [{"id": call, "name": "poke",
                       "arguments": "{\"path\": \"/tmp/\\u202etxt.exe\\u001b[2J <b>bold</b><script>alert(1)</script>\"}"}],
        }),
    )
}

/// The six-digit code in the console's header.
fn code_on(console: &Console) -> String {
    let screen = console.wait_until("an attach code", |s| s.contains("code "));
    let at = screen.find("code ").unwrap() + 5;
    screen[at..at + 6].to_owned()
}

/// What a page left open sends when its button is pressed: the form it
/// was given, posted from the page's origin with the device's cookie.
async fn submit_again(browser: &Browser, binding: &str, decision: &str) {
    browser
        .run(
            "var f = document.createElement('form'); f.method = 'post'; f.action = '/answer';
             [['b', arguments[0]], ['decision', arguments[1]]].forEach(function (p) {
               var i = document.createElement('input'); i.type = 'hidden'; i.name = p[0]; i.value = p[1]; f.appendChild(i);
             });
             document.body.appendChild(f); f.submit(); return true;",
            json!([binding, decision]),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_phone_answers_what_it_was_shown_and_nothing_else() {
    if !browser_available() {
        return;
    }
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let dir = Served::dir_with(&[("ask.json", ASK_POKE)]);
    let web_addr = format!("127.0.0.1:{port}");
    let mut served = Served::console(dir, &["--policy", "{dir}/ask.json", "--web", &web_addr]);
    let code = code_on(served.sees());
    let link = pair_link(&served.socket, &code);
    assert!(link.starts_with(&format!("{base}/pair/")), "{link}");

    // Pairing: the link asks for a name and sets the device's cookie.
    let browser = Browser::start(390, 844).await;
    browser.go(&link).await;
    let name = browser.wait_for("#name").await;
    browser.type_into(&name, "phone").await;
    browser.click(&browser.wait_for("#pair").await).await;
    browser.wait_for("#empty").await;
    assert_eq!(browser.viewport().await, (390, 844), "a phone's screen");
    let cookie: Value = browser.cookie("tether_device").await;
    assert_eq!(cookie["httpOnly"], true, "{cookie}");
    assert_eq!(cookie["sameSite"], "Strict", "{cookie}");
    let secret = cookie["value"].as_str().unwrap().to_owned();
    let reused = client().get(&link).send().await.unwrap();
    assert_eq!(reused.status().as_u16(), 403, "a link pairs once");

    // Approve: the agent gets its result; the page showed the call escaped.
    let agent = poke(&served, "c1");
    browser.wait_for("section.approval").await;
    let source = browser.source().await;
    assert!(!source.contains('\u{202e}') && !source.contains('\u{1b}'), "{source}");
    assert!(
        source.contains("/tmp/\\u{202e}txt.exe\\u001b[2J"),
        "escaped as the terminal does: {source}"
    );
    assert_eq!(
        browser
            .count("pre.args b, pre.args script, body > script:not([src])")
            .await,
        0
    );
    assert!(source.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{source}");
    for shown in [
        "1 of 1",
        "agent-1",
        "agent1",
        "pokes are asked",
        "rule ask-poke",
        "poke",
        "c1",
        "left",
    ] {
        assert!(source.contains(shown), "{shown} on the page: {source}");
    }
    std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-page.png"),
        browser.screenshot().await,
    )
    .unwrap();
    let first = first_binding(&source);
    browser.click(&browser.wait_for("button.approve").await).await;
    browser.wait_text("Approved: poke (c1)").await;
    let got = outcome(agent);
    assert_eq!(got["code"], Value::Null, "{got}");
    assert_eq!(
        got["value"]["path"],
        "/tmp/\u{202e}txt.exe\u{1b}[2J <b>bold</b><script>alert(1)</script>"
    );

    // The same answer again (a replayed POST) is refused.
    submit_again(&browser, &first, "approve").await;
    browser.wait_text("given already").await;

    // Reject with a reason: the agent reads the reason.
    let agent = poke(&served, "c2");
    browser.wait_text("call c2").await;
    let reason = browser.wait_for("textarea[name=reason]").await;
    browser.type_into(&reason, "not on Fridays").await;
    browser.click(&browser.wait_for("button.reject").await).await;
    browser.wait_text("Rejected").await;
    let got = outcome(agent);
    assert!(got.to_string().contains("not on Fridays"), "{got}");

    // A page left open after the terminal answered: refused, saying who did.
    let agent = poke(&served, "c3");
    browser.wait_text("call c3").await;
    let stale = first_binding(&browser.source().await);
    served.screen().wait_for_prompt("c3");
    served.screen().keys("y");
    assert_eq!(outcome(agent)["code"], Value::Null);
    browser.wait_for("#empty").await;
    submit_again(&browser, &stale, "reject").await;
    let refused = browser.wait_text("no longer waits").await;
    assert!(refused.contains("by main"), "{refused}");

    // From another origin, or without the cookie: refused.
    let agent = poke(&served, "c4");
    browser.wait_text("call c4").await;
    let fourth = first_binding(&browser.source().await);
    let (status, body) = post_answer(&base, Some(&secret), Some("http://evil.example"), &fourth, "approve").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("this console&#39;s own page"), "{body}");
    let (status, _) = post_answer(&base, Some(&secret), None, &fourth, "approve").await;
    assert_eq!(status, 403, "a POST that says no origin");
    let (status, body) = post_answer(&base, None, Some(&base), &fourth, "approve").await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("not paired"), "{body}");

    // Revoked: the page says so at once, and its cookie answers nothing.
    let (code, said) = web(&served.socket, &["devices"]);
    assert_eq!(code, 0);
    assert!(said.contains("phone") && said.contains("human@web:phone"), "{said}");
    let (code, said) = web(&served.socket, &["revoke", "phone"]);
    assert_eq!(code, 0, "{said}");
    browser.wait_text("not paired").await;
    let (status, _) = post_answer(&base, Some(&secret), Some(&base), &fourth, "approve").await;
    assert_eq!(status, 401, "a revoked device");
    served.screen().keys("y");
    assert_eq!(outcome(agent)["code"], Value::Null);
    drop(browser);

    let journal = served.quit();
    let by = |call: &str| result(&journal, call)["decided_by"].clone();
    assert_eq!(by("c1"), "human@web:phone");
    assert_eq!(by("c2"), "human@web:phone");
    assert_eq!(by("c3"), "human@main");
    let events: Vec<&Value> = journal
        .iter()
        .filter(|e| e["event"].as_str().is_some_and(|e| e.starts_with("web/")))
        .collect();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["event"], "web/pair");
    assert_eq!(events[1]["event"], "web/revoke");
    assert_eq!(events[1]["device"], "phone");
}
