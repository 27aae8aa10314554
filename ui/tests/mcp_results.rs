//! A tool's result reaches the client as the server wrote it, whichever
//! way the gateway decides the call: hosted by the console (answered as soon
//! as the journal holds the result), over the console's socket
//! (`--no-host`), or by its own `--policy` with no console. The server, a
//! few bash builtins, writes a result with fields rmcp has no type for.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use std::path::Path;

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
    let mut client = RawClient::start(via, dir);
    client.initialize();
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let answer = client.answer_to(3, call);
    client.finish();
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
