//! What the MCP gateway tests share: the real servers and client from
//! `$TETHER_CI_CACHE`, a headless console, the gateway's command line.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[derive(Clone)]
pub struct Tools {
    pub python: PathBuf,
    pub bin: PathBuf,
}

pub fn tools() -> Option<Tools> {
    let cache = std::env::var_os("TETHER_CI_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tether-ci"),
        PathBuf::from,
    );
    let tools = Tools {
        python: cache.join("venv/bin/python"),
        bin: cache.join("npm/node_modules/.bin"),
    };
    let missing: Vec<PathBuf> = [
        tools.python.clone(),
        tools.bin.join("mcp-server-filesystem"),
        tools.bin.join("mcp-server-everything"),
    ]
    .into_iter()
    .filter(|p| !p.exists())
    .collect();
    if missing.is_empty() {
        return Some(tools);
    }
    let message = format!("MCP test tools missing ({missing:?}); run `bash .ci/run` or set TETHER_CI_CACHE");
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}

/// `tether serve --headless` on a socket of its own, killed on drop.
pub struct Console {
    child: Child,
    pub socket: PathBuf,
    pub journal: PathBuf,
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Console {
    pub fn journal(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.journal)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

pub fn write_policy(dir: &Path, rules: &Value) -> PathBuf {
    let path = dir.join("policy.json");
    // Calls no rule decides run, so each test sees only its own rules' work.
    std::fs::write(&path, json!({ "default": "allow", "rules": rules }).to_string()).unwrap();
    path
}

/// Writes are asked; everything else is allowed.
pub fn ask_writes() -> Value {
    json!([{"id": "writes-are-asked", "stage": "pre-execute", "match": {"tool": "write_*"},
            "action": {"type": "ask", "reason": "the agent wants to change a file"}}])
}

pub fn console(dir: &Path, answer: &str, rules: &Value) -> Console {
    let policy = write_policy(dir, rules);
    console_with(dir, answer, Some(&policy))
}

/// `tether serve --headless` answering every question with `answer`, with
/// the policy file given (or none: only the implicit rules).
pub fn console_with(dir: &Path, answer: &str, policy: Option<&Path>) -> Console {
    let socket = dir.join("console.sock");
    let journal = dir.join("journal.jsonl");
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    command
        .args(["serve", "--headless", "--answer", answer, "--socket"])
        .arg(&socket);
    if let Some(policy) = policy {
        command.arg("--policy").arg(policy);
    }
    let child = command
        .arg("--journal")
        .arg(&journal)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !socket.exists() {
        assert!(started.elapsed() < Duration::from_secs(10), "the console did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Console { child, socket, journal }
}

/// Runs `client.py SCENARIO ARGS -- SERVER...` and returns what it printed.
pub fn client(tools: &Tools, dir: &Path, scenario: &str, args: &[&str], server: &[String]) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let output = Command::new(&tools.python)
        .arg(script)
        .arg(scenario)
        .args(args)
        .arg("--")
        .args(server)
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client failed: {}\nstdout: {stdout}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The gateway's command line in front of `upstream`.
pub fn gateway(dir: &Path, socket: &Path, extra: &[&str], upstream: &[String]) -> Vec<String> {
    let mut command = vec![
        env!("CARGO_BIN_EXE_tether").to_owned(),
        "--log-dir".into(),
        dir.join("logs").display().to_string(),
        "mcp".into(),
        "proxy".into(),
        "--socket".into(),
        socket.display().to_string(),
    ];
    command.extend(extra.iter().map(|s| (*s).to_owned()));
    command.push("--".into());
    command.extend(upstream.iter().cloned());
    command
}

/// `tether mcp serve --config` (stdio to its client) with `servers`
/// as its config file.
pub fn serve_gateway(dir: &Path, socket: &Path, servers: &Value) -> Vec<String> {
    let config = dir.join("servers.json");
    std::fs::write(&config, serde_json::to_string_pretty(servers).unwrap()).unwrap();
    vec![
        env!("CARGO_BIN_EXE_tether").to_owned(),
        "--log-dir".into(),
        dir.join("logs").display().to_string(),
        "mcp".into(),
        "serve".into(),
        "--config".into(),
        config.display().to_string(),
        "--socket".into(),
        socket.display().to_string(),
    ]
}

pub fn filesystem(tools: &Tools, root: &Path) -> Vec<String> {
    vec![
        tools.bin.join("mcp-server-filesystem").display().to_string(),
        root.display().to_string(),
    ]
}

pub fn seen<'a>(lines: &'a [Value], kind: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {lines:?}"))
}

pub fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

pub struct Setup {
    pub tools: Tools,
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
}

pub fn setup() -> Option<Setup> {
    let tools = tools()?;
    let dir = tempfile::tempdir().unwrap();
    // The filesystem server resolves symlinks; keep the root canonical.
    let root = dir.path().canonicalize().unwrap().join("files");
    std::fs::create_dir_all(&root).unwrap();
    Some(Setup { tools, dir, root })
}

/// The scripted upstream (`tests/mcp/upstream.py`), marking what it saw in `marks`.
pub fn scripted(tools: &Tools) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/upstream.py");
    vec![tools.python.display().to_string(), script.display().to_string()]
}

/// A gateway with `extra` arguments in front of the filesystem server on
/// the setup's root, joined to the console at `socket`.
pub fn via_filesystem(s: &Setup, socket: &Path, extra: &[&str]) -> Vec<String> {
    gateway(s.dir.path(), socket, extra, &filesystem(&s.tools, &s.root))
}

/// `server-everything`, and a gateway named `everything` in front of it
/// joined to the console at `socket`.
pub fn everything(s: &Setup, socket: &Path) -> (Vec<String>, Vec<String>) {
    let up = vec![s.tools.bin.join("mcp-server-everything").display().to_string()];
    let via = gateway(s.dir.path(), socket, &["--name", "everything"], &up);
    (up, via)
}

/// A gateway named `scripted` in front of the scripted server, joined to
/// the console at `socket`.
pub fn via_scripted(s: &Setup, socket: &Path) -> Vec<String> {
    gateway(s.dir.path(), socket, &["--name", "scripted"], &scripted(&s.tools))
}

/// The rug-pull scenario of `client.py` through a gateway named `scripted`
/// in front of the scripted server, joined to the console at `socket`: the
/// client lists, the server changes `echo`'s definition, the client calls it.
pub fn rugpull(s: &Setup, socket: &Path) -> Vec<Value> {
    let via = via_scripted(s, socket);
    let tether = env!("CARGO_BIN_EXE_tether");
    client_env(&s.tools, s.dir.path(), "rugpull", &[tether, "scripted"], &via)
}

pub fn client_env(tools: &Tools, dir: &Path, scenario: &str, args: &[&str], server: &[String]) -> Vec<Value> {
    // The scripted upstream learns where to mark from MARK_DIR, which the
    // client's SDK does not pass on: the gateway is started through `env`.
    let mut command = vec!["/usr/bin/env".to_owned(), format!("MARK_DIR={}", dir.display())];
    command.extend(server.iter().cloned());
    client(tools, dir, scenario, args, &command)
}

/// Two `write_file` calls through `via` by one client session: `before.txt`
/// (`x`), then `between` runs, then `after.txt` (`y`). What the client
/// printed (`first`, then `second` or `second_error`).
#[allow(dead_code)] // not every test binary that includes this uses it
pub fn two_writes_around(s: &Setup, via: &[String], between: impl FnOnce()) -> Vec<Value> {
    let first = json!({"path": s.root.join("before.txt"), "content": "x"}).to_string();
    let second = json!({"path": s.root.join("after.txt"), "content": "y"}).to_string();
    let (dir, tools, via) = (s.dir.path().to_owned(), s.tools.clone(), via.to_vec());
    let client = std::thread::spawn(move || {
        let marks = dir.display().to_string();
        client(
            &tools,
            &dir,
            "call_until_go",
            &["write_file", &first, &second, &marks],
            &via,
        )
    });
    let done = s.dir.path().join("first-done");
    let started = Instant::now();
    while !done.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first call never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    between();
    std::fs::write(s.dir.path().join("go"), "").unwrap();
    client.join().unwrap()
}

/// A client writing its own lines to the gateway at `via` (the SDKs all
/// write compact JSON) and reading its answers; the proxy is killed on drop.
pub struct RawClient {
    proxy: Child,
    to_proxy: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl RawClient {
    pub fn start(via: &[String], dir: &Path) -> Self {
        use std::io::{BufRead as _, BufReader};

        let mut proxy = Command::new(&via[0])
            .args(&via[1..])
            .env("XDG_STATE_HOME", dir.join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let to_proxy = proxy.stdin.take();
        let (sent, lines) = std::sync::mpsc::channel();
        let from_proxy = BufReader::new(proxy.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in from_proxy.lines().map_while(Result::ok) {
                if sent.send(line).is_err() {
                    return;
                }
            }
        });
        Self { proxy, to_proxy, lines }
    }

    /// Writes `line` (one message, or several on lines of their own) and
    /// returns the answer to `id`.
    pub fn answer_to(&mut self, id: u64, line: &str) -> Value {
        use std::io::Write as _;

        writeln!(self.to_proxy.as_mut().unwrap(), "{line}").unwrap();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("the gateway answered");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `initialize`, `initialized` and a tool listing (answered once the
    /// session is initialized), with ids 1 and 2.
    pub fn initialize(&mut self) {
        self.answer_to(
            1,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        );
        let listing = concat!(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
        );
        self.answer_to(2, listing);
    }

    /// Closes the gateway's stdin and waits for it to exit.
    pub fn finish(mut self) {
        drop(self.to_proxy.take());
        let _ = self.proxy.wait();
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.proxy.kill();
        let _ = self.proxy.wait();
    }
}

/// A pin's name for `definition`: `sha256:` and the hex digest of its JSON.
pub fn sha256(definition: &Value) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(definition.to_string().as_bytes());
    format!(
        "sha256:{}",
        digest.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// With every question rejected (a tool whose pin is not honoured is
/// denied): `echo` through the scripted gateway, so it is pinned; each pin
/// of the file then rewritten by `older`, as an older gateway wrote it;
/// `echo` again, which runs — the old pin honoured. The pin file after.
pub fn an_old_pin_honoured(s: &Setup, older: impl Fn(&mut Value)) -> Value {
    let console = console(s.dir.path(), "reject", &json!([]));
    let via = via_scripted(s, &console.socket);
    client_env(&s.tools, s.dir.path(), "call", &["echo", r#"{"text": "first"}"#], &via);
    let path = s.dir.path().join("state/tether/mcp-pins/scripted.json");
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for pin in file["tools"].as_object_mut().unwrap().values_mut() {
        older(pin);
    }
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let lines = client_env(&s.tools, s.dir.path(), "call", &["echo", r#"{"text": "second"}"#], &via);
    assert_eq!(
        text(&seen(&lines, "result")["result"]),
        "second",
        "the old pin is honoured"
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}
