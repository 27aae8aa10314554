//! A small W3C WebDriver client over reqwest: what the browser tests need
//! of chromedriver (a session, navigation, elements, clicks, typing, the
//! page source, a cookie, a script, a screenshot). chromium runs headless at
//! a phone's size with the flags it needs on a machine without a network.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Whether the browser tests can run here: they must in CI (CI=true), and
/// skip with a message elsewhere when chromium is missing.
pub fn browser_available() -> bool {
    let present = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !present {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: the browser tests need {CHROMIUM} and {CHROMEDRIVER} (apt-get install chromium chromium-driver)"
        );
        eprintln!("skipped: {CHROMIUM} or {CHROMEDRIVER} is missing (apt-get install chromium chromium-driver)");
    }
    present
}

/// chromedriver and one browser session, ended when dropped.
pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    client: reqwest::Client,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = std::process::Command::new("curl")
            .args(["-s", "-X", "DELETE", &format!("{}/session/{}", self.base, self.session)])
            .stdout(Stdio::null())
            .status();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    /// A headless chromium at `width` × `height`, through a chromedriver of its own.
    pub async fn start(width: u32, height: u32) -> Browser {
        let port = super::free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let base = format!("http://127.0.0.1:{port}");
        super::provider();
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(response) = client.get(format!("{base}/status")).send().await {
                if response.status().is_success() {
                    break;
                }
            }
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([
            format!("--user-data-dir={}", profile.path().display()),
            format!("--window-size={width},{height}"),
        ])
        .collect::<Vec<_>>();
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args, "mobileEmulation": {
                "deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0, "touch": true},
            }},
        }}});
        let created: Value = client
            .post(format!("{base}/session"))
            .json(&capabilities)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        let browser = Browser {
            driver,
            base,
            session,
            client,
            _profile: profile,
        };
        browser
            .command("POST", "window/rect", json!({"width": width, "height": height}))
            .await;
        browser
    }

    async fn command(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}/session/{}/{path}", self.base, self.session);
        let request = match method {
            "GET" => self.client.get(url),
            _ => self.client.post(url).json(&body),
        };
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        answer["value"].clone()
    }

    pub async fn go(&self, url: &str) {
        self.command("POST", "url", json!({"url": url})).await;
    }

    pub async fn source(&self) -> String {
        self.command("GET", "source", Value::Null)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub async fn url(&self) -> String {
        self.command("GET", "url", Value::Null)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The first element `css` selects, if any.
    pub async fn find(&self, css: &str) -> Option<String> {
        let found = self
            .command("POST", "element", json!({"using": "css selector", "value": css}))
            .await;
        found[ELEMENT].as_str().map(str::to_owned)
    }

    /// How many elements `css` selects.
    pub async fn count(&self, css: &str) -> usize {
        let found = self
            .command("POST", "elements", json!({"using": "css selector", "value": css}))
            .await;
        found.as_array().map_or(0, Vec::len)
    }

    /// The element `css` selects, once there is one (the page updates live).
    pub async fn wait_for(&self, css: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(element) = self.find(css).await {
                return element;
            }
            assert!(
                Instant::now() < deadline,
                "nothing matched {css} on:\n{}",
                self.source().await
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the page's source holds `text`.
    pub async fn wait_text(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let source = self.source().await;
            if source.contains(text) {
                return source;
            }
            assert!(Instant::now() < deadline, "no {text:?} on:\n{source}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn text(&self, element: &str) -> String {
        let text = self
            .command("GET", &format!("element/{element}/text"), Value::Null)
            .await;
        text.as_str().unwrap_or_default().to_owned()
    }

    pub async fn click(&self, element: &str) {
        self.command("POST", &format!("element/{element}/click"), json!({}))
            .await;
    }

    pub async fn type_into(&self, element: &str, text: &str) {
        self.command("POST", &format!("element/{element}/value"), json!({"text": text}))
            .await;
    }

    /// The value of the cookie `name`, and whether it is HttpOnly and its SameSite.
    pub async fn cookie(&self, name: &str) -> Value {
        self.command("GET", &format!("cookie/{name}"), Value::Null).await
    }

    /// Runs `script` in the page (WebDriver's own channel, which the page's
    /// CSP does not govern): what a stale or replayed page would send.
    pub async fn run(&self, script: &str, args: Value) -> Value {
        self.command("POST", "execute/sync", json!({"script": script, "args": args}))
            .await
    }

    /// The window's inner size, as the page sees it.
    pub async fn viewport(&self) -> (u64, u64) {
        let size = self
            .run("return [window.innerWidth, window.innerHeight];", json!([]))
            .await;
        (size[0].as_u64().unwrap_or(0), size[1].as_u64().unwrap_or(0))
    }

    /// A PNG of the window.
    pub async fn screenshot(&self) -> Vec<u8> {
        let encoded = self.command("GET", "screenshot", Value::Null).await;
        base64(encoded.as_str().unwrap_or_default())
    }
}

/// Standard base64 (the screenshot WebDriver returns).
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0_u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}
