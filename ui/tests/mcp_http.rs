//! The gateway over Streamable HTTP: `tether mcp proxy|serve --http` serves
//! MCP clients (the Python SDK's streamable HTTP client) on loopback only,
//! behind a bearer token printed at start, each client session its own agent
//! session in the console; and `"url"` upstreams in `mcp serve --config`
//! (server-everything in its streamableHttp mode, a Python server that wants
//! a bearer token) reached as a Streamable HTTP client.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

#[path = "mcp/http_support.rs"]
mod http_support;

use std::path::Path;
use std::process::{Command, Stdio};

use http_support::*;
use serde_json::json;
use support::*;

#[test]
fn http_clients_list_and_call_through_the_console_each_in_its_own_session() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &ask_writes());
    let gateway = http_gateway(
        &proxy_args(s.dir.path(), &console.socket, &filesystem(&s.tools, &s.root)),
        &[("XDG_STATE_HOME", &s.dir.path().join("state").display().to_string())],
    );
    assert!(gateway.url.starts_with("http://127.0.0.1:"), "{}", gateway.banner);
    assert!(gateway.url.ends_with("/mcp"), "{}", gateway.banner);
    assert_eq!(gateway.token.len(), 64, "{}", gateway.banner);

    let direct = client(&s.tools, s.dir.path(), "ping", &[], &filesystem(&s.tools, &s.root));
    let mut sessions = Vec::new();
    for name in ["first.txt", "second.txt"] {
        let target = s.root.join(name);
        let arguments = json!({"path": target, "content": name}).to_string();
        let lines = http_client(
            &s.tools.python,
            "call",
            &["write_file", &arguments],
            &gateway.url,
            Some(&gateway.token),
        )
        .unwrap();
        assert_eq!(seen(&lines, "tools")["names"], seen(&direct, "tools")["names"]);
        let result = &seen(&lines, "result")["result"];
        assert_eq!(result["isError"], json!(false), "{result}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), name);
        let journal = console.journal();
        let call = journal
            .iter()
            .rev()
            .find(|l| l["event"] == "tool/call" && l["arguments"].to_string().contains(name))
            .unwrap_or_else(|| panic!("{journal:?}"));
        let label = call["scope"]["label"].as_str().unwrap_or_default();
        assert!(
            label.starts_with("mcp-server-filesystem-"),
            "the server's scope, named after its command line: {label}"
        );
        sessions.push(call["scope"]["session_id"].clone());
    }
    assert!(
        sessions
            .iter()
            .all(|s| s.as_str().is_some_and(|s| s.starts_with("mcp-"))),
        "{sessions:?}"
    );
    assert_ne!(
        sessions[0], sessions[1],
        "each HTTP client session is its own agent session"
    );

    // A session that ended took its gateway and its upstream process with it.
    let started = std::time::Instant::now();
    while !children(gateway.process.0.id()).is_empty() {
        let left = children(gateway.process.0.id());
        assert!(started.elapsed().as_secs() < 10, "upstreams left running: {left:?}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_request_without_the_token_or_with_a_wrong_one_is_refused() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let gateway = http_gateway(
        &proxy_args(s.dir.path(), &console.socket, &filesystem(&s.tools, &s.root)),
        &[("XDG_STATE_HOME", &s.dir.path().join("state").display().to_string())],
    );
    let (status, answer) = post_initialize(&gateway.url, None);
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("www-authenticate: bearer"),
        "{answer}"
    );
    let (status, answer) = post_initialize(&gateway.url, Some("Bearer not-the-token"));
    assert_eq!(status, 401, "{answer}");
    let (status, answer) = post_initialize(&gateway.url, Some(&format!("Basic {}", gateway.token)));
    assert_eq!(status, 401, "{answer}");
    let (status, answer) = post_initialize(&gateway.url, Some(&format!("Bearer {}", gateway.token)));
    assert_eq!(status, 200, "{answer}");

    for token in [None, Some("wrong")] {
        let refused = http_client(&s.tools.python, "ping", &[], &gateway.url, token).unwrap_err();
        // The SDK reports the 401 as an error response to `initialize`.
        assert!(refused.contains("initialize"), "{token:?}: {refused}");
    }
    let lines = http_client(&s.tools.python, "ping", &[], &gateway.url, Some(&gateway.token)).unwrap();
    seen(&lines, "pong");
}

#[test]
fn a_non_loopback_address_is_refused() {
    for address in ["0.0.0.0:0", "[::]:0"] {
        let output = Command::new(env!("CARGO_BIN_EXE_tether"))
            .args(["mcp", "proxy", "--http", address, "--", "true"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{address}: {stderr}");
        assert!(stderr.contains("loopback address only"), "{address}: {stderr}");
        assert!(
            !stderr.contains("token:"),
            "no token is made for an address that is refused"
        );
    }
}

/// server-everything in its Streamable HTTP mode on a free port.
fn everything_over_http(s: &Setup) -> (Killed, String) {
    let port = free_port();
    let child = Command::new(s.tools.bin.join("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let process = Killed(child);
    wait_for_port(port);
    (process, format!("http://127.0.0.1:{port}/mcp"))
}

/// The Python server that wants `Authorization: Bearer TOKEN`.
fn bearer_server(s: &Setup, token: &str) -> (Killed, String) {
    bearer_server_at(s, token, None)
}

/// The same, over https when `tls` is a directory (its CA's certificate is written there as `ca.pem`).
fn bearer_server_at(s: &Setup, token: &str, tls: Option<&Path>) -> (Killed, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/bearer_server.py");
    let mut command = Command::new(&s.tools.python);
    if let Some(dir) = tls {
        command.env("TLS_DIR", dir);
    }
    let mut child = command
        .arg(script)
        .env("BEARER_TOKEN", token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    let port: u16 = line.trim().strip_prefix("port ").unwrap().parse().unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    (Killed(child), format!("{scheme}://127.0.0.1:{port}/mcp"))
}

#[test]
fn url_upstreams_are_reached_over_streamable_http_with_their_headers() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let (_everything, everything_url) = everything_over_http(&s);
    let (_bearer, bearer_url) = bearer_server(&s, "upstream-secret");
    let servers = json!({"mcpServers": {
        "everything": {"type": "http", "url": everything_url},
        "guarded": {"url": bearer_url, "headers": {
            "Authorization": "Bearer ${TETHER_TEST_BEARER}",
            "X-Tenant": "${TETHER_TEST_TENANT:-acme}",
        }},
    }});
    let via = serve_gateway(s.dir.path(), &console.socket, &servers);
    // client.py hands the gateway the TETHER_* variables only.
    let via: Vec<String> = [
        "/usr/bin/env".to_owned(),
        "TETHER_TEST_BEARER=upstream-secret".to_owned(),
    ]
    .into_iter()
    .chain(via)
    .collect();
    let echo = r#"{"message": "over http"}"#;
    let through = client(&s.tools, s.dir.path(), "call", &["everything__echo", echo], &via);
    let stdio_everything = vec![s.tools.bin.join("mcp-server-everything").display().to_string()];
    let direct = client(&s.tools, s.dir.path(), "call", &["echo", echo], &stdio_everything);
    assert_eq!(seen(&through, "result"), seen(&direct, "result"));
    let names = seen(&through, "tools")["names"].as_array().unwrap().clone();
    assert!(names.contains(&json!("guarded__whoami")), "{names:?}");
    assert!(
        names.contains(&json!("everything__get-structured-content")),
        "{names:?}"
    );

    let guarded = client(&s.tools, s.dir.path(), "call", &["guarded__whoami", "{}"], &via);
    let result = &seen(&guarded, "result")["result"];
    assert_eq!(support::text(result), "authorized; x-tenant=acme", "{result}");
    let journal = console.journal();
    for (server, tool) in [("everything", "echo"), ("guarded", "whoami")] {
        assert!(
            journal
                .iter()
                .any(|l| l["event"] == "tool/call" && l["name"] == tool && l["scope"]["label"] == server),
            "{server}/{tool} not in {journal:?}"
        );
    }
}

#[test]
fn a_url_upstream_that_refuses_the_token_fails_the_gateway_with_the_reason() {
    let Some(s) = setup() else { return };
    let (_bearer, bearer_url) = bearer_server(&s, "upstream-secret");
    let servers = json!({"mcpServers": {"guarded": {"url": bearer_url, "headers": {"Authorization": "Bearer wrong"}}}});
    let config = s.dir.path().join("servers.json");
    std::fs::write(&config, servers.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let output = Command::new(&s.tools.python)
        .arg(script)
        .args(["ping", "--", env!("CARGO_BIN_EXE_tether"), "--log-dir"])
        .arg(s.dir.path().join("logs"))
        .args(["mcp", "serve", "--config"])
        .arg(&config)
        .env("XDG_STATE_HOME", s.dir.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(r#"the MCP server "guarded" did not initialize"#),
        "{stderr}"
    );
    assert!(stderr.contains("Auth required"), "the upstream's 401: {stderr}");
}

#[test]
fn an_https_upstream_is_trusted_through_the_system_roots_only() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let tls = s.dir.path().join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let (_server, url) = bearer_server_at(&s, "upstream-secret", Some(&tls));
    assert!(url.starts_with("https://"), "{url}");
    let servers = json!({"mcpServers": {"tls": {"url": url, "headers": {"Authorization": "Bearer upstream-secret"}}}});
    let via = serve_gateway(s.dir.path(), &console.socket, &servers);

    // The test CA as the system's roots (rustls-native-certs reads SSL_CERT_FILE).
    let trusted: Vec<String> = [
        "/usr/bin/env".to_owned(),
        format!("SSL_CERT_FILE={}", tls.join("ca.pem").display()),
    ]
    .into_iter()
    .chain(via.iter().cloned())
    .collect();
    let lines = client(&s.tools, s.dir.path(), "call", &["tls__whoami", "{}"], &trusted);
    let result = &seen(&lines, "result")["result"];
    assert_eq!(support::text(result), "authorized; x-tenant=None", "{result}");

    // Not among the roots: the handshake fails, nothing is called.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let output = Command::new(&s.tools.python)
        .arg(script)
        .args(["ping", "--"])
        .args(&via)
        .env("XDG_STATE_HOME", s.dir.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(r#"the MCP server "tls" did not initialize"#),
        "{stderr}"
    );
    // Why: the certificate's issuer is not among the roots. The verifier
    // logs it as the handshake fails (`invalid peer certificate:
    // UnknownIssuer`); the transport's own error line
    // (`InvalidCertificate(UnknownIssuer)`) is logged later, by a task that
    // can still be running when the gateway exits, and once in a CI run it
    // had not reached the file.
    let log = std::fs::read_to_string(s.dir.path().join("logs/tether.log")).unwrap_or_default();
    assert!(log.contains("UnknownIssuer"), "{log}");
}

#[test]
fn a_client_that_probes_server_discover_falls_back_to_a_session_and_sees_every_tool() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let everything = vec![s.tools.bin.join("mcp-server-everything").display().to_string()];
    let gateway = http_gateway(
        &proxy_args(s.dir.path(), &console.socket, &everything),
        &[("XDG_STATE_HOME", &s.dir.path().join("state").display().to_string())],
    );
    // Without `initialize` the gateway has no upstreams: it must not offer
    // the stateless 2026-07-28 lifecycle, so the client opens a session.
    let echo = r#"{"message": "discovered"}"#;
    let lines = http_client(
        &s.tools.python,
        "auto",
        &["echo", echo],
        &gateway.url,
        Some(&gateway.token),
    )
    .unwrap();
    let negotiated = seen(&lines, "negotiated")["protocol_version"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(negotiated.as_str() < "2026-07-28", "{negotiated}");
    let direct = client(&s.tools, s.dir.path(), "ping", &[], &everything);
    assert_eq!(seen(&lines, "tools")["names"], seen(&direct, "tools")["names"]);
    let result = &seen(&lines, "result")["result"];
    assert!(support::text(result).contains("discovered"), "{result}");
}
