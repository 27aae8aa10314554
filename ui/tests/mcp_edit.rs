//! Edit before approving through the MCP gateway (issue 34 item 2): the
//! human edits an asked call's arguments in the console (a real `tether
//! serve` in a pseudo-terminal) and the upstream server receives the edited
//! arguments — the scripted upstream (`tests/mcp/upstream.py`) echoes them
//! back to the real client (the Python `mcp` SDK).
//!
//! The Python SDK lives in `$TETHER_CI_CACHE` (see `mcp.rs`); missing, the
//! test fails under `CI=true` and is skipped elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "pty_support/mod.rs"]
mod pty_support;
#[path = "mcp/screen.rs"]
mod screen;
#[path = "mcp/support.rs"]
mod support;

use screen::*;
use serde_json::json;
use support::*;

#[test]
fn the_upstream_server_receives_the_arguments_as_the_human_edited_them() {
    let Some(s) = setup() else { return };
    let (socket, journal) = (s.dir.path().join("console.sock"), s.dir.path().join("journal.jsonl"));
    let mut screen = serve_screen(s.dir.path(), &socket, &journal);
    screen.wait_for("listening for agents");
    let via = via_scripted(&s, &socket);
    // A tool never approved before is asked on its first call.
    let (mut client, lines) = spawn_client(&s, "call", &["echo", r#"{"text": "from the model"}"#], &via);
    screen.wait_for("approve once");
    screen.keys("e");
    screen.wait_for("Edit, then approve");
    // Line 2 is `  "text": "from the model"`: to its end, back over the quote.
    screen.keys("\x1b[B\x1b[F\x1b[D");
    screen.keys(", edited by the human");
    screen.wait_for("from the model, edited by the human\"");
    screen.wait_for("valid JSON that the tool's schema accepts");
    screen.keys("\x13");
    let result = next_seen(&lines, "result", &mut client);
    assert_eq!(
        text(&result["result"]),
        "from the model, edited by the human",
        "the server echoed what it received: {result}"
    );
    // The model is told it did not run as it wrote it, and how it ran.
    let notice = result["result"]["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        notice.contains("a human edited this call's arguments before approving it")
            && notice.contains(r#"{"text":"from the model, edited by the human"}"#),
        "the model reads that the arguments were edited: {result}"
    );
    let results = results_of(&journal, "echo");
    assert_eq!(results[0]["answer"], "approved with edits", "{results:?}");
    assert_eq!(
        results[0]["edited_arguments"],
        json!({"text": "from the model, edited by the human"}),
        "{results:?}"
    );
}
