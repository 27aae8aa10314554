//! An MCP tool seen for the first time is asked on every call of that
//! session, whatever the policy allows and however the server's re-lists
//! fall (issue 48): server-everything re-lists its tools right after
//! `initialized`, and the re-list found the pin its first list had just
//! written, so a call that came after it was decided by the user's rule.
//!
//! The Python SDK and the servers live in `$TETHER_CI_CACHE` (see `mcp.rs`);
//! missing tools fail the test under `CI=true` and skip it elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use serde_json::json;
use support::*;

#[test]
fn a_first_seen_tool_is_asked_even_when_the_policy_allows_it_every_time() {
    let Some(tools) = tools() else { return };
    let everything = vec![tools.bin.join("mcp-server-everything").display().to_string()];
    let allow_echo = json!([{"id": "echo-is-fine", "stage": "pre-execute", "match": {"tool": "echo"},
                             "action": {"type": "allow"}}]);
    let mut decided_by_the_rule = Vec::new();
    for run in 0..20 {
        // A fresh directory: no pin file, a fresh console.
        let dir = tempfile::tempdir().unwrap();
        // Every question is answered "reject": what is asked is denied.
        let console = console(dir.path(), "reject", &allow_echo);
        let via = gateway(dir.path(), &console.socket, &["--name", "everything"], &everything);
        let lines = client(&tools, dir.path(), "call", &["echo", r#"{"message": "hi"}"#], &via);
        let result = &seen(&lines, "result")["result"];
        if result["isError"] != json!(true) {
            decided_by_the_rule.push((run, result.clone()));
        }
        let echoes: Vec<_> = console
            .journal()
            .into_iter()
            .filter(|r| r["event"] == "tool/result" && r["name"] == "echo")
            .collect();
        assert_eq!(echoes.len(), 1, "run {run}: {echoes:?}");
        assert_eq!(echoes[0]["code"], "DENIED", "run {run}: {}", echoes[0]);
    }
    assert!(
        decided_by_the_rule.is_empty(),
        "an unpinned tool was allowed by the policy's rule: {decided_by_the_rule:?}"
    );
}
