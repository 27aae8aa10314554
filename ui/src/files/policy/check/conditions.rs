//! The parts of a rule's `match` that hold conditions: its shell `command`
//! patterns (with `command_except` and `command_paths_within`) and its
//! argument conditions (`exists`, `equals`, `regex`, `within`, `outside`),
//! each checked so one mistake hides no other.

use std::sync::Arc;

use regex::Regex;

use super::super::rule::{AsCommand, CommandRule, MatchSpec, Predicate, Roots, ValueMatchSpec};
use super::Commands;
use crate::files::scenario::is_pointer;
use crate::files::source::{Document, FileError};
use crate::paths;
use crate::shell::{CommandMatch, CommandSet, Pattern};

/// A `match`'s `command`, `command_except` and `command_paths_within`.
pub(super) fn command(
    spec: &MatchSpec,
    doc: &Document,
    at: &str,
    commands: Commands<'_>,
    errors: &mut Vec<FileError>,
) -> Option<CommandRule> {
    let Some(patterns) = &spec.command else {
        for (field, given) in [
            ("command_except", spec.command_except.is_some()),
            ("command_paths_within", spec.command_paths_within.is_some()),
        ] {
            if given {
                errors.push(doc.error_at(
                    &format!("{at}/match/{field}"),
                    format!("{field:?} narrows a \"command\" condition, and this match has none"),
                ));
            }
        }
        return None;
    };
    if patterns.is_empty() {
        errors.push(doc.error_at(
            &format!("{at}/match/command"),
            "an empty list of command patterns: expected shell words such as [\"git status *\"]",
        ));
    }
    type Numbered<'p> = Vec<(usize, &'p String)>;
    let (named, written): (Numbered<'_>, Numbered<'_>) =
        patterns.iter().enumerate().partition(|(_, p)| p.starts_with('@'));
    let mut sets = Vec::new();
    for (k, name) in named {
        match CommandSet::named(name) {
            Some(set) => sets.push(set),
            None => errors.push(doc.error_at(
                &format!("{at}/match/command/{k}"),
                format!(
                    "unknown command set {name:?}: expected {}",
                    CommandSet::ALL.map(|s| format!("{:?}", s.name())).join(" or ")
                ),
            )),
        }
    }
    let compiled: Vec<Pattern> = written
        .into_iter()
        .filter_map(|(k, text)| {
            Pattern::parse(text)
                .map_err(|e| errors.push(doc.error_at(&format!("{at}/match/command/{k}"), e.to_string())))
                .ok()
        })
        .collect();
    let mut compile = |field: &str, texts: &[String]| -> Vec<Pattern> {
        texts
            .iter()
            .enumerate()
            .filter_map(|(k, text)| {
                Pattern::parse(text)
                    .map_err(|e| errors.push(doc.error_at(&format!("{at}/match/{field}/{k}"), e.to_string())))
                    .ok()
            })
            .collect()
    };
    let except = compile("command_except", spec.command_except.as_deref().unwrap_or_default());
    let within = spec
        .command_paths_within
        .clone()
        .map(Roots::into_vec)
        .unwrap_or_default();
    check_roots(&within, doc, &format!("{at}/match/command_paths_within"), errors);
    Some(CommandRule {
        matcher: CommandMatch {
            patterns: compiled,
            sets,
            except,
            within,
            polarity: commands.polarity,
        },
        shell_tools: Arc::clone(commands.shell_tools),
        reads: None,
    })
}

/// A `match`'s `as_command`: a reading Tether knows.
pub(super) fn as_command(spec: &MatchSpec, doc: &Document, at: &str, errors: &mut Vec<FileError>) -> Option<AsCommand> {
    let name = spec.as_command.as_deref()?;
    let known = AsCommand::named(name);
    if known.is_none() {
        errors.push(doc.error_at(
            &format!("{at}/match/as_command"),
            format!(
                    "unknown as_command {name:?}: expected {}",
                    AsCommand::ALL
                        .map(|a| format!("{:?} ({}'s arguments as the command it runs)", a.name(), a.tool()))
                        .join(" or ")
                ),
        ));
    }
    known
}

/// A `match`'s `cwd_within`: directories the call's working directory is
/// judged against, so each must be `~/…` or absolute (`cwd` would name the
/// very directory it judges).
pub(super) fn cwd_within(spec: &MatchSpec, doc: &Document, at: &str, errors: &mut Vec<FileError>) -> Vec<String> {
    let Some(roots) = spec.cwd_within.clone().map(Roots::into_vec) else {
        return Vec::new();
    };
    let fixed = |r: &String| r.starts_with('/') || r == "~" || r.starts_with("~/");
    if roots.is_empty() || !roots.iter().all(fixed) {
        errors.push(doc.error_at(
            &format!("{at}/match/cwd_within"),
            format!("expected directories the call's working directory must be in: \"~/…\" or an absolute path, got {roots:?}"),
        ));
    }
    roots
}

/// Every root must be `cwd`, `cwd/DIR`, `~/…` or absolute.
fn check_roots(roots: &[String], doc: &Document, at: &str, errors: &mut Vec<FileError>) {
    if roots.iter().any(|r| !paths::is_root(r)) || roots.is_empty() && doc.value.pointer(at).is_some() {
        errors.push(doc.error_at(
            at,
            format!(
                "expected directories: \"cwd\" (the agent's working directory), \"cwd/DIR\" (one in it), \"~/…\" or an absolute path, got {roots:?}"
            ),
        ));
    }
}

/// What Tether used to write when `s` kept a command-prefix rule: a regex
/// whose `\s` also matches a line break, so it allowed a second command.
const OLD_KEPT_SUFFIX: &str = r"(?:\s[^;&|<>`$\n\r]*)?\s*$";

/// The command pattern an old kept regex meant (`^\s*git\s+status…`).
fn old_kept_pattern(regex: &str) -> Option<String> {
    let words = regex.strip_prefix(r"^\s*")?.strip_suffix(OLD_KEPT_SUFFIX)?;
    let words: Vec<String> = words.split(r"\s+").map(|w| w.replace('\\', "")).collect();
    Some(format!("{} *", crate::shell::join(&words)))
}

pub(super) fn predicate(
    spec: &ValueMatchSpec,
    doc: &Document,
    at: &str,
    errors: &mut Vec<FileError>,
) -> Option<Predicate> {
    let pointer = spec.pointer.clone().unwrap_or_default();
    // A bad pointer does not hide what else is wrong with the condition.
    let pointer_ok = is_pointer(&pointer);
    if !pointer_ok {
        errors.push(doc.error_at(
            &format!("{at}/pointer"),
            format!("invalid JSON pointer {pointer:?}: expected \"\" or a path starting with '/'"),
        ));
    }
    let given: Vec<&str> = [
        ("exists", spec.exists.is_some()),
        ("equals", spec.equals.is_some()),
        ("regex", spec.regex.is_some()),
        ("within", spec.within.is_some()),
        ("outside", spec.outside.is_some()),
        ("secret", spec.secret.is_some()),
    ]
    .iter()
    .filter(|(_, given)| *given)
    .map(|(name, _)| *name)
    .collect();
    if given.len() > 1 {
        errors.push(doc.error_at(
            at,
            format!(
                "{} given together; a condition takes exactly one of \"exists\", \"equals\", \"regex\", \"within\", \"outside\" or \"secret\"",
                given.iter().map(|g| format!("{g:?}")).collect::<Vec<_>>().join(" and ")
            ),
        ));
        return None;
    }
    let predicate = predicate_of(spec, pointer, doc, at, errors);
    predicate.filter(|_| pointer_ok)
}

/// The one test of a well-formed condition (`pointer` checked by the caller).
fn predicate_of(
    spec: &ValueMatchSpec,
    pointer: String,
    doc: &Document,
    at: &str,
    errors: &mut Vec<FileError>,
) -> Option<Predicate> {
    for (field, roots, outside) in [("within", &spec.within, false), ("outside", &spec.outside, true)] {
        if let Some(roots) = roots {
            let roots = roots.clone().into_vec();
            let before = errors.len();
            check_roots(&roots, doc, &format!("{at}/{field}"), errors);
            return (errors.len() == before).then_some(Predicate::Within {
                pointer,
                roots,
                outside,
            });
        }
    }
    if let Some(secret) = spec.secret {
        return Some(Predicate::Secret { pointer, secret });
    }
    if let Some(pattern) = &spec.regex {
        if let Some(rewrite) = old_kept_pattern(pattern) {
            errors.push(doc.error_at(
                &format!("{at}/regex"),
                format!(
                    "this rule was kept by an older Tether: its regex lets a line break start a second command; replace this \"args\" condition with \"command\": [{rewrite:?}] in the rule's \"match\""
                ),
            ));
            return None;
        }
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
