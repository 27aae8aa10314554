//! The gateway over Streamable HTTP in the tests: `tether mcp proxy|serve
//! --http 127.0.0.1:0`, its URL and token read from what it printed, and
//! upstream HTTP servers (server-everything in its streamableHttp mode, the
//! Python bearer server) on free loopback ports. Every process is killed on drop.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process killed when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The gateway serving HTTP: where, with which token.
pub struct HttpGateway {
    pub process: Killed,
    pub url: String,
    pub token: String,
    /// Everything it printed on stderr up to the token.
    pub banner: String,
}

/// Starts `tether ARGS` (which must include `--http`) and waits for the URL and token.
pub fn http_gateway(args: &[String], env: &[(&str, &str)]) -> HttpGateway {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let process = Killed(child);
    let (mut url, mut banner) = (None, String::new());
    loop {
        let line = received
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("the gateway printed no token ({e}); it printed:\n{banner}"));
        banner.push_str(&line);
        banner.push('\n');
        if let Some(u) = line.trim().strip_prefix("url:") {
            url = Some(u.trim().to_owned());
        }
        if let Some(token) = line.trim().strip_prefix("token:") {
            let url = url.unwrap_or_else(|| panic!("no url before the token in:\n{banner}"));
            // The rest of stderr is drained so the gateway never blocks on it.
            std::thread::spawn(move || while received.recv().is_ok() {});
            return HttpGateway {
                process,
                url,
                token: token.trim().to_owned(),
                banner,
            };
        }
    }
}

/// `tether --log-dir .. mcp proxy --http 127.0.0.1:0 --socket S -- UPSTREAM..`
pub fn proxy_args(dir: &Path, socket: &Path, upstream: &[String]) -> Vec<String> {
    let mut args = vec![
        "--log-dir".to_owned(),
        dir.join("logs").display().to_string(),
        "mcp".into(),
        "proxy".into(),
        "--http".into(),
        "127.0.0.1:0".into(),
        "--socket".into(),
        socket.display().to_string(),
        "--".into(),
    ];
    args.extend(upstream.iter().cloned());
    args
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn wait_for_port(port: u16) {
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One raw HTTP/1.1 POST of an `initialize` request: the status code and the whole answer.
pub fn post_initialize(url: &str, authorization: Option<&str>) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(value) = authorization {
        request.push_str(&format!("Authorization: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    // The first lines are enough: an SSE answer stays open.
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if answer.windows(4).any(|w| w == b"\r\n\r\n") && !answer.starts_with(b"HTTP/1.1 200") {
            break;
        }
        if answer.starts_with(b"HTTP/1.1 200") && String::from_utf8_lossy(&answer).contains("\"result\"") {
            break;
        }
    }
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"));
    (status, answer)
}

/// Runs `client.py SCENARIO ARGS -- URL` with `token` as the bearer: what it
/// printed, or (when it failed) its stderr.
pub fn http_client(
    python: &Path,
    scenario: &str,
    args: &[&str],
    url: &str,
    token: Option<&str>,
) -> Result<Vec<serde_json::Value>, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut command = Command::new(python);
    command.arg(script).arg(scenario).args(args).arg("--").arg(url);
    match token {
        Some(token) => command.env("MCP_BEARER", token),
        None => command.env_remove("MCP_BEARER"),
    };
    let output = command.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "{}\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
}

/// The processes whose parent is `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces, so read after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if ppid.and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            found.extend(entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()));
        }
    }
    found
}
