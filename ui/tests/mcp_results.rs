//! A tool's result reaches the client as the server wrote it, whichever
//! way the gateway decides the call: hosted by the console (answered as soon
//! as the journal holds the result), over the console's socket
//! (`--no-host`), or by its own `--policy` with no console. The server, a
//! few bash builtins, writes a result with fields rmcp has no type for.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::*;

/// One `echo` tool whose result carries a vendor's field and a block's own mark.
const SERVER: &str = r#"while IFS= read -r line; do
  [[ $line =~ \"id\":(\"[^\"]*\"|[0-9]+) ]] || continue
  id=${BASH_REMATCH[1]}
  case $line in
    *'"method":"initialize"'*) echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"echo\",\"version\":\"1\"}}}" ;;
    *'"method":"tools/list"'*) echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"tools\":[{\"name\":\"echo\",\"description\":\"Echoes.\",\"inputSchema\":{\"type\":\"object\"}}]}}" ;;
    *'"method":"tools/call"'*) echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\",\"x-origin\":\"server\"}],\"x-vendor\":{\"took_ms\":3}}}" ;;
    *'"method":'*) echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{}}" ;;
  esac
done
"#;

/// The result of an `echo` call made through `via`, as a client writing
/// its own lines reads it.
fn echo_through(dir: &Path, via: &[String]) -> Value {
    let mut proxy = Command::new(&via[0])
        .args(&via[1..])
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut to_proxy = proxy.stdin.take().unwrap();
    let (lines, read) = std::sync::mpsc::channel();
    let from_proxy = BufReader::new(proxy.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in from_proxy.lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let mut answer_to = |id: u64, line: &str| -> Value {
        writeln!(to_proxy, "{line}").unwrap();
        loop {
            let line = read
                .recv_timeout(Duration::from_secs(30))
                .expect("the gateway answered");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    };
    answer_to(
        1,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    let listing = concat!(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
    );
    answer_to(2, listing);
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let answer = answer_to(3, call);
    drop(to_proxy);
    let _ = proxy.wait();
    answer["result"].clone()
}

#[test]
fn a_servers_result_reaches_the_client_as_the_server_wrote_it_however_the_call_is_decided() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let script = dir.join("server.sh");
    std::fs::write(&script, SERVER).unwrap();
    let server = ["bash".to_owned(), script.display().to_string()];
    let written = json!({
        "content": [{"type": "text", "text": "hi", "x-origin": "server"}],
        "x-vendor": {"took_ms": 3},
    });
    // The first sight of the tool is asked: this console approves it.
    let console = console(dir, "approve", &json!([]));
    let hosted = gateway(dir, &console.socket, &["--name", "echo"], &server);
    assert_eq!(echo_through(dir, &hosted), written, "hosted by the console");
    let socket = gateway(dir, &console.socket, &["--name", "echo", "--no-host"], &server);
    assert_eq!(echo_through(dir, &socket), written, "over the console's socket");
    drop(console);
    let policy = write_policy(dir, &json!([]));
    let policy = policy.display().to_string();
    let alone = gateway(
        dir,
        &dir.join("nobody.sock"),
        &["--name", "echo", "--policy", &policy],
        &server,
    );
    assert_eq!(
        echo_through(dir, &alone),
        written,
        "decided by the gateway's own policy"
    );
}
