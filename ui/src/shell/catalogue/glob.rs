//! File-name patterns expanded as bash expands them, for the judge: the
//! words a pattern becomes in the working directory, exactly where bash's
//! reading is known, and at least every name it could match where a
//! secret is looked for.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

pub(super) use super::shopts::Shopts;

/// How many words a file-name pattern may expand to before the command is
/// not covered (each match is judged).
const MAX_MATCHES: usize = 1_000;

/// How many entries `**` may pass under `globstar` before the pattern is
/// not covered.
const MAX_STAR_ENTRIES: usize = 20_000;

/// Whether a pattern has a `**` component, which `globstar` changes.
pub(super) fn has_globstar(pattern: &str) -> bool {
    pattern.split('/').any(|c| c == "**")
}

/// The names a file-name pattern matches from `cwd`, as bash's globbing
/// finds them: one directory level per component, `*` and `?` never
/// matching a leading `.`. A bracket expression is not expanded (bash's
/// `[[:punct:]]`, `[!\]]`, `[.]` are not globset's: `sort [[:punct:]]*`
/// is `sort -ofoo` to bash and matched nothing here), nor a pattern over a
/// directory holding a name that is not UTF-8 (it cannot be judged as bash
/// passes it) or, for `?`, not ASCII (how `?` counts its characters
/// depends on the shell's locale): such a pattern is not covered. Every
/// directory it lists or looks a name up in must be inside `root` (see
/// [`listed_inside`]).
pub(super) fn matches(pattern: &str, cwd: &Path, root: &Path, shopts: Shopts) -> Result<Vec<String>, String> {
    expand_in(pattern, cwd, Some(root), shopts)
}

/// Refuses a pattern that lists (or looks a name up in) a directory
/// outside `root` once links are resolved: the names of that directory
/// are read, whatever the program does with them. Checked on the directory
/// itself, not the pattern's spelling: bash hands `link/..` to `opendir`,
/// and the kernel takes `..` from the link's target, so `echo link/../*`
/// lists the parent of wherever `link` points (`src/../*` stays inside).
/// A directory that cannot be resolved cannot be listed either.
pub(super) fn listed_inside(dir: &Path, root: &Path, pattern: &str) -> Result<(), String> {
    match std::fs::canonicalize(dir) {
        Ok(real) if !real.starts_with(root) => Err(format!(
            "`{pattern}` lists the names of {}, a directory outside the working directory (links resolved)",
            real.display()
        )),
        _ => Ok(()),
    }
}

/// At least every name bash could match under any shell options (for
/// finding a secret, never for an argv): each bracket expression read as
/// `?`, hidden names matched too, in any case, `**` at any depth, names
/// that are not UTF-8 read lossily.
pub(super) fn matches_loosely(pattern: &str, cwd: &Path) -> Result<Vec<String>, String> {
    expand_in(&brackets_as_any(pattern), cwd, None, Shopts::WIDEST)
}

/// `root`: where every directory read must be (`None`: the loose reading,
/// which only looks for secrets).
fn expand_in(pattern: &str, cwd: &Path, root: Option<&Path>, shopts: Shopts) -> Result<Vec<String>, String> {
    let loose = root.is_none();
    let inside = |dir: &Path| root.map_or(Ok(()), |root| listed_inside(dir, root, pattern));
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
        if shopts.globstar && *component == "**" {
            for (dir, shown) in found {
                inside(&dir)?;
                if !last {
                    next.push((dir.clone(), shown.clone()));
                }
                below(&dir, &shown, last, shopts.dotglob || loose, loose, &mut next)
                    .map_err(|why| format!("`{pattern}` under globstar: {why}"))?;
            }
        } else if !has_meta(component) {
            let literal = unescape(component);
            for (dir, shown) in found {
                inside(&dir)?;
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
            let glob = compiled(component, shopts.nocaseglob)
                .map_err(|e| format!("`{pattern}` is a file-name pattern the catalogue cannot expand exactly: {e}"))?;
            let starts_hidden = !loose && !shopts.dotglob && (component.starts_with('*') || component.starts_with('?'));
            let may_be_dots = component.starts_with('.');
            for (dir, shown) in found {
                inside(&dir)?;
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

/// What `**` matches below `dir` under `globstar`, as bash 5.2 walks it:
/// every entry at any depth (`last`) or every directory, hidden ones only
/// with `dotglob`, never descending through a link; a name that is not
/// UTF-8 is read lossily only when `loose`.
fn below(
    dir: &Path,
    shown: &str,
    last: bool,
    hidden: bool,
    loose: bool,
    out: &mut Vec<(PathBuf, String)>,
) -> Result<(), String> {
    let mut stack = vec![(dir.to_path_buf(), shown.to_owned())];
    let mut seen = 0;
    while let Some((dir, shown)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            seen += 1;
            if seen > MAX_STAR_ENTRIES || out.len() > MAX_MATCHES {
                return Err(format!("more than {MAX_MATCHES} matches or {MAX_STAR_ENTRIES} entries"));
            }
            let name = match entry.file_name().into_string() {
                Ok(name) => name,
                Err(name) if loose => name.to_string_lossy().into_owned(),
                Err(_) => return Err(format!("{} holds a name that is not UTF-8", dir.display())),
            };
            if !hidden && name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let is_link_to_dir = entry.file_type().is_ok_and(|t| t.is_symlink()) && path.is_dir();
            let named = join(&shown, &name);
            if last || is_dir || is_link_to_dir {
                out.push((path.clone(), named.clone()));
            }
            if is_dir {
                stack.push((path, named));
            }
        }
    }
    Ok(())
}

/// How many compiled components each thread keeps.
const COMPILED: usize = 32;

thread_local! {
    // The same call's patterns are expanded for several rules and under
    // several shell options: each is compiled once.
    static RECENT: RefCell<Vec<(String, bool, GlobMatcher)>> = const { RefCell::new(Vec::new()) };
}

/// One pattern component as a matcher (bash has no `{a,b}` here).
fn compiled(component: &str, insensitive: bool) -> Result<GlobMatcher, globset::Error> {
    let hit = RECENT.with(|recent| {
        recent
            .borrow()
            .iter()
            .find(|(c, i, _)| c == component && *i == insensitive)
            .map(|(_, _, m)| m.clone())
    });
    if let Some(matcher) = hit {
        return Ok(matcher);
    }
    let matcher = GlobBuilder::new(&braces_escaped(component))
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(insensitive)
        .build()?
        .compile_matcher();
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        if recent.len() >= COMPILED {
            recent.remove(0);
        }
        recent.push((component.to_owned(), insensitive, matcher.clone()));
    });
    Ok(matcher)
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
pub(super) fn brackets_as_any(pattern: &str) -> String {
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

/// Whether a pattern (component) holds an unescaped `*`, `?` or `[`.
pub(super) fn has_meta(component: &str) -> bool {
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
