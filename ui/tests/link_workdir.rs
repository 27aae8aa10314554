//! Where a shell command really runs, on the link (issue 47, item 9): an
//! `exec_command` call's `workdir` (Codex's shell tool takes one; a native
//! agent may send the same) is where its paths are read from, not the
//! session's cwd. A workdir inside the project narrows "within cwd" to it;
//! one outside the project leaves nothing to judge as inside: asked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "link_support/mod.rs"]
mod link_support;

use link_support::*;
use serde_json::{Value, json};
use tether_tools::ApprovalAnswer;

/// What the console decided for `cmd` run in `workdir` (left out when
/// `None`) by a session whose cwd is `project`: `None` when it ran, else
/// its code. Anything asked is rejected.
async fn decided(project: &std::path::Path, cmd: &str, workdir: Option<&str>) -> Option<String> {
    let (answerer, mut requests) = tether_tools::pipeline::approval::channel();
    tokio::spawn(async move {
        while let Some(pending) = requests.recv().await {
            let _ = pending.reply.send(ApprovalAnswer::Rejected { reason: None });
        }
    });
    let rules = json!([{"id": "reads-in-cwd", "stage": "pre-execute",
                        "match": {"command": ["cat *"], "command_paths_within": "cwd"},
                        "action": {"type": "allow"}},
                       {"id": "the-rest-is-asked", "stage": "pre-execute", "action": {"type": "ask"}}]);
    let server = server(rules, Some(answerer)).await;
    let mut agent = Agent::connect(&server).await;
    let opened = agent
        .call(
            "session/open",
            json!({"session_id": "wd", "label": "wd", "cwd": project}),
        )
        .await;
    assert!(opened.get("result").is_some(), "{opened}");
    let registered = agent
        .call(
            "tools/register",
            json!({"name": "exec_command", "description": "runs a command"}),
        )
        .await;
    assert!(registered.get("result").is_some(), "{registered}");
    let mut arguments = json!({"cmd": cmd});
    if let Some(workdir) = workdir {
        arguments["workdir"] = json!(workdir);
    }
    let calls = json!([{"id": "c1", "name": "exec_command", "arguments": arguments.to_string()}]);
    let reply = agent.call("batch/execute", json!({"calls": calls})).await;
    let code = &reply["result"]["outcomes"][0]["code"];
    match code {
        Value::Null => None,
        other => Some(other.as_str().unwrap().to_owned()),
    }
}

#[tokio::test]
async fn a_command_is_judged_from_the_workdir_it_runs_in() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (project, elsewhere) = (root.join("project"), root.join("elsewhere"));
    for d in [&project.join("sub"), &elsewhere] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(project.join("secret.txt"), "mine").unwrap();
    std::fs::write(elsewhere.join("secret.txt"), "someone else's").unwrap();
    std::fs::write(project.join("sub/notes.txt"), "notes").unwrap();

    // In the session's cwd, a read inside it runs.
    assert_eq!(decided(&project, "cat secret.txt", None).await, None);
    // The same words in another directory read another file: asked.
    let outside = elsewhere.to_str().unwrap();
    assert_eq!(
        decided(&project, "cat secret.txt", Some(outside)).await.as_deref(),
        Some("DENIED"),
        "judged from the session's cwd, it read {outside}/secret.txt unasked"
    );
    // A relative workdir is resolved against the cwd.
    assert_eq!(decided(&project, "cat notes.txt", Some("sub")).await, None);
    assert_eq!(
        decided(&project, "cat secret.txt", Some("../elsewhere"))
            .await
            .as_deref(),
        Some("DENIED")
    );
    // `cat notes.txt` from the project is a file that is not there: the
    // workdir is what makes it the one in sub/.
    assert_eq!(
        decided(&project, "cat ../secret.txt", Some("sub")).await.as_deref(),
        Some("DENIED"),
        "within cwd is within the directory the command runs in"
    );
}
