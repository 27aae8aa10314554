//! The answering page as the tests reach it: a served console with `--web`,
//! `tether web pair`, plain HTTP requests (reqwest), and a real browser
//! driven through WebDriver (Debian's chromium and chromedriver).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod webdriver;

use std::path::Path;
use std::process::Command;

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `tether web pair --code CODE`: the one-time link it printed.
pub fn pair_link(socket: &Path, code: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["web", "pair", "--socket", socket.to_str().unwrap(), "--code", code])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains('█'), "a QR code is printed: {stdout}");
    stdout
        .lines()
        .find(|l| l.starts_with("http"))
        .unwrap_or_else(|| panic!("no link in {stdout}"))
        .to_owned()
}

/// `tether web ARGS --socket …`: its exit status and stdout.
pub fn web(socket: &Path, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("web")
        .args(args)
        .args(["--socket", socket.to_str().unwrap()])
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The `b` field of the first answer form on `html`.
pub fn first_binding(html: &str) -> String {
    let at = html.find("name=\"b\" value=\"").unwrap() + "name=\"b\" value=\"".len();
    html[at..at + html[at..].find('"').unwrap()].to_owned()
}

/// reqwest is built without a crypto provider of its own (the console
/// installs ring's); the tests install the same.
pub fn provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An HTTP client that follows no redirect (a 303 is asserted as such).
pub fn client() -> reqwest::Client {
    provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// POSTs an answer form: `(status, body)`.
pub async fn post_answer(
    base: &str,
    cookie: Option<&str>,
    origin: Option<&str>,
    binding: &str,
    decision: &str,
) -> (u16, String) {
    let mut request = client()
        .post(format!("{base}/answer"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("b={binding}&decision={decision}&reason="));
    if let Some(cookie) = cookie {
        request = request.header("cookie", format!("tether_device={cookie}"));
    }
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}
