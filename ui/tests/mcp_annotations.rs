//! Annotations are claims: an MCP tool is asked until its definition is
//! pinned (seen in an earlier session), before any rule of the policy;
//! `readOnlyHint` makes its calls parallel only when it is pinned and the
//! gateway's policy trusts its server (`trust_annotations`); rules match
//! annotations (`match.annotations`) only of the pinned tools of servers
//! the policy trusts. Against the real `server-filesystem`, whose read
//! tools claim `readOnlyHint` and whose writes claim `destructiveHint`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use serde_json::json;
use support::*;

fn listing(s: &Setup) -> String {
    json!({"path": s.root}).to_string()
}

/// The journal's `mode` for each call of `name`, in order.
fn modes(console: &Console, name: &str) -> Vec<String> {
    console
        .journal()
        .iter()
        .filter(|l| l["event"] == "tool/call" && l["name"] == name)
        .map(|l| l["mode"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_unpinned_tool_is_asked_and_once_pinned_it_is_not() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "reject", &json!([]));
    let via = via_filesystem(&s, &console.socket, &["--name", "fs"]);
    let first = client(&s.tools, s.dir.path(), "call", &["list_directory", &listing(&s)], &via);
    let result = &seen(&first, "result")["result"];
    assert_eq!(
        result["isError"],
        json!(true),
        "first sight: asked, and the console rejects: {result}"
    );
    assert!(text(result).contains("rejected by the approver"), "{result}");

    // The next session finds the definition pinned: no question.
    let second = client(&s.tools, s.dir.path(), "call", &["list_directory", &listing(&s)], &via);
    let result = &seen(&second, "result")["result"];
    assert_eq!(result["isError"], json!(false), "{result}");
}

#[test]
fn rules_match_what_a_trusted_server_claims_about_its_pinned_tools() {
    let Some(s) = setup() else { return };
    let rules = json!([
        {"id": "no-destructive", "stage": "pre-execute", "match": {"annotations": {"destructiveHint": true}},
         "action": {"type": "deny", "reason": "DESTRUCTIVE-BY-ITS-OWN-ACCOUNT"}},
        {"id": "reads", "stage": "pre-execute", "match": {"annotations": {"readOnlyHint": true}}, "action": {"type": "allow"}}
    ]);
    let path = s.dir.path().join("trusting.json");
    let policy = json!({"default": "allow", "trust_annotations": ["fs"], "rules": rules});
    std::fs::write(&path, policy.to_string()).unwrap();
    let console = console_with(s.dir.path(), "reject", Some(&path));
    let via = via_filesystem(&s, &console.socket, &["--name", "fs"]);
    // First sight: asked before any rule (the console rejects); now pinned.
    let lines = client(&s.tools, s.dir.path(), "call", &["list_directory", &listing(&s)], &via);
    assert!(text(&seen(&lines, "result")["result"]).contains("decided by script"));

    let target = s.root.join("gone.txt");
    let write = json!({"path": target, "content": "x"}).to_string();
    let lines = client(&s.tools, s.dir.path(), "call", &["write_file", &write], &via);
    let result = &seen(&lines, "result")["result"];
    assert!(!target.exists());
    assert!(text(result).contains("DESTRUCTIVE-BY-ITS-OWN-ACCOUNT"), "{result}");
    assert!(text(result).contains("rule:no-destructive"), "{result}");
    let lines = client(&s.tools, s.dir.path(), "call", &["list_directory", &listing(&s)], &via);
    assert_eq!(seen(&lines, "result")["result"]["isError"], json!(false));
}

#[test]
fn read_only_hint_is_parallel_only_when_pinned_and_trusted() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let trust = s.dir.path().join("gateway-policy.json");
    std::fs::write(&trust, json!({"trust_annotations": ["fs"], "rules": []}).to_string()).unwrap();
    let trust = trust.display().to_string();
    let up = filesystem(&s.tools, &s.root);
    let trusting = gateway(
        s.dir.path(),
        &console.socket,
        &["--name", "fs", "--policy", &trust],
        &up,
    );
    let plain = gateway(s.dir.path(), &console.socket, &["--name", "fs"], &up);
    let write = json!({"path": s.root.join("w.txt"), "content": "x"}).to_string();

    // Unpinned: exclusive, trusted or not. Pinned and trusted: parallel.
    // Pinned, not trusted: exclusive. A write never claims to be read-only.
    for via in [&trusting, &trusting, &plain] {
        client(&s.tools, s.dir.path(), "call", &["list_directory", &listing(&s)], via);
    }
    client(&s.tools, s.dir.path(), "call", &["write_file", &write], &trusting);
    assert_eq!(
        modes(&console, "list_directory"),
        ["exclusive", "parallel", "exclusive"]
    );
    assert_eq!(modes(&console, "write_file"), ["exclusive"]);
}

/// The scripted server with `wipe_home` ("Deletes every file in $HOME."),
/// which claims `readOnlyHint` and marks `wiped` when it runs.
fn liar(s: &Setup) -> Vec<String> {
    let mut command = vec![
        "/usr/bin/env".to_owned(),
        "LYING=1".to_owned(),
        format!("MARK_DIR={}", s.dir.path().display()),
    ];
    command.extend(scripted(&s.tools));
    command
}

/// A console (in `dir`, answering "reject") whose policy allows every tool
/// that claims to be read-only and asks the rest, trusting `trusted`.
fn believing(dir: &std::path::Path, trusted: &[&str]) -> Console {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("claims.json");
    let policy = json!({"default": "ask", "trust_annotations": trusted, "rules": [
        {"id": "claimed-reads", "stage": "pre-execute", "match": {"annotations": {"readOnlyHint": true}},
         "action": {"type": "allow"}}
    ]});
    std::fs::write(&path, policy.to_string()).unwrap();
    console_with(dir, "reject", Some(&path))
}

#[test]
fn a_read_only_claim_allows_only_a_pinned_tool_of_a_trusted_server() {
    let Some(s) = setup() else { return };
    let wiped = s.dir.path().join("wiped");
    let call = |console: &Console| {
        let via = gateway(s.dir.path(), &console.socket, &["--name", "liar"], &liar(&s));
        let lines = client(&s.tools, s.dir.path(), "call", &["wipe_home", "{}"], &via);
        seen(&lines, "result")["result"].clone()
    };
    let untrusting = believing(&s.dir.path().join("untrusting"), &[]);

    // First sight: asked before any rule of the user's (and rejected).
    let first = call(&untrusting);
    assert_eq!(first["isError"], json!(true), "{first}");
    assert!(!wiped.exists(), "a first-seen tool's claim allowed it: {first}");
    let trail = untrusting.journal();
    assert!(
        trail
            .iter()
            .any(|l| l.to_string().contains("mcp-unpinned-tools-are-asked")),
        "{trail:?}"
    );

    // Pinned now, but the policy does not trust this server's claims.
    let second = call(&untrusting);
    assert_eq!(second["isError"], json!(true), "{second}");
    assert!(!wiped.exists(), "an untrusted server's claim allowed it: {second}");
    drop(untrusting);

    // A policy that trusts the server believes its pinned tool's claim.
    let trusting = believing(&s.dir.path().join("trusting"), &["liar"]);
    let third = call(&trusting);
    assert_eq!(third["isError"], json!(false), "{third}");
    assert!(wiped.exists());
}
