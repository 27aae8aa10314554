//! A compound shell command (`ls && git status`) that several allow rules
//! cover between them, one command each: which rule decides it, and which
//! commands no rule covers.

use std::rc::Rc;

use tether_tools::ToolExecution;

use super::matcher::CommandRule;
use super::{Action, Rule};
use crate::{paths, shell};

/// Allow rules with their `command` condition.
type Candidates<'r> = Vec<(&'r Rule, &'r CommandRule)>;

/// The allow rules with a `command` condition whose other conditions hold
/// for the call, in order, and the call's command as they read it.
fn command_allows<'r>(rules: &'r [Rule], execution: &ToolExecution) -> Option<(Candidates<'r>, Rc<shell::Script>)> {
    let candidates: Vec<(&Rule, &CommandRule)> = rules
        .iter()
        .filter(|r| matches!(r.action, Action::Allow | Action::Accept))
        .filter_map(|r| r.matcher.command.as_ref().map(|c| (r, c)))
        .filter(|(r, _)| r.matcher.holds_besides_command(execution))
        .collect();
    let script = candidates.first()?.1.script(execution)?;
    Some((candidates, script))
}

/// For each command of a plain script, the first allow rule in `rules`
/// that covers it (`None`: no rule covers it).
fn covering<'r>(rules: &'r [Rule], execution: &ToolExecution) -> Option<(Vec<&'r Rule>, Vec<Option<usize>>)> {
    let (candidates, script) = command_allows(rules, execution)?;
    let segments = script.segments.as_ref().ok().filter(|s| !s.is_empty())?;
    let cwd = paths::cwd_of(execution);
    let cover = segments
        .iter()
        .map(|segment| {
            candidates
                .iter()
                .position(|(_, c)| c.matcher.segment_mismatch(segment, cwd.as_deref()).is_none())
        })
        .collect();
    Some((candidates.into_iter().map(|(r, _)| r).collect(), cover))
}

/// The allow rule that decides a compound shell command whose commands
/// are each covered by some allow `command` rule, though by no one rule
/// alone (`ls && git status` under `ls *` and `git status *`): the first of
/// those rules, in `rules`' order. Each rule's other conditions must hold
/// for the call; a script that is not plain is covered by none.
pub fn allowed_by_segments<'r>(rules: &'r [Rule], execution: &ToolExecution) -> Option<&'r Rule> {
    let (candidates, cover) = covering(rules, execution)?;
    if candidates.len() < 2 {
        return None;
    }
    let first = cover.into_iter().collect::<Option<Vec<usize>>>()?.into_iter().min()?;
    candidates.get(first).copied()
}

/// The commands (counted from 0) of a plain compound that no allow rule
/// of `rules` covers, when some rule covers the others: what the prompt
/// marks as the reason it was asked.
pub fn uncovered_commands(rules: &[Rule], execution: &ToolExecution) -> Option<Vec<usize>> {
    let (_, cover) = covering(rules, execution)?;
    let uncovered: Vec<usize> = cover
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_none())
        .map(|(i, _)| i)
        .collect();
    (cover.len() > 1 && !uncovered.is_empty() && uncovered.len() < cover.len()).then_some(uncovered)
}
