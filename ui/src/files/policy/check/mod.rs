//! Compiles a policy, reporting every problem at its position: duplicate ids,
//! actions that do not belong to their stage, globs, regexes and pointers
//! that do not compile, examples a rule gets wrong. Each rule is read part
//! by part, so a shape error in one part hides no error in another.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::examples::ExamplesSpec;
use super::rule::{Action, CommandRule, MatchSpec, Matcher, Predicate, Rule, Stage, ValueMatchSpec};
use super::{Policy, PolicySpec, ShellTool, ShellToolSpec};
use crate::files::source::{Document, FileError};
use crate::shell::Polarity;

mod conditions;
use conditions::{command, predicate};

/// Checks and compiles a policy whose shape errors (if any) are `shape`:
/// every rule and shell tool is checked part by part, so one run reports
/// every error, and the policy is built only when there is none.
pub(super) fn compile(
    spec: Option<&PolicySpec>,
    shape: Vec<FileError>,
    doc: &Document,
) -> Result<Policy, Vec<FileError>> {
    let shape_errors = shape.len();
    let mut errors = shape;
    let shell_tools = match doc.value.get("shell_tools").and_then(Value::as_array) {
        Some(marked) => {
            let specs: Vec<ShellToolSpec> = marked
                .iter()
                .filter_map(|v| ShellToolSpec::deserialize(v).ok())
                .collect();
            // Indices shift past an entry of the wrong shape; only well-shaped
            // lists are checked here, so every error points at its own entry.
            if specs.len() == marked.len() {
                shell_tools(&specs, doc, &mut errors)
            } else {
                Vec::new()
            }
        }
        None => Vec::new(),
    };
    let rules = compile_rules(doc, &shell_tools.iter().cloned().collect(), &mut errors);
    let reviewers = super::reviewers::compile(doc, &mut errors);
    let only_reviewer = super::reviewers::routing(doc, rules.as_deref(), spec, &mut errors);
    // One mistake, one error: where a check of ours names what is wrong at
    // a place, the schema's more general words about the same place go.
    let specific: std::collections::HashSet<(usize, usize)> =
        errors[shape_errors..].iter().map(|e| (e.line, e.column)).collect();
    let mut index = 0;
    errors.retain(|e| {
        index += 1;
        index > shape_errors || !specific.contains(&(e.line, e.column))
    });
    errors.sort_by_key(|e| (e.line, e.column));
    errors.dedup();
    match (spec, rules) {
        (Some(spec), Some(rules)) if errors.is_empty() => Ok(Policy {
            name: spec.name.clone(),
            trust_annotations: spec.trust_annotations.clone(),
            before: super::implicit::before(),
            implicit: super::implicit::after(
                spec.default.unwrap_or_default(),
                spec.name.as_deref(),
                only_reviewer.as_deref(),
            ),
            reviewers,
            unmatched: spec.default.unwrap_or_default(),
            shell_tools,
            path: None,
            rules,
            refs: super::References::of(doc),
        }),
        _ => Err(errors),
    }
}

/// The marked shell tools: a tool marked once, at a pointer that names an
/// argument (not the whole arguments object).
fn shell_tools(specs: &[ShellToolSpec], doc: &Document, errors: &mut Vec<FileError>) -> Vec<ShellTool> {
    let mut seen = HashSet::new();
    let mut tools = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let at = format!("/shell_tools/{i}");
        if !seen.insert(spec.tool.as_str()) {
            errors.push(doc.error_at(
                &format!("{at}/tool"),
                format!("tool {:?} is marked twice; mark each tool once", spec.tool),
            ));
        }
        let command = spec.command.as_deref().unwrap_or(super::DEFAULT_COMMAND_POINTER);
        if !command.starts_with('/') {
            errors.push(doc.error_at(
                &format!("{at}/command"),
                format!(
                    "invalid JSON pointer {command:?}: expected the argument that holds the command, a path starting with '/' such as \"/command\""
                ),
            ));
            continue;
        }
        tools.push(ShellTool {
            tool: spec.tool.clone(),
            command: command.to_owned(),
        });
    }
    tools
}

/// A field of a rule: absent, read, or present in a shape the schema check
/// reports (`Err`).
fn field<T: DeserializeOwned>(value: &Value, key: &str) -> Result<Option<T>, ()> {
    match value.get(key) {
        None => Ok(None),
        Some(v) => T::deserialize(v).map(Some).map_err(|_| ()),
    }
}

/// Every rule of the file, each checked as far as its shape lets it be;
/// `None` when a rule could not be compiled whole.
fn compile_rules(doc: &Document, shell_tools: &Arc<[ShellTool]>, errors: &mut Vec<FileError>) -> Option<Vec<Rule>> {
    let list = doc.value.get("rules").and_then(Value::as_array)?;
    let mut ids = HashSet::new();
    let compiled: Vec<Option<Rule>> = list
        .iter()
        .enumerate()
        .map(|(i, rule)| compile_rule(i, rule, doc, shell_tools, &mut ids, errors))
        .collect();
    compiled.into_iter().collect()
}

/// One rule: its id among the others, its action against its stage, its
/// globs, regexes and pointers, and its examples, each part checked when it
/// has its shape.
fn compile_rule(
    i: usize,
    rule: &Value,
    doc: &Document,
    shell_tools: &Arc<[ShellTool]>,
    ids: &mut HashSet<String>,
    errors: &mut Vec<FileError>,
) -> Option<Rule> {
    let at = format!("/rules/{i}");
    let before = errors.len();
    let id = field::<String>(rule, "id");
    if let Ok(Some(id)) = &id
        && !ids.insert(id.clone())
    {
        errors.push(doc.error_at(
            &format!("{at}/id"),
            format!("duplicate rule id {id:?}; rule ids must be unique"),
        ));
    }
    let stage = field::<Stage>(rule, "stage");
    let action = field::<Action>(rule, "action");
    if let (Ok(Some(stage)), Ok(Some(action))) = (&stage, &action) {
        let name = action.name();
        if !stage.actions().contains(&name) {
            errors.push(doc.error_at(
                &format!("{at}/action/type"),
                format!(
                    "action {name:?} does not belong to stage {:?}; expected one of: {}",
                    stage.as_str(),
                    stage.actions().join(", ")
                ),
            ));
        }
    }
    // The schema says only that the action fits none of its shapes; the
    // number of approvers is named where the action is.
    if let Some(why) = rule
        .get("action")
        .filter(|a| a.get("type").and_then(Value::as_str) == Some("ask"))
        .and_then(|a| a.get("approvals"))
        .and_then(super::Approvals::refused)
    {
        errors.push(doc.error_at(&format!("{at}/action"), why));
    }
    if let (Some(_), Ok(Some(stage))) = (rule.get("result"), &stage)
        && *stage != Stage::PostExecute
    {
        errors.push(doc.error_at(
            &format!("{at}/result"),
            format!(
                "\"result\" only applies to post-execute rules, not {:?}",
                stage.as_str()
            ),
        ));
    }
    let result = field::<ValueMatchSpec>(rule, "result")
        .map(|spec| spec.and_then(|p| predicate(&p, doc, &format!("{at}/result"), errors)));
    // An allow must cover every command of a script; anything else needs
    // only one command anywhere in it.
    let polarity = match &action {
        Ok(Some(Action::Allow | Action::Accept)) => Polarity::Every,
        _ => Polarity::Any,
    };
    let matcher = matcher(rule.get("match"), doc, &at, Commands { polarity, shell_tools }, errors);
    let (Ok(Some(id)), Ok(Some(stage)), Ok(Some(action)), Ok(result), Some(matcher)) =
        (id, stage, action, result, matcher)
    else {
        return None;
    };
    let compiled = Rule {
        id: Arc::from(id.as_str()),
        stage,
        matcher,
        result,
        action,
    };
    // Examples are only meaningful for a rule that compiled whole.
    if errors.len() == before
        && let Ok(Some(examples)) = field::<ExamplesSpec>(rule, "examples")
    {
        errors.extend(super::examples::check(&compiled, &examples, doc, &at));
    }
    (errors.len() == before).then_some(compiled)
}

/// How a rule's `command` condition reads scripts, and where the policy's
/// marked shell tools keep their commands.
struct Commands<'a> {
    polarity: Polarity,
    shell_tools: &'a Arc<[ShellTool]>,
}

/// A rule's `match`, its glob and every argument predicate checked even
/// when another of its parts has the wrong shape.
fn matcher(
    spec: Option<&Value>,
    doc: &Document,
    at: &str,
    commands: Commands<'_>,
    errors: &mut Vec<FileError>,
) -> Option<Matcher> {
    let Some(spec) = spec else {
        return Some(Matcher::default());
    };
    let before = errors.len();
    let tool = spec.get("tool").and_then(Value::as_str).and_then(|pattern| {
        globset::Glob::new(pattern)
            .map(|g| g.compile_matcher())
            .map_err(|e| {
                errors.push(doc.error_at(&format!("{at}/match/tool"), format!("invalid tool-name glob: {e}")));
            })
            .ok()
    });
    let agent_type = spec.get("agent_type").and_then(Value::as_str).and_then(|pattern| {
        globset::Glob::new(pattern)
            .map(|g| g.compile_matcher())
            .map_err(|e| {
                errors.push(doc.error_at(
                    &format!("{at}/match/agent_type"),
                    format!("invalid subagent-type glob: {e}"),
                ));
            })
            .ok()
    });
    let agent = spec.get("agent").and_then(Value::as_str).and_then(|pattern| {
        globset::Glob::new(pattern)
            .map(|g| g.compile_matcher())
            .map_err(|e| errors.push(doc.error_at(&format!("{at}/match/agent"), format!("invalid agent glob: {e}"))))
            .ok()
    });
    let args: Vec<Predicate> = spec
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(k, p)| {
            let p = ValueMatchSpec::deserialize(p).ok()?;
            predicate(&p, doc, &format!("{at}/match/args/{k}"), errors)
        })
        .collect();
    let spec = MatchSpec::deserialize(spec).ok()?;
    let as_command = conditions::as_command(&spec, doc, at, errors);
    let command = command(&spec, doc, at, commands, errors).map(|c| CommandRule { reads: as_command, ..c });
    let cwd_within = conditions::cwd_within(&spec, doc, at, errors);
    if errors.len() > before {
        return None;
    }
    Some(Matcher {
        command,
        tool,
        agent_type,
        agent,
        cwd_within,
        as_command,
        scope: spec.scope.clone(),
        owner: spec.owner.clone(),
        args,
        metadata: spec
            .annotations
            .iter()
            .map(|(hint, value)| Predicate::Equals {
                pointer: format!("/annotations/{}", crate::files::source::escape_segment(hint)),
                value: value.clone(),
            })
            .collect(),
    })
}
