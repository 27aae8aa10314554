//! A stdio gateway the console hosts (`tether mcp proxy` hands the console
//! its stdio and its server's, `mcp/host`): what the client sees when the
//! console goes away mid-session, and a console that does not host.
//! Real server (`server-filesystem`), real client (the Python `mcp` SDK),
//! real console (`tether serve --headless`); assertions on effects.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

/// Fail closed: the console served the client; once it is gone, the
/// client's next call reaches nobody (the proxy ends its server and exits,
/// and the client reads its server gone), and the file is never written.
#[test]
fn a_console_that_goes_away_ends_the_hosted_session_and_nothing_more_runs() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &ask_writes());
    let via = via_filesystem(&s, &console.socket, &["--name", "fs"]);
    let (before, after) = (s.root.join("before.txt"), s.root.join("after.txt"));
    let lines = two_writes_around(&s, &via, || drop(console)); // killed, as a crash would end it

    let ran = &seen(&lines, "first")["result"];
    assert_ne!(ran["isError"], json!(true), "the first call was approved: {ran}");
    assert_eq!(std::fs::read_to_string(&before).unwrap(), "x");
    assert!(
        lines.iter().any(|l| l["kind"] == "second_error"),
        "the client reads its server gone: {:?}",
        lines.iter().filter(|l| l["kind"] != "tools").collect::<Vec<_>>()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(!after.exists(), "nothing ran once the console was gone");
}

/// `--no-host`: the proxy serves its client itself, so its server outlives
/// the console; the calls made while the console is gone are refused, and
/// the model reads why.
#[test]
fn with_no_host_the_proxy_outlives_the_console_and_refuses_while_it_is_gone() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &ask_writes());
    let upstream = filesystem(&s.tools, &s.root);
    let via = gateway(s.dir.path(), &console.socket, &["--name", "fs", "--no-host"], &upstream);
    let (before, after) = (s.root.join("before.txt"), s.root.join("after.txt"));
    let lines = two_writes_around(&s, &via, || drop(console));

    assert_eq!(std::fs::read_to_string(&before).unwrap(), "x");
    let refused = &seen(&lines, "second")["result"];
    assert_eq!(refused["isError"], json!(true), "{refused}");
    assert!(
        text(refused).contains("went away") || text(refused).contains("not running"),
        "{refused}"
    );
    assert!(!after.exists());
}

/// A console that answers `mcp/host` with an error (one from before it):
/// the proxy serves its client itself, and asks that console as before.
#[test]
fn a_console_that_does_not_host_leaves_the_proxy_serving_its_client() {
    let Some(s) = setup() else { return };
    let socket = s.dir.path().join("old-console.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let heard = std::sync::Arc::clone(&asked);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let heard = std::sync::Arc::clone(&heard);
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { return };
                    let request: Value = serde_json::from_str(&line).unwrap_or_default();
                    let method = request["method"].as_str().unwrap_or_default().to_owned();
                    heard.lock().unwrap().push(method.clone());
                    let answer = json!({"jsonrpc": "2.0", "id": request["id"],
                        "error": {"code": -32601, "message": format!("unknown method {method:?}")}});
                    let _ = writeln!(writer, "{answer}");
                }
            });
        }
    });
    let target = s.root.join("unhosted.txt");
    let arguments = json!({"path": target, "content": "x"}).to_string();
    let via = via_filesystem(&s, &socket, &["--name", "fs"]);
    let lines = client(&s.tools, s.dir.path(), "call", &["write_file", &arguments], &via);

    let listed = &seen(&lines, "tools")["names"];
    assert!(
        listed.as_array().unwrap().iter().any(|n| n == "write_file"),
        "the proxy served the client itself: {listed}"
    );
    let result = &seen(&lines, "result")["result"];
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(!target.exists());
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.first().map(String::as_str), Some("mcp/host"), "{asked:?}");
    assert!(
        asked.iter().any(|m| m == "session/open"),
        "then asked as before: {asked:?}"
    );
}

/// A hosted proxy told to stop (SIGTERM, as clients end their servers)
/// ends the hosted session and its server, and exits.
#[test]
fn a_hosted_proxy_told_to_stop_ends_its_server_and_exits() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let mut proxy = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(s.dir.path().join("logs"))
        .args(["mcp", "proxy", "--name", "fs", "--socket"])
        .arg(&console.socket)
        .arg("--")
        .args(filesystem(&s.tools, &s.root))
        .env("XDG_STATE_HOME", s.dir.path().join("state"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    writeln!(stdin, "{initialize}").unwrap();
    let mut answer = String::new();
    BufReader::new(proxy.stdout.take().unwrap())
        .read_line(&mut answer)
        .unwrap();
    assert!(
        answer.contains("secure-filesystem-server"),
        "the server answered: {answer}"
    );
    let server = std::fs::read_to_string(format!("/proc/{}/task/{}/children", proxy.id(), proxy.id())).unwrap();
    let server: u32 = server
        .split_whitespace()
        .next()
        .expect("the proxy started its server")
        .parse()
        .unwrap();

    let killed = std::process::Command::new("kill")
        .args(["-TERM", &proxy.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = Instant::now();
    while proxy.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(15), "the proxy did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(proxy.wait().unwrap().success());
    // Its server was reaped by the proxy: nothing of it is left.
    assert!(
        !Path::new(&format!("/proc/{server}")).exists(),
        "the server ({server}) still runs"
    );
    drop(stdin);
}
