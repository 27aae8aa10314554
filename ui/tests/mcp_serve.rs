//! `tether mcp serve --config FILE`: one gateway in front of two real
//! servers (`server-everything` and `server-filesystem`), each its own scope
//! in the console, their tools listed as `<server>__<tool>`; and a config
//! file's errors reported at their file, line and column.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use std::process::Command;

use serde_json::{Value, json};
use support::*;

fn two_servers(s: &Setup) -> Value {
    json!({"mcpServers": {
        "everything": {"command": s.tools.bin.join("mcp-server-everything"), "env": {"TETHER_MARK": "from-the-config"}},
        // "." is the filesystem server's allowed directory: its cwd, "files" next to the config.
        "fs": {"command": s.tools.bin.join("mcp-server-filesystem"), "args": ["."], "cwd": "files"},
    }})
}

#[test]
fn two_servers_behind_one_gateway_each_in_its_own_scope_with_prefixed_names() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &ask_writes());
    let via = serve_gateway(s.dir.path(), &console.socket, &two_servers(&s));
    let target = s.root.join("through-serve.txt");
    let arguments = json!({"path": target, "content": "both"}).to_string();
    let lines = client(&s.tools, s.dir.path(), "call", &["fs__write_file", &arguments], &via);

    // Every tool of both servers, each under its server's prefix.
    let everything = vec![s.tools.bin.join("mcp-server-everything").display().to_string()];
    let direct = |server: &[String]| -> Vec<String> {
        let lines = client(&s.tools, s.dir.path(), "ping", &[], server);
        let names = seen(&lines, "tools")["names"].as_array().unwrap().clone();
        names.iter().map(|n| n.as_str().unwrap().to_owned()).collect()
    };
    let mut expected: Vec<String> = direct(&everything).iter().map(|n| format!("everything__{n}")).collect();
    expected.extend(
        direct(&filesystem(&s.tools, &s.root))
            .iter()
            .map(|n| format!("fs__{n}")),
    );
    assert_eq!(seen(&lines, "tools")["names"], json!(expected));

    // The call went through the console (asked, approved) to the right server.
    let result = &seen(&lines, "result")["result"];
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "both", "{result}");
    assert_eq!(result["isError"], json!(false), "{result}");
    let journal = console.journal();
    let call = journal
        .iter()
        .find(|l| l["event"] == "tool/call")
        .unwrap_or_else(|| panic!("{journal:?}"));
    assert_eq!(call["name"], "write_file", "the console knows the server's own name");
    assert_eq!(call["scope"]["label"], "fs", "each server is its own scope");

    // The other server, its env from the config, same answer as direct.
    let env_args = r#"{}"#;
    let through = client(&s.tools, s.dir.path(), "call", &["everything__get-env", env_args], &via);
    let text = support::text(&seen(&through, "result")["result"]);
    assert!(text.contains("from-the-config"), "{text}");
    let echo = r#"{"message": "hi"}"#;
    let through = client(&s.tools, s.dir.path(), "call", &["everything__echo", echo], &via);
    let direct = client(&s.tools, s.dir.path(), "call", &["echo", echo], &everything);
    assert_eq!(seen(&through, "result"), seen(&direct, "result"));
    let journal = console.journal();
    assert!(
        journal
            .iter()
            .any(|l| l["event"] == "tool/call" && l["name"] == "echo" && l["scope"]["label"] == "everything"),
        "{journal:?}"
    );
}

#[test]
fn resources_and_prompts_of_several_servers_pass_through() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let via = serve_gateway(s.dir.path(), &console.socket, &two_servers(&s));
    let everything = vec![s.tools.bin.join("mcp-server-everything").display().to_string()];
    let through = client(&s.tools, s.dir.path(), "resources", &[], &via);
    let direct = client(&s.tools, s.dir.path(), "resources", &[], &everything);
    assert_eq!(seen(&through, "resources"), seen(&direct, "resources"));
    assert_eq!(seen(&through, "read"), seen(&direct, "read"));
    let prefixed: Vec<String> = seen(&direct, "prompts")["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| format!("everything__{}", n.as_str().unwrap()))
        .collect();
    assert_eq!(seen(&through, "prompts")["names"], json!(prefixed));

    // Capabilities are the union of both servers' (the filesystem server
    // offers tools only), less tasks, which the gateway does not offer.
    let mut expected = seen(&direct, "initialize")["capabilities"].clone();
    expected["tools"]["listChanged"] = json!(true);
    expected.as_object_mut().unwrap().remove("tasks");
    assert_eq!(seen(&through, "initialize")["capabilities"], expected);
    assert_eq!(seen(&through, "initialize")["server"], "tether-mcp-gateway");
}

/// `tether mcp serve --config` on `text`: what it printed on stderr.
fn refused(text: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    std::fs::write(&config, text).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--log-dir")
        .arg(dir.path().join("logs"))
        .args(["mcp", "serve", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "stdout is the MCP client's");
    (
        config.display().to_string(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_bad_config_is_reported_at_its_line_and_column() {
    let (shown, stderr) =
        refused("{\"mcpServers\": {\n  \"ok\": {\"command\": \"true\"},\n  \"typo\": {\"comand\": \"x\"}\n}}\n");
    let expected = format!("{shown}:3:12: unknown field \"comand\"");
    assert!(stderr.contains(&expected), "{expected:?} not in:\n{stderr}");

    let (shown, stderr) = refused(concat!(
        "{\"mcpServers\": {\n",
        "  \"ok\": {\"command\": \"true\"},\n",
        "  \"a__b\": {\"command\": \"x\"},\n",
        "  \"web\": {\"url\": \"htp:/127.0.0.1:1/mcp\"},\n",
        "  \"key\": {\"url\": \"http://127.0.0.1:1/mcp\", \"headers\": {\"Authorization\": \"Bearer ${TETHER_TEST_UNSET_TOKEN}\"}}\n",
        "}}\n"
    ));
    for expected in [
        format!("{shown}:3:3: server name \"a__b\""),
        format!("{shown}:4:11: expected an http:// or https:// URL with a host"),
        format!("{shown}:5:56: the environment variable TETHER_TEST_UNSET_TOKEN is not set"),
    ] {
        assert!(stderr.contains(&expected), "{expected:?} not in:\n{stderr}");
    }
}
