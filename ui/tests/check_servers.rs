//! `tether check` on MCP server lists: every error at its line and column,
//! an unset variable said to be the environment's fault, and a list checked
//! with a scenario and a policy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check_support;

use check_support::*;

const SERVERS: &str = r#"{"mcpServers": {
  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "cwd": "work"},
  "web": {"type": "http", "url": "https://example.com/mcp",
          "headers": {"Authorization": "Bearer ${TETHER_TEST_TOKEN}", "X-Team": "${TETHER_TEST_UNSET:-core}"}}
}}"#;

#[test]
fn a_good_mcp_server_list_passes_and_says_what_it_is() {
    let (code, out) = check_with_env("servers.json", SERVERS, &[("TETHER_TEST_TOKEN", "s3cret")]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "servers.json: ok (MCP server list: 2 servers, 1 on stdio, 1 over HTTP)\n"
        )
    );
    assert!(!out.contains("s3cret"), "header values stay secret: {out}");
}

#[test]
fn an_unset_variable_in_a_server_list_is_an_error_that_says_the_file_is_not_at_fault() {
    let (code, out) = check_with_env("servers.json", SERVERS, &[]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with("servers.json:4:23: the environment variable TETHER_TEST_TOKEN is not set"),
        "{out}"
    );
    assert!(
        lines[0].contains("tether mcp serve") && lines[0].contains("well-formed"),
        "{out}"
    );
}

#[test]
fn a_bad_mcp_server_list_gets_every_error_at_its_line_and_column_in_one_run() {
    // Shape errors (an unknown field, an args that is not a list) and the
    // checks after the shape (a name with "__", a bad URL, a reserved header,
    // an unset variable, command and url together) all in one run, in order.
    let servers = "{\"mcpServers\": {\n  \"a\": {\"url\": \"ftp://x/\"},\n  \"b__c\": {\"command\": \"x\"},\n  \"d\": {\"command\": \"x\", \"colour\": 1},\n  \"e\": {\"url\": \"http://x/\", \"headers\": {\"X-Key\": \"${TETHER_TEST_UNSET}\"}},\n  \"f\": {\"command\": \"x\", \"args\": \"-v\"},\n  \"g\": {\"url\": \"http://x/\", \"headers\": {\"Mcp-Session-Id\": \"1\"}},\n  \"h\": {\"url\": \"http://x/\", \"command\": \"y\"}\n}}";
    let (code, out) = check_with_env("servers.json", servers, &[]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let expected = [
        "servers.json:2:9: expected an http:// or https:// URL with a host",
        "servers.json:3:3: server name \"b__c\": use letters, digits, '-' and '_', and no \"__\"",
        "servers.json:4:25: unknown field \"colour\"; expected one of:",
        "servers.json:5:41: the environment variable TETHER_TEST_UNSET is not set",
        "servers.json:6:25: \"-v\" is not of type \"array\"",
        "servers.json:7:41: \"Mcp-Session-Id\" is set by the Streamable HTTP transport itself",
        "servers.json:8:9: a server has a \"command\" (stdio) or a \"url\" (Streamable HTTP), not both",
    ];
    assert_eq!(lines.len(), expected.len(), "{out}");
    for (line, expected) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(expected),
            "{line:?} does not start with {expected:?}\n{out}"
        );
    }
}

#[test]
fn a_server_list_checked_with_a_scenario_and_a_policy_is_reported_with_them() {
    let policy = r#"{"rules": [{"id": "r", "stage": "guard", "action": {"type": "veto", "reason": "no"}}]}"#;
    let servers = r#"{"mcpServers": {"fs": {"command": "npx"}}}"#;
    let (code, out) = check_together(&[("s.json", SCENARIO_HEAD), ("servers.json", servers), ("p.json", policy)]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "s.json: ok (scenario: 1 scope, 1 tool, 1 batch, 1 call)\n\
         servers.json: ok (MCP server list: 1 server, 1 on stdio, 0 over HTTP)\n\
         p.json: ok (policy: 1 rule)\n"
    );
    let broken = r#"{"mcpServers": {"fs": {}}}"#;
    let (code, out) = check_together(&[("servers.json", broken), ("p.json", policy)]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "servers.json:1:17: a server needs a \"command\" (stdio) or a \"url\" (Streamable HTTP)\n\
         p.json: ok (policy: 1 rule)\n"
    );
}

#[test]
fn a_misspelt_server_field_is_reported_once_not_also_as_a_missing_command() {
    let (code, out) = check_with_env(
        "servers.json",
        "{\"mcpServers\": {\n  \"typo\": {\"comand\": \"x\"}\n}}",
        &[],
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("servers.json:2:12: unknown field \"comand\""), "{out}");
}
