//! File-name patterns expanded as zsh 5.9 expands them, for the judge:
//! `*`, `?`, `**/` (always recursive, never through a link), zsh's
//! `GLOB_STAR_SHORT` (`**.rs`), and `EXTENDED_GLOB`'s `^` (anything but the
//! rest of the component), `x#` / `x##` (zero / one or more of a character
//! or `?`) and `~` (excluding what matches the pattern after it, `/` and a
//! leading `.` not special there). What is not matched exactly here (a
//! bracket expression, `***/`, which follows links, `*#`, which zsh calls a
//! bad pattern, a name that is not ASCII) leaves the command not covered.
//! `zsh_glob_tests` compares this with the real zsh.

use std::path::{Path, PathBuf};

use super::glob::listed_inside;
use super::shopts::Shopts;
use crate::shell::{Word, Zsh};
use component::{Component, Token, component_matches, sequence, tokens};

/// How many words a pattern may expand to, and how many entries `**/` may
/// pass, before the command is not covered.
const MAX_MATCHES: usize = 1_000;
const MAX_ENTRIES: usize = 20_000;

/// A word's matches when zsh runs the command under `shopts` (sorted), or
/// `None` when zsh does not read it as a pattern there. Every directory
/// it reads must be inside `root` ([`listed_inside`]).
pub(super) fn expand(word: &Word, cwd: &Path, root: &Path, shopts: Shopts) -> Option<Result<Vec<String>, String>> {
    let spelling = match (&word.zsh, shopts.extendedglob) {
        (Zsh::Extended(spelling), true) => spelling.as_str(),
        _ => word.pattern.as_deref().filter(|p| has_meta(p, false))?,
    };
    Some(matches(spelling, shopts.extendedglob, (cwd, root), shopts))
}

/// The names `spelling` (escapes as [`Word::pattern`]'s) matches from
/// `cwd` as zsh matches them, reading no directory outside `root`.
pub(super) fn matches(
    spelling: &str,
    extended: bool,
    (cwd, root): (&Path, &Path),
    shopts: Shopts,
) -> Result<Vec<String>, String> {
    let bad = |why: &str| format!("`{spelling}` as zsh reads it: {why}");
    let inside = |dir: &Path| listed_inside(dir, root, spelling);
    if spelling.starts_with(['~', '=']) {
        return Err(bad("a pattern zsh expands from another directory or a command's path"));
    }
    let mut parts = split(spelling, if extended { '~' } else { '\0' }).into_iter();
    let main = parts.next().unwrap_or_default();
    let excludes: Vec<Vec<Token>> = parts
        .map(|p| match tokens(&p, extended) {
            Ok(Component {
                negated: None, prefix, ..
            }) if !p.is_empty() => Ok(prefix),
            Ok(_) if p.is_empty() => Err(bad("an empty exclusion after `~`")),
            Ok(_) => Err(bad("`^` after `~`")),
            Err(why) => Err(bad(&why)),
        })
        .collect::<Result<_, _>>()?;
    if main.ends_with('/') || main.contains("//") {
        return Err(bad("an empty component (`//` or a trailing `/`)"));
    }
    let absolute = main.starts_with('/');
    let mut found: Vec<(PathBuf, String)> = vec![if absolute {
        (PathBuf::from("/"), "/".to_owned())
    } else {
        (cwd.to_path_buf(), String::new())
    }];
    let components: Vec<String> = split(&main, '/').into_iter().filter(|c| !c.is_empty()).collect();
    for (k, component) in components.iter().enumerate() {
        let last = k + 1 == components.len();
        let starshort = shopts.globstar && component.starts_with("**");
        if component.starts_with("***") && (!last || starshort) {
            return Err(bad(
                "`***/` follows links to directories, which can lead out of the project",
            ));
        }
        let mut next = Vec::new();
        let rest = if component == "**" && !last {
            None
        } else if starshort {
            // `**.rs` is `**/*.rs`, a last `**` is `**/*`.
            Some(format!("*{}", component.trim_start_matches('*')))
        } else {
            Some(component.clone())
        };
        let recursive = component == "**" && !last || starshort;
        if recursive {
            let mut dirs = Vec::new();
            for (dir, shown) in &found {
                inside(dir)?;
                dirs.push((dir.clone(), shown.clone()));
                below(dir, shown, shopts.dotglob, &mut dirs).map_err(|why| bad(&why))?;
            }
            found = dirs;
        }
        let Some(rest) = rest else {
            continue;
        };
        if !has_meta(&rest, extended) {
            let literal = unescape(&rest);
            for (dir, shown) in found {
                inside(&dir)?;
                for name in literal_matches(&dir, &literal, shopts.nocaseglob).map_err(|why| bad(&why))? {
                    let path = dir.join(&name);
                    if last || path.is_dir() {
                        next.push((path, join(&shown, &name)));
                    }
                }
            }
        } else {
            let pattern = tokens(&rest, extended).map_err(|why| bad(&why))?;
            // How `?` counts characters, and how case folds past ASCII,
            // depend on zsh's locale.
            let ascii = pattern.counts() || shopts.nocaseglob && !rest.is_ascii();
            for (dir, shown) in found {
                inside(&dir)?;
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.filter_map(|e| e.ok()) {
                    let name = entry
                        .file_name()
                        .into_string()
                        .ok()
                        .filter(|n| !ascii || n.is_ascii())
                        .ok_or_else(|| {
                            bad(&format!(
                                "{} holds a name that is not UTF-8 (or not ASCII, for `?`)",
                                dir.display()
                            ))
                        })?;
                    if !component_matches(&pattern, &name, shopts) {
                        continue;
                    }
                    let path = dir.join(&name);
                    if last || path.is_dir() {
                        next.push((path, join(&shown, &name)));
                    }
                    if next.len() > MAX_MATCHES {
                        return Err(bad(&format!("more than {MAX_MATCHES} matches")));
                    }
                }
            }
        }
        found = next;
    }
    let mut names: Vec<String> = found
        .into_iter()
        .map(|(_, shown)| shown)
        .filter(|shown| {
            !excludes
                .iter()
                .any(|x| sequence(x, &shown.chars().collect::<Vec<_>>(), shopts.nocaseglob))
        })
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The names in `dir` a literal component matches: itself if it exists,
/// or with `NO_CASE_GLOB` every entry equal to it in any case.
fn literal_matches(dir: &Path, literal: &str, nocase: bool) -> Result<Vec<String>, String> {
    if !nocase || literal == "." || literal == ".." || !literal.chars().any(|c| c.is_ascii_alphabetic()) {
        let exists = std::fs::symlink_metadata(dir.join(literal)).is_ok();
        return Ok(if exists { vec![literal.to_owned()] } else { Vec::new() });
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry
            .file_name()
            .into_string()
            .ok()
            .filter(|n| n.is_ascii())
            .ok_or_else(|| format!("{} holds a name that is not ASCII", dir.display()))?;
        if name.eq_ignore_ascii_case(literal) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Every directory below `dir` as `**/` walks it: real directories only
/// (never through a link), hidden ones only with `GLOB_DOTS`.
fn below(dir: &Path, shown: &str, hidden: bool, out: &mut Vec<(PathBuf, String)>) -> Result<(), String> {
    let mut stack = vec![(dir.to_path_buf(), shown.to_owned())];
    let mut seen = 0;
    while let Some((dir, shown)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(format!("`**/` passes more than {MAX_ENTRIES} entries"));
            }
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = entry
                .file_name()
                .into_string()
                .map_err(|_| format!("{} holds a name that is not UTF-8", dir.display()))?;
            if !hidden && name.starts_with('.') {
                continue;
            }
            let named = join(&shown, &name);
            out.push((entry.path(), named.clone()));
            stack.push((entry.path(), named));
        }
    }
    Ok(())
}

/// `text` split at each unescaped `at`, escapes kept.
fn split(text: &str, at: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in text.chars() {
        if c == at && !escaped {
            parts.push(String::new());
        } else if let Some(last) = parts.last_mut() {
            last.push(c);
        }
        escaped = !escaped && c == '\\';
    }
    parts
}

/// Whether a component holds an unescaped pattern character.
pub(super) fn has_meta(component: &str, extended: bool) -> bool {
    let mut escaped = false;
    for c in component.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
            '^' | '#' if extended => return true,
            _ => {}
        }
    }
    false
}

fn unescape(component: &str) -> String {
    let mut out = String::with_capacity(component.len());
    let mut chars = component.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

fn join(shown: &str, name: &str) -> String {
    match shown {
        "" => name.to_owned(),
        "/" => format!("/{name}"),
        _ => format!("{shown}/{name}"),
    }
}

#[path = "zsh_match.rs"]
mod component;

#[cfg(test)]
#[path = "zsh_glob_tests.rs"]
mod zsh_glob_tests;

#[cfg(test)]
#[path = "zsh_tests.rs"]
mod tests;
