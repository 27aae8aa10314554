//! Committed secrets printed through git: each case through the real
//! `tether hook claude-code` and `tether hook codex` bridges against a
//! console holding the starter policy, whose human rejects whatever is
//! asked, in a scratch repository whose history, index or configuration
//! holds a secret. Judged by effect:
//! when the bridge allows a command it is run under bash in the repository,
//! and the secret must not appear in what it prints. A control under a
//! policy that allows everything shows each command does print the secret
//! when allowed, and the fatigue side shows a repository whose history
//! holds no secret keeps `git show`, `git log -p`, `git diff` unasked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/link_console.rs"]
mod link_console;

#[path = "git_support/scene.rs"]
mod scene;

use bridge::allowed;
use link_console::{Asker, LinkConsole};
use scene::{Repo, SECRET, Scene};
use tether_console::files::policy::Starter;

/// A console on `policy` whose human rejects every question.
async fn console(policy: &str) -> LinkConsole {
    link_console::start(policy, Asker::Rejecting).await
}

/// Each scene with the commands that print its secret when run.
const LEAKS: &[(Scene, &[&str])] = &[
    (
        Scene::CommittedAtHead,
        &[
            "git show HEAD",
            "git show",
            "git log -p",
            "git log --patch",
            "git log -p --all",
            "git diff HEAD~1..HEAD",
            "git diff HEAD~1 HEAD",
            "git show @BLOB@",
            "git show --stat @BLOB@",
            "git grep --cached KEY",
            "git diff",
            "git status -vv",
            "git log -S KEY -p",
        ],
    ),
    (
        Scene::DeletedLater,
        &[
            "git log -p",
            "git log -p --all",
            "git show HEAD",
            "git show HEAD~1",
            "git diff HEAD~2 HEAD~1",
            "git show @BLOB@",
            "git --no-pager log -p --reverse",
            // Review F1: an option adding commits to `REV:PATH`.
            "git show --all HEAD:src/x.rs",
            "git show --branches HEAD:src/x.rs",
            "git show --reflog HEAD:src/x.rs",
            // Review F2: a colon inside braces is not `REV:PATH`'s.
            "git show 'HEAD^{/add:?}'",
            "git show 'HEAD@{2099-01-01 12:00:00}'",
        ],
    ),
    (
        Scene::StagedOnly,
        &[
            "git diff --cached",
            "git diff --staged",
            "git diff HEAD",
            "git status -v",
            "git show @BLOB@",
        ],
    ),
    (
        Scene::OtherSpellings,
        &[
            "git log -p",
            "git show HEAD~1",
            "git diff HEAD~2 HEAD~1",
            "git show HEAD",
        ],
    ),
    (
        Scene::TokenInRemote,
        &["git remote -v", "cat .git/config", "grep -r bot ."],
    ),
    (
        Scene::CommitInGitDir,
        &[
            "git show info/X",
            "git log -p rebase-merge/onto",
            "git diff HEAD info/X",
        ],
    ),
    (Scene::AssumeUnchanged, &["git grep KEY", "git grep -n SECRET"]),
    (Scene::SubmoduleStaged, &["git grep --cached --recurse-submodules KEY"]),
    (Scene::TokenInQuery, &["git remote -v"]),
    (Scene::TokenInPath, &["git remote -v"]),
    (
        Scene::NamedFiles,
        &[
            "cat prod.env",
            "cat .env_prod",
            "head .env-prod",
            "cat service-account.json",
            "cat gcp-key.json",
            "cat firebase-adminsdk-x1.json",
            "cat terraform.tfstate",
            "cat prod.tfvars",
            "cat private.asc",
            "cat id.ppk",
            "cat .htpasswd",
            "cat .my.cnf",
            "cat .s3cfg",
            "cat .boto",
            "cat .vault-token",
            "cat .terraformrc",
            "cat .yarnrc.yml",
            "cat .config/gh/hosts.yml",
            "cat .gradle/gradle.properties",
            "cat mirror.git/config",
            "grep -r bot mirror.git",
            "cat .env~",
            "cat client_secret_*.json",
            "cat token.json",
            "cat .claude/.credentials.json",
            "cat .codex/auth.json",
            "head .dev.vars",
            "cat .bash_history",
            "cat prod.kubeconfig",
            "cat .config/github-copilot/hosts.json",
            "cat .git/rr-cache/*/preimage",
            "grep -r SECRET .git/rr-cache",
        ],
    ),
];

/// The commands an ordinary hour runs in a repository whose history holds
/// no secret: each stays unasked.
const CLEAN_READS: &[&str] = &[
    "git show",
    "git show HEAD",
    "git log -p",
    "git log -p --all",
    "git diff",
    "git diff HEAD~1",
    "git diff --cached",
    "git diff --staged --stat",
    "git log -p -- src/x.rs",
    "git log --stat",
    "git show HEAD~1 --stat",
    "git remote -v",
    "git branch --contains HEAD",
    "git branch --merged main",
    "git branch --no-merged",
    "git branch --points-at HEAD",
    "git status -v",
];

/// Runs each leak through `agent`'s bridge under `policy`; returns the
/// commands that printed the secret, and how many were tried.
async fn printed_under(agent: &str, policy: &str) -> (Vec<String>, usize) {
    let console = console(policy).await;
    let mut printed = Vec::new();
    let mut tried = 0;
    for (scene, commands) in LEAKS {
        let repo = Repo::new(*scene);
        for template in *commands {
            tried += 1;
            let command = repo.command(template);
            let (allowed, answer) = allowed(agent, &console.path, &command, repo.path()).await;
            if allowed && repo.run(&command).contains(SECRET) {
                printed.push(format!("{scene:?}: {command:?} (answer {answer})"));
            }
        }
    }
    (printed, tried)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_git_command_prints_a_committed_staged_or_configured_secret_and_each_would() {
    for (agent, starter) in [("claude-code", Starter::ClaudeCode), ("codex", Starter::Codex)] {
        let (printed, _) = printed_under(agent, &starter.text()).await;
        assert!(
            printed.is_empty(),
            "{agent}: allowed and printed the secret:\n{}",
            printed.join("\n")
        );
    }
    // The control: each command prints the secret when allowed.
    let (printed, tried) = printed_under("claude-code", r#"{"default": "allow", "rules": []}"#).await;
    assert_eq!(
        printed.len(),
        tried,
        "only these printed when allowed:\n{}",
        printed.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_with_no_secret_keeps_git_show_log_and_diff_unasked() {
    let console = console(&Starter::ClaudeCode.text()).await;
    let repo = Repo::new(Scene::Clean);
    let mut asked = Vec::new();
    for command in CLEAN_READS {
        let (allowed, answer) = allowed("claude-code", &console.path, command, repo.path()).await;
        if !allowed {
            asked.push(format!("{command:?}: {answer}"));
        }
        assert!(
            !repo.run(command).contains(SECRET),
            "{command} printed the ignored .env"
        );
    }
    assert!(
        asked.is_empty(),
        "asked though the history holds no secret:\n{}",
        asked.join("\n")
    );
}

/// A secret in history does not make a form limited to a path that never
/// held one asked, and a form that follows renames out of it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pathspec_that_reaches_no_secret_keeps_a_dirty_history_readable() {
    let console = console(&Starter::ClaudeCode.text()).await;
    let repo = Repo::new(Scene::DeletedLater);
    for command in ["git log -p -- src/x.rs", "git show HEAD:src/x.rs", "git log --oneline"] {
        let (allowed, answer) = allowed("claude-code", &console.path, command, repo.path()).await;
        assert!(allowed, "{command}: {answer}");
    }
    for command in [
        "git log -p --follow -- src/x.rs",
        "git log -p -- '*'",
        "git log -p -- .",
    ] {
        let (allowed, answer) = allowed("claude-code", &console.path, command, repo.path()).await;
        assert!(!allowed, "{command}: {answer}");
    }
}

/// Verifying a signature runs the program `gpg.program` names: a command
/// that verifies one runs it.
const VERIFIES: &[&str] = &[
    "git log --show-signature -1",
    "git show --show-signature",
    "git log --format=%G? -1",
    "git log --pretty='format:%h %GS' -1",
];

/// A repository whose HEAD carries a signature and whose `gpg.program`
/// leaves a mark when it runs.
fn signed() -> Repo {
    let repo = Repo::new(Scene::Clean);
    let gpg = repo.path().join(".git/gpg");
    let mark = repo.path().join(".git/ran-gpg");
    std::fs::write(&gpg, format!("#!/bin/sh\ntouch '{}'\nexit 1\n", mark.display())).unwrap();
    std::fs::set_permissions(&gpg, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    repo.git(&["config", "gpg.program", gpg.to_str().unwrap()]);
    let commit = repo.output(&["cat-file", "commit", "HEAD"]);
    let (head, body) = commit.split_once("\n\n").unwrap();
    let signed = format!(
        "{head}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\n{body}\n"
    );
    let file = repo.path().join(".git/signed-commit");
    std::fs::write(&file, signed).unwrap();
    let id = repo.output(&["hash-object", "-t", "commit", "-w", file.to_str().unwrap()]);
    repo.git(&["update-ref", "refs/heads/main", &id]);
    repo
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_signature_check_runs_gpg_unasked_and_each_would() {
    for (policy, agents) in [
        (Starter::ClaudeCode.text(), &["claude-code", "codex"][..]),
        (r#"{"default": "allow", "rules": []}"#.to_owned(), &["claude-code"][..]),
    ] {
        let allow_all = policy.contains(r#""default": "allow""#);
        let console = console(&policy).await;
        for agent in agents {
            for command in VERIFIES {
                let repo = signed();
                let (allowed, answer) = allowed(agent, &console.path, command, repo.path()).await;
                if allowed {
                    repo.run(command);
                }
                let ran = repo.path().join(".git/ran-gpg").exists();
                assert_eq!(ran, allow_all, "{agent}: {command} (answer {answer})");
            }
        }
    }
}

/// The history is read once per refs state, and after a commit only what
/// is new: a secret committed after the first read is seen by the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_committed_after_the_history_was_read_makes_the_next_git_log_p_asked() {
    let console = console(&Starter::ClaudeCode.text()).await;
    let repo = Repo::new(Scene::Clean);
    let judged = |command: &'static str| allowed("claude-code", &console.path, command, repo.path());
    let (first, answer) = judged("git log -p").await;
    assert!(first, "a clean history: {answer}");
    // Committed on HEAD's branch.
    std::fs::write(
        repo.path().join("config/credentials.json"),
        format!("{{\"key\": \"{SECRET}\"}}\n"),
    )
    .unwrap();
    repo.git(&["add", "config/credentials.json"]);
    repo.commit("add credentials");
    let (after, answer) = judged("git log -p").await;
    assert!(!after, "the new commit holds a secret: {answer}");
    assert!(repo.run("git log -p").contains(SECRET), "and git log -p prints it");

    // Committed on a ref of its own (no reflog, HEAD elsewhere): read the
    // same; then forgotten once the ref is deleted (its tip gone, the whole
    // history is read again), as a full read forgets it.
    let repo = Repo::new(Scene::Clean);
    let judged = |command: &'static str| allowed("claude-code", &console.path, command, repo.path());
    assert!(judged("git log -p --all").await.0);
    std::fs::write(repo.path().join("key.pem"), SECRET).unwrap();
    repo.git(&["add", "key.pem"]);
    let tree = repo.output(&["write-tree"]);
    let commit = repo.output(&[
        "-c",
        "user.email=t@t",
        "-c",
        "user.name=t",
        "commit-tree",
        &tree,
        "-p",
        "HEAD",
        "-m",
        "key",
    ]);
    repo.git(&["update-ref", "refs/side/key", &commit]);
    repo.git(&["rm", "-q", "--cached", "key.pem"]);
    std::fs::remove_file(repo.path().join("key.pem")).unwrap();
    let (side, answer) = judged("git log -p --all").await;
    assert!(!side, "a ref holds a secret: {answer}");
    assert!(repo.run("git log -p --all").contains(SECRET));
    repo.git(&["update-ref", "-d", "refs/side/key"]);
    let (gone, answer) = judged("git log -p --all").await;
    assert!(gone, "no ref reaches the secret now: {answer}");
    assert!(!repo.run("git log -p --all").contains(SECRET));
}
