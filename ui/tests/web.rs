//! `tether serve --web` through the real binary and plain HTTP: headless
//! with `--answer attached` a paired device answers; the notify command gets
//! the approval's link, which grants nothing without the cookie; addresses
//! other than loopback need TLS or say they are insecure; TLS sets a
//! `Secure` `__Host-` cookie.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod pty_support;
mod web_support;
use pty_support::*;
use web_support::*;

const ASK_POKE: &str = r#"{"rules": [{"id": "ask-poke", "stage": "pre-execute", "match": {"tool": "poke"}, "action": {"type": "ask", "reason": "pokes are asked"}}]}"#;

fn batch(call: &str) -> Value {
    json!({
        "session": {"session_id": "agent-1", "label": "agent1"},
        "tools": [{"name": "poke", "body": {"return": 5}}],
        "calls": [{"id": call, "name": "poke", "arguments": "{}"}],
    })
}

/// Pairs through the link's form as a browser would: the device's cookie.
async fn pair(base: &str, link: &str, name: &str, cookie_name: &str, client: &reqwest::Client) -> String {
    let token = link.rsplit('/').next().unwrap();
    let response = client
        .post(format!("{base}/pair"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("sec-fetch-site", "same-origin")
        .body(format!("token={token}&name={name}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 303);
    let cookie = response.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    if cookie_name.starts_with("__Host-") {
        assert!(cookie.contains("; Secure"), "{cookie}");
    }
    let prefix = format!("{cookie_name}=");
    assert!(cookie.starts_with(&prefix), "{cookie}");
    cookie[prefix.len()..cookie.find(';').unwrap()].to_owned()
}

fn notified(file: &std::path::Path, event: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if let Some(found) = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["event"] == event)
        {
            return found;
        }
        assert!(Instant::now() < deadline, "no {event} in {text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_a_paired_device_answers_what_waits_and_the_notification_links_to_it() {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let dir = Served::dir_with(&[("ask.json", ASK_POKE)]);
    let notify = format!("cat >> {}/notify.jsonl", dir.path().display());
    let web_addr = format!("127.0.0.1:{port}");
    let args = [
        "--policy",
        "{dir}/ask.json",
        "--answer",
        "attached",
        "--web",
        &web_addr,
        "--notify-cmd",
        &notify,
    ];
    let mut served = Served::headless(dir, &args);
    let line = served.stderr_line("pairing code");
    let code = line.split_whitespace().nth(2).unwrap().trim_end_matches(':').to_owned();
    assert!(line.contains("tether web pair"), "{line}");
    // --web alone opens no attach socket (its door only checks pairing's
    // code), and pairing still needs the code only the human reads.
    assert!(
        !tether_console::tui::remote::attach_path(&served.socket).exists(),
        "no attach socket without --attach"
    );
    let guess = if code == "000000" { "111111" } else { "000000" };
    let (status, said) = web(&served.socket, &["pair", "--code", guess]);
    assert_ne!(status, 0, "a wrong code pairs nothing: {said}");
    let line = served.stderr_line("pairing code");
    let code = line.split_whitespace().nth(2).unwrap().trim_end_matches(':').to_owned();
    let link = pair_link(&served.socket, &code);
    let http = client();

    let started = Instant::now();
    let wrong = http
        .get(format!("{base}/pair/{}", "0".repeat(64)))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 403);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "a wrong link is answered late"
    );
    let secret = pair(&base, &link, "phone", "tether_device", &http).await;

    let agent = served.send_json("c1.json", &batch("c1"));
    let waiting = notified(&served.path("notify.jsonl"), "approval/waiting");
    let url = waiting["url"].as_str().unwrap().to_owned();
    assert!(url.starts_with(&format!("{base}/approval/")), "{waiting}");
    let stranger = http.get(&url).send().await.unwrap();
    assert_eq!(stranger.status().as_u16(), 401, "the link alone grants nothing");
    let opened = http
        .get(&url)
        .header("cookie", format!("tether_device={secret}"))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status().as_u16(), 303);
    let page = http
        .get(format!("{base}/"))
        .header("cookie", format!("tether_device={secret}"))
        .send()
        .await
        .unwrap();
    let headers = page.headers().clone();
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert_eq!(headers["referrer-policy"], "no-referrer");
    let html = page.text().await.unwrap();
    assert!(
        !html.contains("<script>") && !html.contains("style="),
        "no inline script or style"
    );
    let binding = first_binding(&html);
    let (status, body) = post_answer(&base, Some(&secret), Some(&base), &binding, "approve").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(outcome(agent)["value"], 5);
    let closed = notified(&served.path("notify.jsonl"), "approval/closed");
    assert_eq!(closed["by"], "web:phone", "{closed}");
}

#[test]
fn an_address_other_than_loopback_needs_tls_or_says_it_is_insecure() {
    let tether = env!("CARGO_BIN_EXE_tether");
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("c.sock");
    let refused = std::process::Command::new(tether)
        .args([
            "serve",
            "--headless",
            "--socket",
            socket.to_str().unwrap(),
            "--web",
            "0.0.0.0:0",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stdout);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("is not a loopback address") && said.contains("--web-insecure"),
        "{said}"
    );

    let port = free_port();
    let web_url = format!("http://192.0.2.10:{port}");
    let web_addr = format!("0.0.0.0:{port}");
    let mut served = Served::headless(
        tempfile::tempdir().unwrap(),
        &["--web", &web_addr, "--web-url", &web_url, "--web-insecure"],
    );
    let line = served.stderr_line("INSECURE");
    assert!(line.contains(&web_url), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_the_cookie_is_secure_and_bound_to_the_origin() {
    let dir = Served::dir_with(&[]);
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "1",
        ])
        .args(["-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(dir.path().join("key.pem"))
        .arg("-out")
        .arg(dir.path().join("cert.pem"))
        .output()
        .expect("openssl makes the test's certificate");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let port = free_port();
    let web_addr = format!("127.0.0.1:{port}");
    let args = [
        "--web",
        &web_addr,
        "--web-tls-cert",
        "{dir}/cert.pem",
        "--web-tls-key",
        "{dir}/key.pem",
    ];
    let mut served = Served::headless(dir, &args);
    let line = served.stderr_line("pairing code");
    let code = line.split_whitespace().nth(2).unwrap().trim_end_matches(':').to_owned();
    let link = pair_link(&served.socket, &code);
    let base = format!("https://127.0.0.1:{port}");
    assert!(link.starts_with(&base), "{link}");
    provider();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .tls_danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let secret = pair(&base, &link, "laptop", "__Host-tether_device", &http).await;
    let page = http
        .get(format!("{base}/"))
        .header("cookie", format!("__Host-tether_device={secret}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().await.unwrap().contains("web:laptop"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_in_the_console_shows_a_one_time_link_and_its_qr_code() {
    let port = free_port();
    let web_addr = format!("127.0.0.1:{port}");
    let mut served = Served::console(tempfile::tempdir().unwrap(), &["--web", &web_addr]);
    // --web alone: the header's code pairs phones (`pairing code`, or
    // `code` where the header is short); no console can attach.
    let header = served.sees().wait_for("code ");
    assert!(
        !header.contains("attach code") && !header.contains("attached"),
        "{header}"
    );
    assert!(!tether_console::tui::remote::attach_path(&served.socket).exists());
    served.screen().keys("W");
    let screen = served.sees().wait_for("Pair a phone or browser");
    assert!(screen.contains('▀') || screen.contains('▄'), "a QR code:\n{screen}");
    let start = format!("http://127.0.0.1:{port}/pair/");
    let at = screen.find(&start).unwrap_or_else(|| panic!("no link:\n{screen}"));
    let link: String = screen[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || ":/.".contains(*c))
        .collect();
    assert_eq!(link.len(), start.len() + 64, "{link}");
    let opened = client().get(&link).send().await.unwrap();
    assert_eq!(opened.status().as_u16(), 200, "the link opens the pairing form");
    served.screen().keys("\u{1b}");
    served.sees().wait_gone("Pair a phone or browser");
}

/// The pairing code a headless console shows now (stderr).
fn pairing_code(served: &mut Served) -> String {
    let line = served.stderr_line("pairing code");
    line.split_whitespace().nth(2).unwrap().trim_end_matches(':').to_owned()
}

/// Sends `request`: its status, and how long its answer took.
async fn timed(request: reqwest::RequestBuilder) -> (u16, Duration) {
    let started = Instant::now();
    let response = request.send().await.unwrap();
    (response.status().as_u16(), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_wrong_secret_is_answered_late_and_the_right_ones_still_pair_and_answer() {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let web_addr = format!("127.0.0.1:{port}");
    let mut served = Served::headless(
        tempfile::tempdir().unwrap(),
        &["--answer", "attached", "--web", &web_addr],
    );
    // The pairing code `tether web pair` asks for: each wrong one draws a
    // new code and its answer waits longer than the one before.
    let mut waits = Vec::new();
    for _ in 0..2 {
        let code = pairing_code(&mut served);
        let guess = if code == "000000" { "111111" } else { "000000" };
        let started = Instant::now();
        let (status, said) = web(&served.socket, &["pair", "--code", guess]);
        waits.push(started.elapsed());
        assert_ne!(status, 0, "a wrong code pairs nothing: {said}");
        assert!(said.contains("wrong code"), "{said}");
    }
    assert!(
        waits[0] >= Duration::from_secs(1) && waits[1] >= Duration::from_secs(2),
        "wrong codes are answered late, each later: {waits:?}"
    );
    let code = pairing_code(&mut served);
    let link = pair_link(&served.socket, &code);

    // The page's secrets (a pairing link, a device's cookie) are counted
    // together: 1 s, 2 s, 4 s for the wrong ones in a row.
    let http = client();
    let (status, took) = timed(http.get(format!("{base}/pair/{}", "0".repeat(64)))).await;
    assert_eq!(status, 403);
    assert!(
        took >= Duration::from_secs(1),
        "a wrong link is answered late: {took:?}"
    );
    let forged = format!("tether_device={}", "0".repeat(64));
    let (status, took) = timed(http.get(format!("{base}/")).header("cookie", &forged)).await;
    assert_eq!(status, 401);
    assert!(
        took >= Duration::from_secs(2),
        "a wrong cookie is answered late: {took:?}"
    );
    let answer = http
        .post(format!("{base}/answer"))
        .header("cookie", &forged)
        .header("origin", &base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("b=1.x&decision=approve");
    let (status, took) = timed(answer).await;
    assert_eq!(status, 401);
    assert!(
        took >= Duration::from_secs(4),
        "an answer under a wrong cookie is answered late: {took:?}"
    );
    // No cookie at all gives no secret: answered at once (the next wrong
    // one would wait 8 s).
    let (status, took) = timed(http.get(format!("{base}/"))).await;
    assert_eq!(status, 401);
    assert!(took < Duration::from_secs(4), "{took:?}");

    // The right link still pairs, and its cookie is answered at once.
    let secret = pair(&base, &link, "phone", "tether_device", &http).await;
    let cookie = format!("tether_device={secret}");
    let (status, took) = timed(http.get(format!("{base}/")).header("cookie", &cookie)).await;
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(4), "{took:?}");
}
