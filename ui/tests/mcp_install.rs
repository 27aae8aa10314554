//! `tether mcp install` / `uninstall` on real config files: every stdio
//! server wrapped in `tether mcp proxy`, env and URL servers kept, a second
//! install changes nothing, uninstall gives back the original bytes; and
//! the real Codex CLI reads the wrapped server as we meant it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// Runs `tether mcp ARGS` with a temporary HOME, CODEX_HOME and state dir.
fn tether(home: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tether"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("CODEX_HOME", home.join("codex_home"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("TMPDIR", home.join("tmp"))
        .arg("mcp")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The default socket for a home made by [`tether`]: what every installed
/// command names, so an agent that strips the environment still finds it.
fn socket(home: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").unwrap().uid();
    home.join("tmp")
        .join(format!("tether-{uid}"))
        .join("console.sock")
        .display()
        .to_string()
}

fn exe() -> String {
    PathBuf::from(env!("CARGO_BIN_EXE_tether"))
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// A project `.mcp.json` as a person might format it: four spaces, a URL
/// server, a server with env and no args.
const MCP_JSON: &str = r#"{
    "mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"]},
        "github": {
            "type": "stdio",
            "command": "github-mcp",
            "env": {"GITHUB_TOKEN": "ghp_example"}
        },
        "docs": {"type": "http", "url": "https://example.com/mcp"}
    }
}"#;

#[test]
fn claude_code_servers_are_wrapped_once_and_restored_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let config = project.join(".mcp.json");
    std::fs::write(&config, MCP_JSON).unwrap();
    let dir = project.display().to_string();

    let printed = tether(home.path(), &["install", "claude-code", "--project", &dir]);
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        MCP_JSON,
        "without --write nothing changes"
    );
    assert!(printed.contains("MCP_TOOL_TIMEOUT=150000"), "{printed}");
    assert!(
        printed.contains(
            "docs: left as it is: remote: its calls are not checked; front it with `tether mcp serve --http`"
        ),
        "a server left unwrapped is named, with why: {printed}"
    );

    tether(home.path(), &["install", "claude-code", "--project", &dir, "--write"]);
    let wrapped: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let servers = &wrapped["mcpServers"];
    assert_eq!(servers["fs"]["command"], json!(exe()), "not on PATH: the absolute path");
    assert_eq!(
        servers["fs"]["args"],
        json!([
            "mcp",
            "proxy",
            "--name",
            "fs",
            "--socket",
            socket(home.path()),
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/srv/notes"
        ])
    );
    assert_eq!(
        servers["github"]["args"],
        json!([
            "mcp",
            "proxy",
            "--name",
            "github",
            "--socket",
            socket(home.path()),
            "--",
            "github-mcp"
        ])
    );
    assert_eq!(servers["github"]["env"], json!({"GITHUB_TOKEN": "ghp_example"}));
    assert_eq!(servers["github"]["type"], "stdio");
    assert_eq!(
        servers["docs"],
        json!({"type": "http", "url": "https://example.com/mcp"})
    );

    let once = std::fs::read(&config).unwrap();
    let again = tether(home.path(), &["install", "claude-code", "--project", &dir, "--write"]);
    assert!(again.contains("nothing to wrap"), "{again}");
    assert!(
        again.contains("fs: left as it is: already runs through `tether mcp proxy`"),
        "{again}"
    );
    assert_eq!(
        std::fs::read(&config).unwrap(),
        once,
        "installing twice changes nothing"
    );

    tether(home.path(), &["uninstall", "claude-code", "--project", &dir, "--write"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), MCP_JSON);
}

#[test]
fn a_file_changed_since_the_install_gets_its_servers_back_and_keeps_the_change() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".claude.json"), MCP_JSON).unwrap();
    tether(home.path(), &["install", "claude-code", "--write"]);
    // Claude Code rewrites its user config all the time.
    let path = home.path().join(".claude.json");
    let mut changed: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    changed["numStartups"] = json!(7);
    std::fs::write(&path, serde_json::to_string_pretty(&changed).unwrap()).unwrap();

    tether(home.path(), &["uninstall", "claude-code", "--write"]);
    let restored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let original: Value = serde_json::from_str(MCP_JSON).unwrap();
    assert_eq!(restored["mcpServers"], original["mcpServers"]);
    assert_eq!(restored["numStartups"], 7);
}

const CONFIG_TOML: &str = r#"# my Codex settings
model = "gpt-5.5"

[mcp_servers.fs]
command = "npx"   # the launcher
args = [
  "-y",
  "@modelcontextprotocol/server-filesystem",
  "/srv/notes",
]

[mcp_servers.fs.env]
NOTES = "1"

# a remote one, left alone
[mcp_servers.docs]
url = "https://example.com/mcp"

[mcp_servers.slow]
command = "slow-mcp"
tool_timeout_sec = 30
default_tools_approval_mode = "prompt"
"#;

#[test]
fn codex_servers_are_wrapped_with_a_timeout_and_restored_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let codex_home = home.path().join("codex_home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = codex_home.join("config.toml");
    std::fs::write(&config, CONFIG_TOML).unwrap();

    let printed = tether(home.path(), &["install", "codex", "--write"]);
    assert!(
        printed.contains("docs: left as it is: remote:"),
        "a server left unwrapped is named, with why: {printed}"
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains("# my Codex settings") && text.contains("# a remote one, left alone"),
        "{text}"
    );
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    let fs = &doc["mcp_servers"]["fs"];
    assert_eq!(fs["command"].as_str(), Some(exe().as_str()));
    let args: Vec<&str> = fs["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "mcp",
            "proxy",
            "--name",
            "fs",
            "--socket",
            &socket(home.path()),
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/srv/notes"
        ]
    );
    assert_eq!(fs["tool_timeout_sec"].as_integer(), Some(150));
    assert_eq!(fs["env"]["NOTES"].as_str(), Some("1"));
    assert_eq!(doc["mcp_servers"]["slow"]["tool_timeout_sec"].as_integer(), Some(150));
    // Codex's own approval would refuse a write under `codex exec` before
    // the console saw it: the console decides, unless the user chose.
    assert_eq!(fs["default_tools_approval_mode"].as_str(), Some("approve"));
    assert_eq!(
        doc["mcp_servers"]["slow"]["default_tools_approval_mode"].as_str(),
        Some("prompt")
    );
    assert!(doc["mcp_servers"]["docs"].get("command").is_none());

    let once = std::fs::read(&config).unwrap();
    tether(home.path(), &["install", "codex", "--write"]);
    assert_eq!(
        std::fs::read(&config).unwrap(),
        once,
        "installing twice changes nothing"
    );

    if let Some(codex) = codex_cli() {
        // Codex itself reads the wrapped server as meant.
        let output = Command::new(codex)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", home.path())
            .env("CODEX_HOME", &codex_home)
            .args(["mcp", "get", "fs", "--json"])
            .output()
            .unwrap();
        let seen: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
        assert_eq!(seen["transport"]["command"], json!(exe()));
        assert_eq!(seen["transport"]["args"][6], "--");
        assert_eq!(seen["transport"]["env"], json!({"NOTES": "1"}));
        assert_eq!(seen["tool_timeout_sec"], json!(150.0));
    }

    tether(home.path(), &["uninstall", "codex", "--write"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), CONFIG_TOML);
}

#[test]
fn codex_servers_changed_since_get_their_command_args_and_timeout_back() {
    let home = tempfile::tempdir().unwrap();
    let codex_home = home.path().join("codex_home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = codex_home.join("config.toml");
    std::fs::write(&config, CONFIG_TOML).unwrap();
    tether(home.path(), &["install", "codex", "--write"]);
    let text = std::fs::read_to_string(&config).unwrap().replace("gpt-5.5", "gpt-6");
    std::fs::write(&config, text).unwrap();

    tether(home.path(), &["uninstall", "codex", "--write"]);
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        CONFIG_TOML.replace("gpt-5.5", "gpt-6").replace(
            "args = [\n  \"-y\",\n  \"@modelcontextprotocol/server-filesystem\",\n  \"/srv/notes\",\n]",
            "args = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv/notes\"]"
        ),
        "entries come back by value (the args array's layout is not kept), the rest as it is now"
    );
}

fn codex_cli() -> Option<PathBuf> {
    let cache = std::env::var_os("TETHER_CI_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tether-ci"),
        PathBuf::from,
    );
    let codex = cache.join("npm/node_modules/.bin/codex");
    if codex.exists() {
        return Some(codex);
    }
    let message = format!("{} missing; run `bash .ci/run`", codex.display());
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED (the Codex part): {message}");
    None
}
