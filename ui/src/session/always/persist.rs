//! Keeping an always-rule beyond the session: it is written into the policy
//! file as an ordinary rule with a generated id. The file is edited as text
//! — one line inserted into the `rules` array — so the user's formatting and
//! comments stay as they were; the result is checked before it is written.

use std::path::Path;

use anyhow::{Context as _, bail};
use jsonc_parser::ast::{ObjectPropName, Value as Node};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde_json::{Value, json};

use super::{AlwaysRule, Fit};
use crate::files::policy::{Policy, Stage};
use crate::files::source::Document;

/// One path component that is neither `.` nor `..`.
const COMPONENT: &str = r"(?:[^./\n][^/\n]*|\.[^./\n][^/\n]*|\.\.[^/\n]+)";

/// The rule as a policy file states it, or why it cannot be stated.
pub fn policy_rule(rule: &AlwaysRule, id: &str) -> anyhow::Result<Value> {
    let tool = globset::escape(&rule.tool);
    let mut command = None;
    let args = match &rule.fit {
        Fit::WholeTool => json!([]),
        Fit::Arguments(value) => json!([{ "pointer": "", "equals": value }]),
        Fit::Command {
            pointer,
            command,
            absent,
        } => std::iter::once(json!({ "pointer": pointer, "equals": command }))
            .chain(absent.iter().map(|p| json!({ "pointer": p, "exists": false })))
            .collect(),
        Fit::Path { key, path } => json!([{ "pointer": format!("/{key}"), "equals": path }]),
        // The text stays under the directory (no `.` or `..` parts), and
        // where it leads does too: a link in the directory that points out of
        // it is not under it, as the session's own rule judges.
        Fit::Directory { key, dir } => json!([{
            "pointer": format!("/{key}"),
            "regex": format!("^{}(?:/{COMPONENT})+$", regex::escape(dir)),
        }, {
            "pointer": format!("/{key}"),
            "within": [if dir.starts_with('/') || dir.starts_with('~') { dir.clone() } else { format!("cwd/{dir}") }],
        }]),
        Fit::CommandPrefix { .. } => {
            // A `command` pattern, read by the same parser that made the rule:
            // every command of a plain script, nothing a regex could miss.
            let pattern = rule.pattern().context(
                "this command has a word a policy pattern would read as a glob; it stays for this session only",
            )?;
            command = Some(json!([pattern.text()]));
            json!([])
        }
    };
    let mut matcher = json!({ "tool": tool });
    if rule.session_id.is_some() {
        // An agent session ends; what lasts is the agent and its project.
        let agent = rule.agent.as_ref().context(
            "this agent has no name beyond its session id (name it with the session's label); it stays for this session",
        )?;
        matcher["agent"] = json!(globset::escape(agent));
        if let Some(cwd) = &rule.cwd {
            matcher["cwd_within"] = json!([cwd]);
        }
    } else if rule.scope_id.is_some() {
        matcher["scope"] = json!(rule.scope_label);
    }
    if let Some(kind) = &rule.agent_type {
        matcher["agent_type"] = json!(globset::escape(kind));
    }
    if args.as_array().is_some_and(|a| !a.is_empty()) {
        matcher["args"] = args;
    }
    if let Some(command) = command {
        matcher["command"] = command;
    }
    Ok(json!({
        "id": id,
        "description": format!("kept from the console: {}", rule.covers()),
        "stage": "pre-execute",
        "match": matcher,
        "action": { "type": "allow" },
    }))
}

/// Writes `rule` into the policy file at `path` and returns its id. It goes
/// just before the rule that asked the call it was made from (its anchor),
/// so every rule that decided before it still decides first; when the
/// policy's default asked (or the anchor is no longer in the file), at the
/// end of the rules. Nothing is written unless the new file loads.
pub fn keep(path: &Path, rule: &AlwaysRule) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let policy = Policy::load(path).map_err(|errors| {
        anyhow::anyhow!(
            "the policy file has errors: {}",
            errors.first().map(ToString::to_string).unwrap_or_default()
        )
    })?;
    let slug: String = rule
        .tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let id = (1..)
        .map(|n| format!("always-{slug}-{n}"))
        .find(|id| policy.rules.iter().all(|r| &*r.id != id))
        .unwrap_or_default();
    let before = rule
        .anchor
        .as_deref()
        .filter(|anchor| super::standing::is_the_files(anchor))
        .and_then(|anchor| {
            policy
                .rules
                .iter()
                .position(|r| r.stage == Stage::PreExecute && &*r.id == anchor)
        });
    let line = serde_json::to_string(&policy_rule(rule, &id)?)?;
    let edited = insert_rule(&text, &line, before)?;
    Document::parse(path.display().to_string(), edited.clone())
        .and_then(|d| Policy::from_document(&d))
        .map_err(|errors| anyhow::anyhow!("the edited policy would not load: {}", errors[0]))?;
    std::fs::write(path, edited).with_context(|| format!("writing {}", path.display()))?;
    Ok(id)
}

/// [`keep`] for the console: the line to show, and whether the policy
/// should now be reloaded.
pub fn keep_into(path: Option<&Path>, rule: &AlwaysRule) -> (String, bool) {
    let Some(path) = path else {
        return (
            "rule not kept: no policy file was given (--policy); it lasts for this session".to_owned(),
            false,
        );
    };
    match keep(path, rule) {
        Ok(id) => (format!("rule kept in {} as {id}", path.display()), true),
        Err(error) => (format!("rule not kept in {}: {error:#}", path.display()), false),
    }
}

/// The text with `rule` inserted into the top-level `rules` array, before
/// element `before` (or at the end), indented like its neighbours.
fn insert_rule(text: &str, rule: &str, before: Option<usize>) -> anyhow::Result<String> {
    let parsed = jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
        .map_err(|e| anyhow::anyhow!("the policy file does not parse: {e}"))?;
    let Some(Node::Object(root)) = parsed.value.as_ref() else {
        bail!("the policy file is not an object");
    };
    let Some(Node::Array(rules)) = root
        .properties
        .iter()
        .find(|p| match &p.name {
            ObjectPropName::String(s) => s.value == "rules",
            ObjectPropName::Word(w) => w.value == "rules",
        })
        .map(|p| &p.value)
    else {
        bail!("the policy file has no \"rules\" array");
    };
    let indent_at = |offset: usize| -> String {
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        text[line_start..offset]
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect()
    };
    let mut out = text.to_owned();
    match (rules.elements.get(before.unwrap_or(usize::MAX)), rules.elements.last()) {
        (Some(element), _) => {
            let at = element.start();
            out.insert_str(at, &format!("{rule},\n{}", indent_at(at)));
        }
        (None, Some(last)) => {
            let at = last.end();
            out.insert_str(at, &format!(",\n{}{rule}", indent_at(last.start())));
        }
        (None, None) => {
            let at = rules.start() + 1;
            let outer = indent_at(rules.start());
            out.insert_str(at, &format!("\n{outer}    {rule}\n{outer}  "));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(fit: Fit) -> AlwaysRule {
        AlwaysRule {
            session_id: None,
            agent_type: None,
            anchor: Some("ask-bash".into()),
            agent: None,
            cwd: None,
            tool: "Bash".into(),
            scope_id: Some(1),
            scope_label: "lab".into(),
            fit,
        }
    }

    #[test]
    fn a_kept_rule_goes_before_the_asking_rule_and_the_rest_of_the_file_is_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.json");
        let original = "{\n  \"name\": \"mine\",\n  \"rules\": [\n    {\"id\": \"no-rm\", \"stage\": \"pre-execute\", \"match\": {\"tool\": \"Bash\", \"args\": [{\"pointer\": \"/command\", \"regex\": \"rm -rf\"}]}, \"action\": {\"type\": \"deny\", \"reason\": \"no\"}},\n    {\"id\": \"ask-bash\", \"stage\": \"pre-execute\", \"match\": {\"tool\": \"Bash\"}, \"action\": {\"type\": \"ask\"}}\n  ]\n}\n";
        std::fs::write(&path, original).unwrap();
        let prefix = rule(Fit::CommandPrefix {
            pointer: "/command".into(),
            prefix: vec!["git".into(), "status".into()],
            rest: true,
        });
        assert_eq!(keep(&path, &prefix).unwrap(), "always-bash-1");
        assert_eq!(keep(&path, &prefix).unwrap(), "always-bash-2");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[3].starts_with("    {\"id\": \"no-rm\""), "{text}");
        assert!(lines[4].starts_with("    {\"id\":\"always-bash-1\""), "{text}");
        assert!(lines[5].starts_with("    {\"id\":\"always-bash-2\""), "{text}");
        assert!(lines[6].starts_with("    {\"id\": \"ask-bash\""), "{text}");
        let policy = Policy::load(&path).unwrap();
        let kept = policy.rules.iter().find(|r| &*r.id == "always-bash-1").unwrap();
        assert!(text.contains(r#""command":["git status *"]"#), "{text}");
        let holds = |command: &str| {
            let call = tether_tools::ToolCall::new("c", "Bash", json!({ "command": command }).to_string());
            let scope = tether_tools::AgentPipelineScope::builder().label("lab").build_root();
            let execution =
                tether_tools::ToolExecution::new(&call, Some(scope), tokio_util::sync::CancellationToken::new());
            kept.matcher.matches(&execution)
        };
        assert!(holds("git status"));
        assert!(holds("git status --short"));
        assert!(holds("git status && git status -s"), "each segment is covered");
        assert!(!holds("git statusx"));
        assert!(!holds("git status; rm -rf /"));
        assert!(
            !holds("git status\ntouch /tmp/p"),
            "a line break starts a second command"
        );
        assert!(!holds("git status\u{b}touch /tmp/p"));
        assert!(!holds("git status $(curl x)"));
        assert!(!holds("git status > out"));
    }

    #[test]
    fn an_empty_rules_array_gets_the_rule_and_a_directory_rule_never_climbs_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.json");
        std::fs::write(&path, "{\"rules\": []}").unwrap();
        let rule = rule(Fit::Directory {
            key: "path".into(),
            dir: "src/ui".into(),
        });
        keep(&path, &rule).unwrap();
        let policy = Policy::load(&path).unwrap();
        let predicate = &policy.rules[0].matcher.args[0];
        assert!(predicate.holds(&json!({"path": "src/ui/a/b.rs"})));
        assert!(!predicate.holds(&json!({"path": "src/ui/../../etc/passwd"})));
        assert!(!predicate.holds(&json!({"path": "src/uix"})));
    }

    /// A kept directory rule judges where a path leads, as the session's
    /// rule does: a link in the directory that points out of it is not in
    /// it, whether the directory was written relative or absolute.
    #[test]
    fn a_kept_directory_rule_does_not_follow_a_link_out_of_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap().join("project");
        std::fs::create_dir_all(project.join("src/ui")).unwrap();
        std::os::unix::fs::symlink("/etc", project.join("src/ui/out")).unwrap();
        for written in ["src/ui".to_owned(), project.join("src/ui").display().to_string()] {
            let path = dir.path().join("policy.json");
            std::fs::write(&path, "{\"rules\": []}").unwrap();
            keep(
                &path,
                &rule(Fit::Directory {
                    key: "path".into(),
                    dir: written.clone(),
                }),
            )
            .unwrap();
            let policy = Policy::load(&path).unwrap();
            let holds = |p: &str| {
                let arguments = json!({ "path": format!("{written}/{p}") });
                policy.rules[0]
                    .matcher
                    .args
                    .iter()
                    .all(|c| c.holds_in(&arguments, Some(&project)))
            };
            assert!(holds("a/b.rs"), "{written}");
            assert!(!holds("out/passwd"), "{written}: the link leads out of the directory");
        }
    }
}

#[cfg(test)]
mod lasting {
    use serde_json::json;
    use tether_tools::{AgentPipelineScope, ToolCall, ToolExecution};

    use super::*;

    /// A call of `Bash` by the agent named `agent` in session `session`, run in `cwd`.
    fn call(agent: &str, session: &str, cwd: &str, command: &str) -> ToolExecution {
        let mut call = ToolCall::new(
            "c",
            "Bash",
            json!({ "command": command, "description": session }).to_string(),
        );
        call.invocation_context = Some(json!({ "cwd": cwd }));
        let scope = AgentPipelineScope::builder()
            .label(agent)
            .session_id(session)
            .build_root();
        ToolExecution::new(&call, Some(scope), Default::default())
    }

    #[test]
    fn a_rule_kept_from_an_agent_session_holds_for_the_agent_in_its_project_in_any_session() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap().join("proj");
        std::fs::create_dir_all(project.join("sub")).unwrap();
        let elsewhere = dir.path().canonicalize().unwrap().join("other");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let cwd = project.display().to_string();
        let made_in = call("my-agent", "session-1", &cwd, "make build");
        let choices = AlwaysRule::choices(
            "Bash",
            made_in.scope().map(|s| s.id()),
            "my-agent",
            made_in.raw_arguments(),
            None,
        );
        let mut rule = choices.into_iter().next().unwrap();
        assert!(matches!(rule.fit, Fit::Command { .. }), "{:?}", rule.fit);
        rule.session_id = Some("session-1".into());
        rule.agent = crate::subagent::agent_of(&made_in);
        rule.cwd = Some(cwd.clone());
        let path = dir.path().join("policy.json");
        std::fs::write(&path, "{\"rules\": []}").unwrap();
        keep(&path, &rule).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("session-1"), "never a session id: {text}");
        let policy = Policy::load(&path).unwrap();
        let holds = |e: &ToolExecution| policy.rules[0].matcher.matches(e);
        assert!(
            holds(&call("my-agent", "session-2", &cwd, "make build")),
            "another session, another description"
        );
        assert!(holds(&call(
            "my-agent",
            "session-3",
            &project.join("sub").display().to_string(),
            "make build"
        )));
        assert!(
            !holds(&call(
                "my-agent",
                "session-2",
                &elsewhere.display().to_string(),
                "make build"
            )),
            "another project"
        );
        assert!(
            !holds(&call("other-agent", "session-2", &cwd, "make build")),
            "another agent"
        );
        assert!(
            !holds(&call("my-agent", "session-2", &cwd, "make deploy")),
            "another command"
        );
        let both = {
            let mut call = ToolCall::new(
                "c",
                "Bash",
                json!({"command": "make build", "cmd": "rm -rf /"}).to_string(),
            );
            call.invocation_context = Some(json!({ "cwd": cwd }));
            let scope = AgentPipelineScope::builder()
                .label("my-agent")
                .session_id("s")
                .build_root();
            ToolExecution::new(&call, Some(scope), Default::default())
        };
        assert!(!holds(&both), "a second command argument is never covered");
    }

    #[test]
    fn an_agent_known_only_by_its_session_id_keeps_no_rule_and_cwd_within_takes_no_relative_directory() {
        let made_in = call("session-1", "session-1", "/tmp", "make build");
        assert_eq!(crate::subagent::agent_of(&made_in), None);
        let mut rule = AlwaysRule::choices("Bash", Some(1), "session-1", made_in.raw_arguments(), None).remove(0);
        rule.session_id = Some("session-1".into());
        let error = policy_rule(&rule, "always-bash-1").unwrap_err();
        assert!(error.to_string().contains("no name beyond its session id"), "{error}");
        let bad = r#"{"rules": [{"id": "r", "stage": "pre-execute", "match": {"cwd_within": "cwd"}, "action": {"type": "allow"}}]}"#;
        let errors = Document::parse("p.json".into(), bad.into())
            .and_then(|d| Policy::from_document(&d))
            .unwrap_err();
        assert!(
            errors[0].to_string().contains("working directory must be in"),
            "{}",
            errors[0]
        );
    }
}
