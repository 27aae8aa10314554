//! `@secret`: whether a command names a secret path in a word it may read
//! the contents of. A word the program's grammar reads only as a name — a
//! path whose metadata only it reads (`ls -l .env`, `stat .env`, `find .
//! -newer .env`), or any word but an input path of a program that reads
//! names only (`test -f .env`, `[ -e .env ]`), or a file grep is told to
//! skip (`--exclude=.env`) — names nothing it prints.

use std::path::Path;

use super::glob::matches_loosely;
use super::grammar::{self, Notes};
use super::program;
use super::table::{Filter, Reads};
use crate::secrets;

/// Whether any word names a secret: as written, or, for a file-name
/// pattern, any of its matches; a word the grammar reads only as a name
/// (see the module) does not count.
pub(super) fn names_secret<'w>(
    words: impl IntoIterator<Item = (&'w str, Option<&'w str>)>,
    cwd: Option<&Path>,
) -> Option<&'static str> {
    let words: Vec<(&str, Option<&str>)> = words.into_iter().collect();
    let mut named = words
        .iter()
        .enumerate()
        .filter_map(|(at, (value, pattern))| secret_in(value, *pattern, cwd).map(|why| (at, why)));
    // Most commands name none: the grammar is read only for one that does.
    let first = named.next()?;
    let names = names_only(&words);
    std::iter::once(first)
        .chain(named)
        .find(|(at, _)| !names.contains(at))
        .map(|(_, why)| why)
}

fn secret_in(value: &str, pattern: Option<&str>, cwd: Option<&Path>) -> Option<&'static str> {
    if let Some(why) = secrets::why(value) {
        return Some(why);
    }
    let pattern = pattern?;
    let cwd = cwd?;
    match matches_loosely(pattern, cwd) {
        Ok(found) => found.iter().find_map(|m| secrets::why(m)),
        // A pattern too wide to expand may match anything.
        Err(_) => Some("a file-name pattern the catalogue cannot expand to check for secrets"),
    }
}

/// The places of the words a catalogued program reads only as names. None
/// when a word is a file-name pattern (its matches may be read otherwise)
/// or the grammar does not read the words whole.
fn names_only(words: &[(&str, Option<&str>)]) -> Vec<usize> {
    let Some(((name, None), args)) = words.split_first() else {
        return Vec::new();
    };
    if args.iter().any(|(_, pattern)| pattern.is_some()) {
        return Vec::new();
    }
    let Some(program) = program(name) else {
        return Vec::new();
    };
    let argv: Vec<&str> = args.iter().map(|(value, _)| *value).collect();
    let Ok(parsed) = grammar::read(program, &argv, &mut Notes::off()) else {
        return Vec::new();
    };
    // A word holding an input path (`-X.env`, `--exclude-from=.env`, or
    // the path itself) is read: never only a name.
    let read = |value: &str| {
        parsed
            .paths
            .iter()
            .any(|p| value == *p || value.starts_with('-') && value.ends_with(p))
    };
    // A file grep is told to skip (`--exclude=.env`) is named, not read.
    let skipped = |value: &str| {
        parsed.filters.iter().any(|(kind, pattern)| {
            matches!(kind, Filter::GrepExclude | Filter::GrepExcludeDir) && value.ends_with(pattern)
        })
    };
    let names_program = parsed.program.reads == Reads::Names;
    argv.iter()
        .enumerate()
        .filter(|(_, value)| !read(value) && (names_program || parsed.metas.contains(value) || skipped(value)))
        .map(|(k, _)| k + 1)
        .collect()
}
