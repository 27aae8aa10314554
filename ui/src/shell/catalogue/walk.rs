//! What a recursive read reaches: every entry walked as the program walks
//! (ripgrep's own `ignore` walker with its filters, GNU grep's
//! `--include`/`--exclude`, everything), none a secret, and where it
//! follows links, none leading out of the project or to a secret.

use std::cell::RefCell;
use std::path::Path;

use ignore::types::{Types, TypesBuilder};

use super::grepwalk::{self, GrepFilters};
use super::table::{Filter, Walk};
use crate::{paths, secrets};

/// How many entries a recursive read may reach before the command is not
/// covered (each is checked for a secret).
const MAX_ENTRIES: usize = 20_000;

/// Every entry a recursive read of `from` would reach: none a secret, and
/// (following links) none leading out of `root`. With `hidden` an ignoring
/// walk reads hidden files too, still skipping what ignore files name, as
/// `rg --hidden` does. `grep`: GNU grep's filters, with the start as
/// written (`None`: the `.` it reads given no operand).
pub(super) fn walk(
    from: &Path,
    root: &Path,
    (follow, hidden): (bool, bool),
    walk: Walk,
    filters: &[(Filter, &str)],
    grep: Option<(&GrepFilters, Option<&str>)>,
) -> Result<(), String> {
    let mut builder = match grep {
        Some((grep, arg)) => match grepwalk::builder(from, Some(grep), arg) {
            Some(builder) => builder,
            None => return Ok(()),
        },
        None => ignore::WalkBuilder::new(from),
    };
    builder.standard_filters(walk == Walk::Ignoring).follow_links(false);
    if walk == Walk::Ignoring {
        // ripgrep reads `.rgignore` too, whose `!name` lines bring back
        // what `.gitignore` hides (`!.env`).
        builder.add_custom_ignore_filename(".rgignore");
    }
    if hidden {
        builder.hidden(false);
    }
    if walk == Walk::Ignoring && !filters.is_empty() {
        filter(&mut builder, filters, root)?;
    }
    if walk == Walk::OutsideGit {
        builder.filter_entry(|e| e.file_name() != ".git");
    }
    for (seen, entry) in builder.build().enumerate() {
        if seen >= MAX_ENTRIES {
            return Err(format!(
                "more than {MAX_ENTRIES} entries under {}: too many to check for secrets",
                from.display()
            ));
        }
        // What this walk cannot read (a missing start, a directory it may
        // not open) the program, run by the same user, cannot read either.
        let Ok(entry) = entry else {
            continue;
        };
        // Under grep's filters a directory is read only through its files,
        // each judged by its whole path.
        if grep.is_some() && entry.depth() > 0 && entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let inside = path.strip_prefix(root).unwrap_or(path);
        if let Some(why) = secrets::why_path(inside).or_else(|| secrets::bare_config(path)) {
            return Err(format!(
                "a recursive read would reach {}, which may hold secrets: {why}",
                inside.display()
            ));
        }
        if follow && entry.path_is_symlink() {
            let target = paths::resolve(&path.to_string_lossy(), None);
            let Some(target) = target.filter(|t| t.starts_with(root)) else {
                return Err(format!(
                    "{} is a link leading out of the working directory, and this read follows links",
                    inside.display()
                ));
            };
            let within = target.strip_prefix(root).unwrap_or(&target);
            if let Some(why) = secrets::why_path(within).or_else(|| secrets::bare_config(&target)) {
                return Err(format!(
                    "{} is a link to {}, which may hold secrets ({why}), and this read follows links",
                    inside.display(),
                    within.display()
                ));
            }
            if entry.file_type().is_some_and(|t| t.is_symlink()) && path.is_dir() {
                return Err(format!(
                    "{} is a link to a directory, and this read follows links into it",
                    inside.display()
                ));
            }
        }
    }
    Ok(())
}

/// ripgrep's globs and types on a walk that skips hidden and ignored
/// files, applied as ripgrep applies them (relative to the working
/// directory; `-g` before `--iglob`; types cleared, then added, then
/// chosen): a glob or type that names a hidden or ignored file reads it
/// (`rg -g .env KEY` prints `.env`).
fn filter(builder: &mut ignore::WalkBuilder, filters: &[(Filter, &str)], root: &Path) -> Result<(), String> {
    let of = |kind: Filter| filters.iter().filter(move |(f, _)| *f == kind).map(|(_, v)| *v);
    let bad = |value: &str, e: ignore::Error| format!("`{value}`: {e}");
    let mut overrides = ignore::overrides::OverrideBuilder::new(root);
    for (kind, insensitive) in [(Filter::Glob, false), (Filter::IGlob, true)] {
        for glob in of(kind) {
            overrides
                .case_insensitive(insensitive)
                .and_then(|o| o.add(glob))
                .map_err(|e| bad(glob, e))?;
        }
    }
    builder.overrides(overrides.build().map_err(|e| format!("a glob: {e}"))?);
    if let Some(types) = types(filters)? {
        builder.types(types);
    }
    Ok(())
}

/// How many type choices each thread keeps built.
const TYPES_KEPT: usize = 8;

/// A choice of types (each filter with its word), as written.
type Choice = Vec<(Filter, String)>;

thread_local! {
    // Building ripgrep's ~300 default types costs more than the rest of a
    // judgement (about 0.2 ms): the last few choices, built.
    static BUILT: RefCell<Vec<(Choice, Types)>> = const { RefCell::new(Vec::new()) };
}

/// ripgrep's file types as `filters` choose them (cleared, then added, then
/// selected, then negated, as ripgrep applies them); `None` where they
/// choose none, which filters nothing, as ripgrep's defaults alone do.
fn types(filters: &[(Filter, &str)]) -> Result<Option<Types>, String> {
    let chosen: Choice = filters
        .iter()
        .filter(|(f, _)| matches!(f, Filter::Type | Filter::TypeNot | Filter::TypeAdd | Filter::TypeClear))
        .map(|(f, v)| (*f, (*v).to_owned()))
        .collect();
    if chosen.is_empty() {
        return Ok(None);
    }
    if let Some(types) = BUILT.with(|built| {
        built
            .borrow()
            .iter()
            .find(|(c, _)| *c == chosen)
            .map(|(_, t)| t.clone())
    }) {
        return Ok(Some(types));
    }
    let of = |kind: Filter| chosen.iter().filter(move |(f, _)| *f == kind).map(|(_, v)| v.as_str());
    let bad = |value: &str, e: ignore::Error| format!("`{value}`: {e}");
    let mut types = TypesBuilder::new();
    types.add_defaults();
    for name in of(Filter::TypeClear) {
        types.clear(name);
    }
    for def in of(Filter::TypeAdd) {
        types.add_def(def).map_err(|e| bad(def, e))?;
    }
    for name in of(Filter::Type) {
        types.select(name);
    }
    for name in of(Filter::TypeNot) {
        types.negate(name);
    }
    let types = types.build().map_err(|e| format!("a file type: {e}"))?;
    BUILT.with(|built| {
        let mut built = built.borrow_mut();
        if built.len() >= TYPES_KEPT {
            built.remove(0);
        }
        built.push((chosen, types.clone()));
    });
    Ok(Some(types))
}
