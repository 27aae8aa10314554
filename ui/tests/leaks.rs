//! Issue 47's leaks, each through the real `tether hook claude-code` and
//! `tether hook codex` bridges against a console holding the starter
//! policy, whose human rejects whatever is asked. Each case is judged by its
//! effect: when the bridge allows the command it is run under bash in the
//! project, as the agent would run it, and the harm (a file written, a
//! secret printed) must not happen. A control run under a policy that
//! allows everything shows each harm does happen when allowed, so no case
//! can pass by testing nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hook_support/bridge.rs"]
mod bridge;
#[path = "hook_support/link_console.rs"]
mod link_console;

use std::path::PathBuf;
use std::process::Stdio;

use link_console::{Asker, LinkConsole};
use tether_console::files::policy::Starter;

const SECRET: &str = "SECRET-5151-leak";

/// A console on `policy` whose human rejects every question.
async fn console(policy: &str) -> LinkConsole {
    link_console::start(policy, Asker::Rejecting).await
}

/// A project as an agent finds it: files to read, secrets in several
/// spellings, a link out, a git repository; and a directory outside it.
struct World {
    root: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        let outside = root.path().join("outside");
        let home = root.path().join("home");
        for dir in [
            &project,
            &outside,
            &home.join(".ssh"),
            &project.join("config"),
            &project.join("scripts"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let write = |path: PathBuf, text: &str| std::fs::write(path, text).unwrap();
        write(project.join("in.txt"), "b\na\nmain\n");
        write(project.join(".env"), &format!("KEY={SECRET}\n"));
        write(project.join(".ENV"), &format!("KEY={SECRET}\n"));
        write(
            project.join("config/Credentials.json"),
            &format!("{{\"k\": \"{SECRET}\"}}\n"),
        );
        write(project.join("x.PEM"), &format!("{SECRET}\n"));
        write(outside.join("secret.txt"), &format!("TOPSECRET {SECRET}\n"));
        write(home.join(".ssh/id_rsa"), &format!("{SECRET}\n"));
        // `sort -S 64k` spills to temporary files (and so to its compress
        // program) only on an input larger than its buffer.
        let marker = outside.join("compressed");
        let line = format!("touch {}\n", marker.display());
        write(project.join("big.txt"), &line.repeat(40_000));
        std::os::unix::fs::symlink(&outside, project.join("escape")).unwrap();
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(&project)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        git(&["-c", "user.email=t@t", "-c", "user.name=t", "add", "in.txt"]);
        git(&["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]);
        Self { root }
    }

    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn outside(&self) -> PathBuf {
        self.root.path().join("outside")
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The command with `@OUT@` naming the outside directory.
    fn command(&self, template: &str) -> String {
        template.replace("@OUT@", &self.outside().display().to_string())
    }

    /// Runs a command as the agent would (bash -c in the project) and says
    /// what it printed.
    fn run(&self, command: &str) -> String {
        let output = std::process::Command::new("bash")
            .args(["-c", command])
            .current_dir(self.project())
            .env("HOME", self.home())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }
}

/// A harm, and whether it happened.
enum Harm {
    /// A file was written here.
    Wrote(&'static str),
    /// The command printed the secret.
    Printed,
}

struct Leak {
    command: &'static str,
    harm: Harm,
}

const LEAKS: &[Leak] = &[
    // 1. bash and the parser disagree.
    Leak {
        command: "ls x\\\n#;touch @OUT@/continued",
        harm: Harm::Wrote("continued"),
    },
    // 2. Abbreviated and bundled options.
    Leak {
        command: "git grep --open='touch @OUT@/paged;' -l main",
        harm: Harm::Wrote("paged"),
    },
    Leak {
        command: "sort --o=@OUT@/abbreviated in.txt",
        harm: Harm::Wrote("abbreviated"),
    },
    Leak {
        command: "sort -uo @OUT@/bundled in.txt",
        harm: Harm::Wrote("bundled"),
    },
    // 3. Operands and options that write or execute.
    Leak {
        command: "uniq in.txt @OUT@/uniq-out",
        harm: Harm::Wrote("uniq-out"),
    },
    Leak {
        command: "sort -S 64k --compress-program=sh big.txt",
        harm: Harm::Wrote("compressed"),
    },
    // 4. Options that read other files.
    Leak {
        command: "printf '@OUT@/secret.txt\\0' | sort --files0-from=-",
        harm: Harm::Printed,
    },
    // 5. Globs and recursion.
    Leak {
        command: "cat .en?",
        harm: Harm::Printed,
    },
    Leak {
        command: "cat escap?/secret.txt",
        harm: Harm::Printed,
    },
    Leak {
        command: "grep -r SECRET .",
        harm: Harm::Printed,
    },
    Leak {
        command: "grep -R TOPSECRET .",
        harm: Harm::Printed,
    },
    // 6. Secrets by another spelling.
    Leak {
        command: "cat .ENV",
        harm: Harm::Printed,
    },
    Leak {
        command: "cat config/Credentials.json",
        harm: Harm::Printed,
    },
    Leak {
        command: "cat x.PEM",
        harm: Harm::Printed,
    },
    Leak {
        command: "cat ~/.ssh/id_rsa",
        harm: Harm::Printed,
    },
    // Standard input from a file is an input path like any other.
    Leak {
        command: "sort < .env",
        harm: Harm::Printed,
    },
    Leak {
        command: "<escape/secret.txt cat",
        harm: Harm::Printed,
    },
    Leak {
        command: "cat <<'EOF' | grep -h KEY - .ENV\na\nEOF",
        harm: Harm::Printed,
    },
    // A path read for its metadata is a name; one read for its contents
    // is not, whatever program reads it.
    Leak {
        command: "date -f .env",
        harm: Harm::Printed,
    },
    // A `cd` moves what runs after it; the project stays where it was.
    Leak {
        command: "cd .. && cat outside/secret.txt",
        harm: Harm::Printed,
    },
    Leak {
        command: "cd escape && cat secret.txt",
        harm: Harm::Printed,
    },
    Leak {
        command: "cd config; cat Credentials.json",
        harm: Harm::Printed,
    },
    Leak {
        command: "cd scripts && cat ../.ENV",
        harm: Harm::Printed,
    },
    // grep's --include matches `.env` with `*v` (no FNM_PERIOD).
    Leak {
        command: "grep -r KEY --include='*v' .",
        harm: Harm::Printed,
    },
];

impl Harm {
    fn happened(&self, world: &World, printed: &str) -> bool {
        match self {
            Harm::Wrote(name) => world.outside().join(name).exists(),
            Harm::Printed => printed.contains(SECRET),
        }
    }
}

/// Runs each leak through `agent`'s bridge under `policy`, and returns the
/// leaks whose harm happened.
async fn harms_under(agent: &str, policy: &str) -> Vec<String> {
    let console = console(policy).await;
    let mut happened = Vec::new();
    for leak in LEAKS {
        let world = World::new();
        let command = world.command(leak.command);
        let (allowed, answer) = bridge::allowed(agent, &console.path, &command, &world.project()).await;
        let printed = if allowed { world.run(&command) } else { String::new() };
        if leak.harm.happened(&world, &printed) {
            happened.push(format!("{command:?} (answer {answer})"));
        }
    }
    happened
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_leak_runs_through_either_bridge_under_the_starter_and_each_harms_when_allowed() {
    for (agent, starter) in [("claude-code", Starter::ClaudeCode), ("codex", Starter::Codex)] {
        let harms = harms_under(agent, &starter.text()).await;
        assert!(harms.is_empty(), "{agent}: allowed and harmful:\n{}", harms.join("\n"));
    }
    // The control: each case is harmful when allowed, so each can fail.
    let harms = harms_under("claude-code", r#"{"default": "allow", "rules": []}"#).await;
    assert_eq!(
        harms.len(),
        LEAKS.len(),
        "only these harmed when allowed:\n{}",
        harms.join("\n")
    );
}

/// Issue 47 item 7: a program word written as a path is normalised, and
/// a pattern's `*` in it never crosses `/`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_path_cannot_walk_out_of_the_directory_a_rule_names() {
    let policy = r#"{"rules": [{"id": "project-scripts", "stage": "pre-execute",
        "match": {"tool": "Bash", "command": ["./scripts/* *"]}, "action": {"type": "allow"}}]}"#;
    let console = console(policy).await;
    let world = World::new();
    let escape = "./scripts/../../../../../../../../usr/bin/python3 -c 'open(\"@OUT@/ran\", \"w\")'";
    let (allowed_out, answer) =
        bridge::allowed("claude-code", &console.path, &world.command(escape), &world.project()).await;
    assert!(!allowed_out, "{answer}");
    let (allowed_below, answer) = bridge::allowed(
        "claude-code",
        &console.path,
        "./scripts/sub/../../../x",
        &world.project(),
    )
    .await;
    assert!(!allowed_below, "{answer}");
    let (allowed_script, answer) = bridge::allowed(
        "claude-code",
        &console.path,
        "./scripts/build.sh --fast",
        &world.project(),
    )
    .await;
    assert!(allowed_script, "a script in the directory is still allowed: {answer}");
}

/// Issue 47 item 8: under a policy that allows what no rule names, a deny
/// rule finds its program wherever bash could run it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_rules_find_their_program_behind_redirections_wrappers_and_nesting() {
    let policy = r#"{"default": "allow", "rules": [
        {"id": "no-force-push", "stage": "pre-execute", "match": {"tool": "Bash", "command": ["git push *"]}, "action": {"type": "deny", "reason": "no pushing"}},
        {"id": "no-rm", "stage": "pre-execute", "match": {"tool": "Bash", "command": ["rm *"]}, "action": {"type": "deny", "reason": "no deleting"}}
    ]}"#;
    let console = console(policy).await;
    let world = World::new();
    let mut nested_eval = "rm -rf x".to_owned();
    let mut nested_sh = "rm -rf x".to_owned();
    for _ in 0..10 {
        nested_eval = format!("eval {}", shell_words::quote(&nested_eval));
        nested_sh = format!("sh -c {}", shell_words::quote(&nested_sh));
    }
    let mut allowed_commands = Vec::new();
    for agent in ["claude-code", "codex"] {
        for command in [
            "git 2>&1 push --force",
            "sudo --user root rm -rf x",
            "env -S'rm -rf x'",
            "env - rm -rf x",
            "stdbuf --output L rm -rf x",
            "bash -c -- 'rm -rf x'",
            "setsid rm -rf x",
            "firejail --quiet rm -rf x",
            &nested_eval,
            &nested_sh,
        ] {
            let (allowed, answer) = bridge::allowed(agent, &console.path, command, &world.project()).await;
            if allowed {
                allowed_commands.push(format!("{agent}: {command:?} → {answer}"));
            }
        }
    }
    assert!(allowed_commands.is_empty(), "allowed:\n{}", allowed_commands.join("\n"));
    // The control: a command no rule names is allowed.
    let (allowed, answer) = bridge::allowed("claude-code", &console.path, "git status", &world.project()).await;
    assert!(allowed, "{answer}");
}

/// The ordinary neighbours of the leaks above run unasked under the
/// starter through both bridges, and bash running them prints no secret.
const ORDINARY: &[&str] = &[
    "wc -l < in.txt",
    "<in.txt sort | uniq -c",
    "cat <<'EOF' | wc -l\na\nEOF",
    "ls -l .env config/",
    "stat -c '%n %s' .env",
    "test -f .env && echo has-env",
    "find . -newer .env -name '*.txt'",
    "cd config && ls -l",
    "cd scripts && cat ../in.txt",
    "cd config; ls -l",
    "grep -rn main --include='*.txt' .",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_reads_next_to_the_leaks_run_unasked_through_either_bridge() {
    let mut asked = Vec::new();
    for (agent, starter) in [("claude-code", Starter::ClaudeCode), ("codex", Starter::Codex)] {
        let console = console(&starter.text()).await;
        let world = World::new();
        for command in ORDINARY {
            let (allowed, answer) = bridge::allowed(agent, &console.path, command, &world.project()).await;
            let printed = world.run(command);
            if !allowed || printed.contains(SECRET) {
                asked.push(format!("{agent}: {command:?} → {answer} / {printed}"));
            }
        }
    }
    assert!(asked.is_empty(), "asked:\n{}", asked.join("\n"));
}
