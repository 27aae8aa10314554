//! A command judged whole: its program found by name, its file-name
//! patterns expanded as bash would, its words read by the grammar, every
//! input path inside the working directory and no secret, and what a
//! recursive read would reach checked before it runs.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

use super::grammar::{self, Notes};
use super::table::{Filter, Reads, Walk};
use super::{Segment, Word, program};
use crate::{paths, secrets};

/// How many words a file-name pattern may expand to before the command is
/// not covered (each match is judged).
const MAX_MATCHES: usize = 1_000;

/// How many entries a recursive read may reach before the command is not
/// covered (each is checked for a secret).
const MAX_ENTRIES: usize = 20_000;

pub(super) fn judge(segment: &Segment, cwd: Option<&Path>, notes: &mut Notes) -> Result<(), String> {
    let Some(first) = segment.words.first() else {
        return Err("an empty command".into());
    };
    let name = &first.value;
    if first.glob {
        return Err(format!("`{name}`: a program named by a file-name pattern"));
    }
    if name.contains('/') {
        return Err(format!(
            "`{name}` is a program given as a path, which may be anything: the catalogue covers programs found by name"
        ));
    }
    let program = program(name).ok_or_else(|| format!("`{name}` is not in the read-only catalogue"))?;
    notes.note(name, || format!("the program `{}`: {}", program.name, program.about));
    let argv = expand(&segment.words[1..], cwd, notes)?;
    let parsed = grammar::read(program, &argv, notes)?;
    let root = cwd.and_then(|c| paths::root("cwd", Some(c)));
    for path in &parsed.paths {
        input_path(path, cwd, root.as_deref())?;
    }
    let recursive = parsed.program.recurses || parsed.effects.recurses;
    if !recursive {
        return Ok(());
    }
    let root = root.ok_or("a recursive read with no working directory to keep it in")?;
    match parsed.program.reads {
        Reads::Names if parsed.effects.follows_links || parsed.program.follows => Err(format!(
            "`{}` follows links while it descends, which can lead out of the project",
            parsed.program.name
        )),
        Reads::Names => Ok(()),
        Reads::Contents => {
            let starts: Vec<&str> = if parsed.starts.is_empty() {
                vec!["."]
            } else {
                parsed.starts.clone()
            };
            for start in starts.into_iter().filter(|s| *s != "-") {
                let from = paths::resolve(start, cwd).ok_or_else(|| format!("`{start}` cannot be resolved"))?;
                // Where an operand naming nothing on disk is a revision
                // (`git grep KEY HEAD`: a commit's tree may hold a secret
                // the working tree does not) or a pathspec (`:/`, the
                // repository's top), nothing says what it reaches. (For
                // grep and rg such an operand is only an error.)
                if parsed.program.walk == Walk::OutsideGit && std::fs::symlink_metadata(&from).is_err() {
                    return Err(format!(
                        "`{start}` names nothing in the working directory (a revision or a pathspec?): what a recursive read of it reaches is not known"
                    ));
                }
                let walk_as = if parsed.effects.sees_all {
                    Walk::Everything
                } else {
                    parsed.program.walk
                };
                let follows = parsed.effects.follows_links || parsed.program.follows;
                walk(&from, &root, follows, walk_as, &parsed.filters)?;
            }
            Ok(())
        }
    }
}

/// An input path: `-` (standard input), or inside the working directory,
/// links resolved, naming no secret.
fn input_path(path: &str, cwd: Option<&Path>, root: Option<&Path>) -> Result<(), String> {
    if path == "-" {
        return Ok(());
    }
    if let Some(why) = secrets::why(path) {
        return Err(format!("`{path}` may hold secrets: {why}"));
    }
    let root = root.ok_or_else(|| format!("`{path}`: no working directory to judge the path from"))?;
    let resolved = paths::resolve(path, cwd).ok_or_else(|| format!("`{path}` cannot be resolved"))?;
    let inside = resolved
        .strip_prefix(root)
        .map_err(|_| format!("`{path}` is outside the working directory"))?;
    if let Some(why) = secrets::why_path(inside) {
        return Err(format!(
            "`{path}` leads to {}, which may hold secrets: {why}",
            inside.display()
        ));
    }
    Ok(())
}

/// Every entry a recursive read of `from` would reach: none a secret, and
/// (following links) none leading out of `root`.
fn walk(from: &Path, root: &Path, follow: bool, walk: Walk, filters: &[(Filter, &str)]) -> Result<(), String> {
    let mut builder = ignore::WalkBuilder::new(from);
    builder.standard_filters(walk == Walk::Ignoring).follow_links(false);
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
        let path = entry.path();
        let inside = path.strip_prefix(root).unwrap_or(path);
        if let Some(why) = secrets::why_path(inside) {
            return Err(format!(
                "a recursive read would reach {}, which may hold secrets: {why}",
                inside.display()
            ));
        }
        if follow && entry.path_is_symlink() {
            let target = paths::resolve(&path.to_string_lossy(), None);
            if !target.is_some_and(|t| t.starts_with(root)) {
                return Err(format!(
                    "{} is a link leading out of the working directory, and this read follows links",
                    inside.display()
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
    let mut types = ignore::types::TypesBuilder::new();
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
    builder
        .overrides(overrides.build().map_err(|e| format!("a glob: {e}"))?)
        .types(types.build().map_err(|e| format!("a file type: {e}"))?);
    Ok(())
}

/// The words as bash passes them: each file-name pattern replaced by its
/// matches in `cwd`, sorted, or left as written when nothing matches
/// (`nullglob` off).
fn expand(words: &[Word], cwd: Option<&Path>, notes: &mut Notes) -> Result<Vec<String>, String> {
    let mut argv = Vec::with_capacity(words.len());
    for word in words {
        let Some(pattern) = word.pattern.as_deref().filter(|_| word.glob) else {
            argv.push(word.value.clone());
            continue;
        };
        let cwd = cwd.ok_or_else(|| format!("`{}`: no working directory to expand the pattern in", word.value))?;
        let matches = matches(pattern, cwd)?;
        notes.note(&word.value, || match matches.len() {
            0 => "a file-name pattern that matches nothing (bash passes it as written)".into(),
            n => format!("a file-name pattern: {n} match{}", if n == 1 { "" } else { "es" }),
        });
        if matches.is_empty() {
            argv.push(word.value.clone());
        } else {
            argv.extend(matches);
        }
    }
    Ok(argv)
}

/// The names a file-name pattern matches from `cwd`, as bash's globbing
/// finds them: one directory level per component, `*` and `?` never
/// matching a leading `.`. A bracket expression is not expanded (bash's
/// `[[:punct:]]`, `[!\]]`, `[.]` are not globset's: `sort [[:punct:]]*`
/// is `sort -ofoo` to bash and matched nothing here), nor a pattern over a
/// directory holding a name that is not UTF-8 (it cannot be judged as bash
/// passes it) or, for `?`, not ASCII (how `?` counts its characters
/// depends on the shell's locale): such a pattern is not covered.
pub(super) fn matches(pattern: &str, cwd: &Path) -> Result<Vec<String>, String> {
    expand_in(pattern, cwd, false)
}

/// At least every name bash could match (for finding a secret, never for
/// an argv): each bracket expression read as `?`, hidden names matched
/// too, names that are not UTF-8 read lossily.
fn matches_loosely(pattern: &str, cwd: &Path) -> Result<Vec<String>, String> {
    expand_in(&brackets_as_any(pattern), cwd, true)
}

fn expand_in(pattern: &str, cwd: &Path, loose: bool) -> Result<Vec<String>, String> {
    let absolute = pattern.starts_with('/');
    let mut found: Vec<(PathBuf, String)> = vec![(
        if absolute {
            PathBuf::from("/")
        } else {
            cwd.to_path_buf()
        },
        if absolute { "/".to_owned() } else { String::new() },
    )];
    let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    for (k, component) in components.iter().enumerate() {
        let last = k + 1 == components.len();
        let mut next = Vec::new();
        if !has_meta(component) {
            let literal = unescape(component);
            for (dir, shown) in found {
                let path = dir.join(&literal);
                if std::fs::symlink_metadata(&path).is_ok() && (last || path.is_dir()) {
                    next.push((path, join(&shown, &literal)));
                }
            }
        } else {
            if !loose && has_bracket(component) {
                return Err(format!(
                    "`{pattern}` holds a bracket expression, which the catalogue does not expand as bash would"
                ));
            }
            let glob = GlobBuilder::new(&braces_escaped(component))
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| format!("`{pattern}` is a file-name pattern the catalogue cannot expand exactly: {e}"))?
                .compile_matcher();
            let starts_hidden = !loose && (component.starts_with('*') || component.starts_with('?'));
            let may_be_dots = component.starts_with('.');
            for (dir, shown) in found {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                let mut names: Vec<String> = Vec::new();
                for entry in entries.filter_map(|e| e.ok()) {
                    match entry.file_name().into_string() {
                        Ok(name) if loose || name.is_ascii() || !component.contains('?') => names.push(name),
                        Err(name) if loose => names.push(name.to_string_lossy().into_owned()),
                        _ => {
                            return Err(format!(
                                "`{pattern}` is matched against {}, which holds a name that is not UTF-8 (or not ASCII, for `?`): how bash matches it depends on its locale",
                                dir.display()
                            ));
                        }
                    }
                }
                if may_be_dots {
                    names.extend([".".to_owned(), "..".to_owned()]);
                }
                for name in names {
                    if starts_hidden && name.starts_with('.') || !glob.is_match(&name) {
                        continue;
                    }
                    let path = dir.join(&name);
                    if last || path.is_dir() {
                        next.push((path, join(&shown, &name)));
                    }
                    if next.len() > MAX_MATCHES {
                        return Err(format!("`{pattern}` matches more than {MAX_MATCHES} names"));
                    }
                }
            }
        }
        found = next;
    }
    let mut names: Vec<String> = found.into_iter().map(|(_, shown)| shown).collect();
    names.sort();
    Ok(names)
}

fn join(shown: &str, name: &str) -> String {
    match shown {
        "" => name.to_owned(),
        "/" => format!("/{name}"),
        _ => format!("{shown}/{name}"),
    }
}

/// `pattern` with each bracket expression (`[[:space:]]`, `[!a]`) replaced
/// by `?`, which matches any one character as a bracket matches one; an
/// unclosed `[` is literal, as bash reads it.
fn brackets_as_any(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len());
    let mut at = 0;
    while at < chars.len() {
        match chars[at] {
            '\\' => {
                out.extend(&chars[at..(at + 2).min(chars.len())]);
                at += 2;
            }
            '[' => match bracket_end(&chars, at) {
                Some(end) => {
                    out.push('?');
                    at = end + 1;
                }
                None => {
                    out.push_str("\\[");
                    at += 1;
                }
            },
            c => {
                out.push(c);
                at += 1;
            }
        }
    }
    out
}

/// Where the bracket expression opening at `open` closes, as bash reads
/// it: a `]` first (after `!` or `^`) is literal, `[:class:]` is one item.
fn bracket_end(chars: &[char], open: usize) -> Option<usize> {
    let mut at = open + 1;
    if matches!(chars.get(at), Some('!' | '^')) {
        at += 1;
    }
    if chars.get(at) == Some(&']') {
        at += 1;
    }
    while let Some(&c) = chars.get(at) {
        match c {
            ']' => return Some(at),
            '/' => return None,
            '[' if matches!(chars.get(at + 1), Some(':' | '.' | '=')) => {
                let kind = chars[at + 1];
                let close =
                    (at + 2..chars.len().saturating_sub(1)).find(|&k| chars[k] == kind && chars[k + 1] == ']')?;
                at = close + 2;
            }
            '\\' => at += 2,
            _ => at += 1,
        }
    }
    None
}

/// Whether a pattern component holds an unescaped `[` (bash reads one
/// even when nothing closes it: then it is literal, and globset fails).
fn has_bracket(component: &str) -> bool {
    let mut escaped = false;
    for c in component.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' => return true,
            _ => {}
        }
    }
    false
}

/// Whether a pattern component holds an unescaped `*`, `?` or `[`.
fn has_meta(component: &str) -> bool {
    let mut escaped = false;
    for c in component.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
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

/// Bash has no `{a,b}` in a file-name pattern (brace expansion came
/// earlier, and the parser refuses it); globset would read one.
fn braces_escaped(component: &str) -> String {
    let mut out = String::with_capacity(component.len());
    let mut escaped = false;
    for c in component.chars() {
        if !escaped && matches!(c, '{' | '}') {
            out.push('\\');
        }
        escaped = !escaped && c == '\\';
        out.push(c);
    }
    out
}

/// Whether any word names a secret: as written, or, for a file-name
/// pattern, any of its matches.
pub(super) fn names_secret(words: &[Word], cwd: Option<&Path>) -> Option<&'static str> {
    words.iter().find_map(|word| {
        if let Some(why) = secrets::why(&word.value) {
            return Some(why);
        }
        let pattern = word.pattern.as_deref().filter(|_| word.glob)?;
        let cwd = cwd?;
        match matches_loosely(pattern, cwd) {
            Ok(found) => found.iter().find_map(|m| secrets::why(m)),
            // A pattern too wide to expand may match anything.
            Err(_) => Some("a file-name pattern the catalogue cannot expand to check for secrets"),
        }
    })
}
