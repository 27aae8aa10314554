//! `@secret`: whether a command names a secret path in a word it may read
//! the contents of. A word the program's grammar reads only as a name — a
//! path whose metadata only it reads (`ls -l .env`, `stat .env`, `find .
//! -newer .env`), or any word but an input path of a program that reads
//! names only (`test -f .env`, `[ -e .env ]`), or a file grep is told to
//! skip (`--exclude=.env`) — names nothing it prints.
//!
//! It sees what the allow side sees: a word is read from the directory the
//! command runs in (where an earlier `cd` left it: `cd .git && cat config`
//! reads `.git/config`), and a file-name pattern by every name bash or zsh
//! could expand it to there (zsh's `**.env` and `EXTENDED_GLOB` forms
//! too). What cannot be told names a secret.

use std::path::{Component, Path, PathBuf};

use super::glob::{brackets_as_any, matches_loosely};
use super::grammar::{self, Notes};
use super::program;
use super::shopts::Shopts;
use super::table::{Filter, Reads};
use super::zsh;
use crate::secrets;
use crate::shell::{Word, Zsh};

/// Where a command's words are read from.
#[derive(Clone, Copy, Debug)]
pub(super) struct At<'p> {
    /// The directory the command runs in (its patterns expand there).
    pub dir: Option<&'p Path>,
    /// The same directory relative to the one the agent works in, when an
    /// earlier `cd` moved it there (`.git`): a relative word is also read
    /// with it in front.
    pub moved: Option<&'p Path>,
}

/// Whether any word names a secret: as written, from where the command
/// runs, or, for a file-name pattern, any of its matches; a word the
/// grammar reads only as a name (see the module) does not count.
pub(super) fn names_secret(words: &[Word], at: At<'_>) -> Option<&'static str> {
    let mut named = words
        .iter()
        .enumerate()
        .filter_map(|(k, word)| secret_in(word, at).map(|why| (k, why)));
    // Most commands name none: the grammar is read only for one that does.
    let first = named.next()?;
    let names = names_only(words);
    std::iter::once(first)
        .chain(named)
        .find(|(k, _)| !names.contains(k))
        .map(|(_, why)| why)
}

/// Whether a path as written names a secret, read from where the command
/// runs (`config` after `cd .git`; `--file=config` and `HEAD:config` too).
pub(super) fn path_secret(value: &str, at: At<'_>) -> Option<&'static str> {
    secrets::why(value).or_else(|| {
        let moved = at.moved?;
        value
            .split(['=', ':'])
            .filter(|piece| !piece.is_empty() && !piece.starts_with(['/', '~']))
            .find_map(|piece| secrets::why_path(&below(moved, piece)))
    })
}

/// `piece` read from `moved`, `.` and `..` taken by name (`.git/../x` is
/// `x`), as bash's `cd` and the allow side's paths read them.
fn below(moved: &Path, piece: &str) -> PathBuf {
    let mut out = moved.to_path_buf();
    for part in Path::new(piece).components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn secret_in(word: &Word, at: At<'_>) -> Option<&'static str> {
    if let Some(why) = path_secret(&word.value, at) {
        return Some(why);
    }
    if !word.glob {
        return None;
    }
    let Some(dir) = at.dir else {
        return Some("a file-name pattern with no working directory to expand it in");
    };
    let expansions = expansions(word, dir);
    let mut found = None;
    for matched in expansions {
        match matched {
            Ok(names) => found = found.or_else(|| names.iter().find_map(|m| path_secret(m, at))),
            // A pattern too wide to expand may match anything.
            Err(_) => return Some("a file-name pattern the catalogue cannot expand to check for secrets"),
        }
    }
    found
}

/// At least every name a pattern word may become in `dir`: as bash
/// expands it under any options, and as zsh does (`**.env` recursive
/// under `GLOB_STAR_SHORT`, `^x` every other name under `EXTENDED_GLOB`).
fn expansions(word: &Word, dir: &Path) -> Vec<Result<Vec<String>, String>> {
    let widest = Shopts {
        zsh: true,
        extendedglob: false,
        ..Shopts::WIDEST
    };
    // Looking for a secret, any directory may be listed.
    let anywhere = Path::new("/");
    let mut all = Vec::new();
    if let Some(pattern) = word.pattern.as_deref() {
        all.push(matches_loosely(pattern, dir));
        // zsh matches what bash does but for `**` inside a component.
        if pattern.contains("**") {
            all.push(zsh::matches(&brackets_as_any(pattern), false, (dir, anywhere), widest));
        }
    }
    if let Zsh::Extended(spelling) = &word.zsh {
        let extended = Shopts {
            extendedglob: true,
            ..widest
        };
        all.push(zsh::matches(
            &brackets_as_any(spelling),
            true,
            (dir, anywhere),
            extended,
        ));
    }
    all
}

/// The places of the words a catalogued program reads only as names. None
/// when a word is a file-name pattern (its matches may be read otherwise)
/// or the grammar does not read the words whole.
fn names_only(words: &[Word]) -> Vec<usize> {
    let Some((name, args)) = words.split_first() else {
        return Vec::new();
    };
    if name.glob || args.iter().any(|w| w.glob) {
        return Vec::new();
    }
    let Some(program) = program(&name.value) else {
        return Vec::new();
    };
    let argv: Vec<&str> = args.iter().map(|w| w.value.as_str()).collect();
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
