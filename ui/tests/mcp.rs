//! The MCP gateway against real servers (`@modelcontextprotocol/server-filesystem`
//! and `server-everything` from npm) and a real client (the Python `mcp` SDK,
//! `tests/mcp/client.py`), with a real console (`tether serve --headless`).
//! Every test asserts on effects: files written or not, what the client read,
//! what the console's journal holds.
//!
//! The servers and the SDK live in `$TETHER_CI_CACHE` (default
//! `~/.cache/tether-ci`; `.ci/run` installs them). Missing tools fail the
//! test under CI (`CI=true`) and skip it, saying so, elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/support.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

#[test]
fn an_approved_write_creates_the_file_and_the_result_passes_through_unchanged() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &ask_writes());
    let target = s.root.join("approved.txt");
    let arguments = json!({"path": target, "content": "hello"}).to_string();
    let up = filesystem(&s.tools, &s.root);
    let via = gateway(s.dir.path(), &console.socket, &["--name", "fs"], &up);

    let lines = client(&s.tools, s.dir.path(), "call", &["write_file", &arguments], &via);
    let result = &seen(&lines, "result")["result"];
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello");
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({"content": format!("Successfully wrote to {}", target.display())})
    );

    // The same read, through the gateway and straight to the server: equal,
    // content and structuredContent alike; and the listed tools are the
    // server's own, schemas included.
    let listing = json!({"path": s.root}).to_string();
    let through = client(&s.tools, s.dir.path(), "call", &["list_directory", &listing], &via);
    let direct = client(&s.tools, s.dir.path(), "call", &["list_directory", &listing], &up);
    assert_eq!(seen(&through, "result"), seen(&direct, "result"));
    // `execution.taskSupport` is the one field not relayed: the gateway
    // offers no tasks, and an absent field means the same ("forbidden").
    let defined = |lines: &[Value]| -> Vec<Value> {
        let mut tools = seen(lines, "tools")["tools"].as_array().unwrap().clone();
        for tool in &mut tools {
            tool.as_object_mut().unwrap().remove("execution");
        }
        tools
    };
    let (through, direct) = (defined(&through), defined(&direct));
    assert_eq!(through.len(), direct.len());
    for (a, b) in through.iter().zip(&direct) {
        assert!(a == b, "{a}\n differs from the server's own\n{b}");
    }

    let journal = console.journal();
    assert!(
        journal.iter().any(|l| l.to_string().contains("approved.txt")),
        "the journal holds the call: {journal:?}"
    );
}

#[test]
fn a_rejected_write_has_no_effect_and_the_client_reads_why() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "reject", &ask_writes());
    let target = s.root.join("rejected.txt");
    let arguments = json!({"path": target, "content": "nope"}).to_string();
    let via = via_filesystem(&s, &console.socket, &["--name", "fs"]);

    let lines = client(&s.tools, s.dir.path(), "call", &["write_file", &arguments], &via);
    let result = &seen(&lines, "result")["result"];
    assert!(!target.exists(), "a rejected write must not reach the server");
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(text(result).contains("DENIED"), "{result}");
    assert!(text(result).contains("decided by script"), "{result}");
    let journal = console.journal().iter().map(Value::to_string).collect::<String>();
    assert!(journal.contains("DENIED"), "{journal}");
}

#[test]
fn invalid_arguments_are_refused_by_the_real_schema_before_the_server_sees_them() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let via = via_filesystem(&s, &console.socket, &["--name", "fs"]);
    let arguments = json!({"path": 42, "content": "x"}).to_string();
    let lines = client(&s.tools, s.dir.path(), "call", &["write_file", &arguments], &via);
    let result = &seen(&lines, "result")["result"];
    assert_eq!(result["isError"], json!(true));
    assert!(text(result).contains("INVALID_ARGS"), "{result}");
    assert!(text(result).contains("schema"), "decided by the schema: {result}");
}

#[test]
fn with_the_console_down_every_call_fails_closed_with_the_reason() {
    let Some(s) = setup() else { return };
    let target = s.root.join("unattended.txt");
    let arguments = json!({"path": target, "content": "x"}).to_string();
    let socket = s.dir.path().join("nobody.sock");
    let via = via_filesystem(&s, &socket, &[]);
    let lines = client(&s.tools, s.dir.path(), "call", &["write_file", &arguments], &via);
    let result = &seen(&lines, "result")["result"];
    assert!(!target.exists());
    assert_eq!(result["isError"], json!(true));
    assert!(
        text(result).contains(&format!(
            "the Tether console is not running (start `tether serve`): nothing listens on {}",
            socket.display()
        )),
        "the refusal names the socket it tried: {result}"
    );
}

/// A gateway left running without a console says so in its log once,
/// not at every call it refuses.
#[test]
fn with_the_console_down_the_log_says_so_once_not_per_call() {
    let Some(s) = setup() else { return };
    let target = s.root.join("unattended.txt");
    let arguments = json!({"path": target, "content": "x"}).to_string();
    let socket = s.dir.path().join("nobody.sock");
    let via = via_filesystem(&s, &socket, &[]);
    let lines = client(
        &s.tools,
        s.dir.path(),
        "call_times",
        &["write_file", &arguments, "3"],
        &via,
    );
    let refused = lines.iter().filter(|l| l["kind"] == "result").count();
    assert_eq!(refused, 3, "three calls answered: {lines:?}");
    assert!(!target.exists());
    let log = std::fs::read_to_string(s.dir.path().join("logs/tether.log")).unwrap();
    let said = log.lines().filter(|l| l.contains("no console")).count();
    assert_eq!(said, 1, "one line for the console being down:\n{log}");
}

/// The gateway looks for the console again at each call: one started
/// while the agent runs gets its next call.
#[test]
fn a_console_started_after_the_gateway_gets_its_next_call() {
    let Some(s) = setup() else { return };
    let socket = s.dir.path().join("console.sock");
    let via = via_filesystem(&s, &socket, &[]);
    let (before, after) = (s.root.join("before.txt"), s.root.join("after.txt"));
    let mut console = None;
    let lines = two_writes_around(&s, &via, || {
        console = Some(support::console(s.dir.path(), "approve", &json!([])))
    });
    let console = console.unwrap();

    let refused = &seen(&lines, "first")["result"];
    assert!(text(refused).contains("not running"), "{refused}");
    assert!(!before.exists());
    let ran = &seen(&lines, "second")["result"];
    assert_ne!(ran["isError"], json!(true), "{ran}");
    assert_eq!(std::fs::read_to_string(&after).unwrap(), "y");
    assert!(
        console.journal().iter().any(|l| l.to_string().contains("after.txt")),
        "the console recorded the second call"
    );
}

#[test]
fn with_the_console_down_a_policy_runs_in_the_gateway_and_ask_becomes_deny() {
    let Some(s) = setup() else { return };
    std::fs::write(s.root.join("notes.txt"), "kept").unwrap();
    let policy = write_policy(s.dir.path(), &ask_writes());
    let socket = s.dir.path().join("nobody.sock");
    let policy_arg = policy.display().to_string();
    let via = via_filesystem(&s, &socket, &["--policy", &policy_arg]);

    let target = s.root.join("asked.txt");
    let arguments = json!({"path": target, "content": "x"}).to_string();
    let lines = client(&s.tools, s.dir.path(), "call", &["write_file", &arguments], &via);
    let result = &seen(&lines, "result")["result"];
    assert!(!target.exists());
    assert_eq!(result["isError"], json!(true));
    assert!(
        text(result).contains("DENIED") && text(result).contains("not running"),
        "{result}"
    );
    assert!(
        !text(result).contains("rejected by the approver") && text(result).contains("with nobody to ask"),
        "it says what happened: {result}"
    );

    let read = json!({"path": s.root.join("notes.txt")}).to_string();
    let lines = client(&s.tools, s.dir.path(), "call", &["read_text_file", &read], &via);
    let result = &seen(&lines, "result")["result"];
    assert_eq!(text(result), "kept", "an allowed call runs: {result}");
}

#[test]
fn tools_on_several_pages_and_a_changed_list_reach_the_client_and_the_console() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let via = via_scripted(&s, &console.socket);
    let lines = client_env(&s.tools, s.dir.path(), "list_changed", &["mutate", "{}"], &via);
    let lists: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "tools").collect();
    // The server lists one tool per page.
    assert_eq!(lists[0]["names"], json!(["echo", "mutate", "slow"]));
    assert_eq!(lists[1]["names"], json!(["echo", "mutate", "slow", "extra"]));
}

#[test]
fn a_changed_definition_is_held_until_approved_and_new_tools_are_pinned_on_sight() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let lines = rugpull(&s, &console.socket);

    // The model keeps seeing the approved description, not the new one.
    let after = &seen(&lines, "after")["tools"];
    let echo = after.as_array().unwrap().iter().find(|t| t["name"] == "echo").unwrap();
    assert_eq!(echo["description"], "Echoes its text back.");
    let held = &seen(&lines, "held")["result"];
    assert_eq!(held["isError"], json!(true));
    assert!(text(held).contains("definition changed since approved"), "{held}");
    assert!(text(held).contains("DENIED"), "{held}");
    // A new tool is not a rug pull: pinned and callable through the console.
    assert_eq!(text(&seen(&lines, "extra")["result"]), "extra");
    assert_eq!(seen(&lines, "approve")["code"], json!(0), "{lines:?}");
    assert_eq!(text(&seen(&lines, "approved")["result"]), "hi");

    let pins = s.dir.path().join("state/tether/mcp-pins/scripted.json");
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(std::fs::metadata(&pins).unwrap().permissions().mode() & 0o777, 0o600);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&pins).unwrap()).unwrap();
    assert!(
        file["tools"]["echo"]["definition"]["description"]
            .as_str()
            .unwrap()
            .contains("ssh")
    );
    assert!(file["tools"]["extra"]["hash"].as_str().unwrap().starts_with("sha256:"));
}

#[test]
fn progress_reaches_the_client_under_its_own_token() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let via = via_scripted(&s, &console.socket);
    let lines = client_env(
        &s.tools,
        s.dir.path(),
        "progress",
        &["slow", r#"{"seconds": 0.5}"#],
        &via,
    );
    let progress = seen(&lines, "progress")["seen"].as_array().unwrap().clone();
    assert_eq!(progress.len(), 5, "{lines:?}");
    assert_eq!(progress[4], json!({"progress": 5.0, "total": 5.0}));
}

/// Forty calls of `tool` with `arguments` through `via` (`client.py`'s
/// `progress_repeat`): the runs (index, what each saw before its result)
/// that saw less than `whole`.
fn runs_short_of(
    s: &Setup,
    via: &[String],
    tool: &str,
    arguments: &str,
    whole: impl Fn(&Value) -> bool,
) -> Vec<(usize, Value)> {
    let runs = 40;
    let lines = client(
        &s.tools,
        s.dir.path(),
        "progress_repeat",
        &[tool, arguments, &runs.to_string()],
        via,
    );
    let counts = seen(&lines, "progress_runs")["counts"].as_array().unwrap().clone();
    assert_eq!(counts.len(), runs);
    counts.into_iter().enumerate().filter(|(_, c)| !whole(c)).collect()
}

/// Each notification about a request reaches the client before that
/// request's response: server-everything's long operation sends four
/// progress notifications, then its result, and the client sees all four,
/// run after run (the result used to overtake the last one about one run
/// in five).
#[test]
fn every_progress_notification_reaches_the_client_before_its_result() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let (_up, via) = everything(&s, &console.socket);
    let arguments = json!({"duration": 0.2, "steps": 4}).to_string();
    let short = runs_short_of(&s, &via, "trigger-long-running-operation", &arguments, |c| {
        c["progress"] == json!(4)
    });
    assert!(
        short.is_empty(),
        "runs (index, what each saw) that lost progress: {short:?}"
    );
}

/// The same, made likely: a server that writes four progress
/// notifications, a log message, `tools/list_changed` and the result in one
/// write. The progress and the log reach the client before the result, run
/// after run.
#[test]
fn notifications_written_with_their_result_reach_the_client_before_it() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/burst.py");
    let up = vec![s.tools.python.display().to_string(), script.display().to_string()];
    let via = gateway(s.dir.path(), &console.socket, &["--name", "burst"], &up);
    // tools/list_changed is left out: the client hears of it once the
    // gateway has re-listed and re-checked the pins, after the result.
    let short = runs_short_of(&s, &via, "burst", "{}", |c| {
        c["progress"] == json!(4) && c["logs"] == json!(1)
    });
    assert!(
        short.is_empty(),
        "runs (index, what each saw before its result) that lost some: {short:?}"
    );
}

#[test]
fn a_call_the_client_abandons_is_cancelled_upstream_and_ends_aborted() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let via = via_scripted(&s, &console.socket);
    let lines = client_env(
        &s.tools,
        s.dir.path(),
        "cancel",
        &["slow", r#"{"seconds": 5}"#, "1"],
        &via,
    );
    assert_eq!(seen(&lines, "cancelled")["cancelled"], json!(true));
    seen(&lines, "pong"); // the gateway still answers afterwards
    let marked = s.dir.path().join("slow-cancelled");
    let started = Instant::now();
    while !marked.exists() && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(marked.exists(), "the upstream call got its own notifications/cancelled");
    assert!(!s.dir.path().join("slow-finished").exists());
    let journal = console.journal().iter().map(Value::to_string).collect::<String>();
    assert!(journal.contains("ABORTED"), "{journal}");
}

#[test]
fn ping_resources_and_prompts_pass_through() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let (up, via) = everything(&s, &console.socket);
    let lines = client(&s.tools, s.dir.path(), "ping", &[], &via);
    seen(&lines, "pong");
    let through = client(&s.tools, s.dir.path(), "resources", &[], &via);
    let direct = client(&s.tools, s.dir.path(), "resources", &[], &up);
    assert!(!seen(&through, "resources")["uris"].as_array().unwrap().is_empty());
    for kind in ["resources", "read", "prompts"] {
        assert_eq!(seen(&through, kind), seen(&direct, kind), "{kind}");
    }
}

/// The console records a gateway call's arguments as the client wrote
/// them (spacing and escapes kept), as it records a socket agent's: what
/// the journal shows is what the model sent, not a re-encoding of it.
#[test]
fn the_journal_holds_a_call_as_the_client_wrote_it_and_its_result_before_the_client_has_it() {
    let Some(s) = setup() else { return };
    let console = console(s.dir.path(), "approve", &json!([]));
    let via = via_filesystem(&s, &console.socket, &["--name", "fs"]);
    let mut client = RawClient::start(&via, s.dir.path());
    client.initialize();
    let target = s.root.join("written.txt");
    let arguments = format!(
        r#"{{ "path" : {},  "content": "caf\u00e9" }}"#,
        json!(target.display().to_string())
    );
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"write_file","arguments":{arguments}}}}}"#
    );
    let result = client.answer_to(3, &call);
    assert_ne!(result["result"]["isError"], json!(true), "{result}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "café");
    // The client had its answer: the journal holds the result already.
    let results = console.journal();
    assert!(
        results
            .iter()
            .any(|l| l["event"] == "tool/result" && l["name"] == "write_file" && l["code"].is_null()),
        "{results:?}"
    );
    drop(client);

    let journal = console.journal();
    let recorded: Vec<&Value> = journal
        .iter()
        .filter(|l| l["event"] == "tool/call" && l["name"] == "write_file")
        .map(|l| &l["arguments"])
        .collect();
    assert_eq!(recorded, [&json!(arguments)], "{journal:?}");
}
