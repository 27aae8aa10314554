//! Compiles a policy, reporting every problem at its position: duplicate ids,
//! actions that do not belong to their stage, globs, regexes and pointers
//! that do not compile.

use std::collections::HashSet;
use std::sync::Arc;

use regex::Regex;

use super::Policy;
use super::rule::{Matcher, Predicate, Rule, RuleSpec, ValueMatchSpec};
use super::{PolicySpec, ShellTool, ShellToolSpec};
use crate::files::scenario::is_pointer;
use crate::files::source::{Document, FileError};

pub(super) fn compile(spec: &PolicySpec, doc: &Document) -> Result<Policy, Vec<FileError>> {
    let (rules, mut errors) = compile_rules(spec.rules.iter().enumerate(), doc);
    let shell_tools = shell_tools(&spec.shell_tools, doc, &mut errors);
    errors.sort_by_key(|e| (e.line, e.column));
    if errors.is_empty() {
        Ok(Policy {
            name: spec.name.clone(),
            trust_annotations: spec.trust_annotations.clone(),
            before: super::implicit::before(),
            implicit: super::implicit::after(),
            shell_tools,
            path: None,
            rules,
            refs: super::References::of(doc),
        })
    } else {
        Err(errors)
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

/// The later stage's errors for a policy whose shape is wrong: every rule
/// and shell tool that has its shape is still compiled, so one run reports
/// every error.
pub(super) fn rule_errors(doc: &Document) -> Vec<FileError> {
    let mut errors = Vec::new();
    if let Some(marked) = doc.value.get("shell_tools").and_then(serde_json::Value::as_array) {
        let specs: Vec<ShellToolSpec> = marked
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        // Indices shift past an entry of the wrong shape; only well-shaped
        // lists are checked here, so every error points at its own entry.
        if specs.len() == marked.len() {
            shell_tools(&specs, doc, &mut errors);
        }
    }
    let Some(rules) = doc.value.get("rules").and_then(serde_json::Value::as_array) else {
        return errors;
    };
    let specs: Vec<(usize, RuleSpec)> = rules
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some((i, serde_json::from_value(v.clone()).ok()?)))
        .collect();
    errors.extend(compile_rules(specs.iter().map(|(i, r)| (*i, r)), doc).1);
    errors
}

/// Compiles rules given with their index in the file; every error, sorted.
fn compile_rules<'a>(
    specs: impl Iterator<Item = (usize, &'a RuleSpec)>,
    doc: &Document,
) -> (Vec<Rule>, Vec<FileError>) {
    let mut errors = Vec::new();
    let mut ids = HashSet::new();
    let mut rules = Vec::new();
    for (i, rule) in specs {
        let at = format!("/rules/{i}");
        if !ids.insert(rule.id.as_str()) {
            errors.push(doc.error_at(
                &format!("{at}/id"),
                format!("duplicate rule id {:?}; rule ids must be unique", rule.id),
            ));
        }
        let action = rule.action.name();
        if !rule.stage.actions().contains(&action) {
            errors.push(doc.error_at(
                &format!("{at}/action/type"),
                format!(
                    "action {action:?} does not belong to stage {:?}; expected one of: {}",
                    rule.stage.as_str(),
                    rule.stage.actions().join(", ")
                ),
            ));
        }
        if rule.result.is_some() && rule.stage != super::Stage::PostExecute {
            errors.push(doc.error_at(
                &format!("{at}/result"),
                format!(
                    "\"result\" only applies to post-execute rules, not {:?}",
                    rule.stage.as_str()
                ),
            ));
        }
        let tool = rule.matcher.tool.as_ref().and_then(|pattern| {
            globset::Glob::new(pattern)
                .map(|g| g.compile_matcher())
                .map_err(|e| {
                    errors.push(doc.error_at(&format!("{at}/match/tool"), format!("invalid tool-name glob: {e}")));
                })
                .ok()
        });
        let args = rule
            .matcher
            .args
            .iter()
            .enumerate()
            .filter_map(|(k, p)| predicate(p, doc, &format!("{at}/match/args/{k}"), &mut errors))
            .collect();
        let result = rule
            .result
            .as_ref()
            .and_then(|p| predicate(p, doc, &format!("{at}/result"), &mut errors));
        rules.push(Rule {
            id: Arc::from(rule.id.as_str()),
            stage: rule.stage,
            matcher: Matcher {
                tool,
                scope: rule.matcher.scope.clone(),
                owner: rule.matcher.owner.clone(),
                args,
                metadata: rule
                    .matcher
                    .annotations
                    .iter()
                    .map(|(hint, value)| Predicate::Equals {
                        pointer: format!("/annotations/{}", crate::files::source::escape_segment(hint)),
                        value: value.clone(),
                    })
                    .collect(),
            },
            result,
            action: rule.action.clone(),
        });
    }
    errors.sort_by_key(|e| (e.line, e.column));
    (rules, errors)
}

fn predicate(spec: &ValueMatchSpec, doc: &Document, at: &str, errors: &mut Vec<FileError>) -> Option<Predicate> {
    let pointer = spec.pointer.clone().unwrap_or_default();
    if !is_pointer(&pointer) {
        errors.push(doc.error_at(
            &format!("{at}/pointer"),
            format!("invalid JSON pointer {pointer:?}: expected \"\" or a path starting with '/'"),
        ));
        return None;
    }
    let given = [spec.exists.is_some(), spec.equals.is_some(), spec.regex.is_some()]
        .iter()
        .filter(|g| **g)
        .count();
    if given > 1 {
        errors.push(doc.error_at(at, "expected exactly one of \"exists\", \"equals\" or \"regex\""));
        return None;
    }
    if let Some(pattern) = &spec.regex {
        return match Regex::new(pattern) {
            Ok(regex) => Some(Predicate::Regex { pointer, regex }),
            Err(e) => {
                let first = e.to_string().lines().last().unwrap_or_default().trim().to_owned();
                errors.push(doc.error_at(&format!("{at}/regex"), format!("invalid regex {pattern:?}: {first}")));
                None
            }
        };
    }
    if let Some(value) = &spec.equals {
        return Some(Predicate::Equals {
            pointer,
            value: value.clone(),
        });
    }
    Some(Predicate::Exists {
        pointer,
        exists: spec.exists.unwrap_or(true),
    })
}
