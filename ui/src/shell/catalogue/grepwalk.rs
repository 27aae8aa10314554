//! GNU grep's `--include`, `--exclude` and `--exclude-dir` applied to a
//! recursive read as grep 3.8 applies them (gnulib's `exclude.c`): a file
//! met while descending is matched by its base name, a file or directory
//! named on the command line by its whole name or any part after a `/`;
//! patterns are `fnmatch` without `FNM_PERIOD` or `FNM_PATHNAME` (`*v`
//! matches `.env`, `*` matches `/`); the last `--include`/`--exclude` that
//! matches decides, and a file none matches is read unless the first of
//! them was an `--include`. `--exclude-dir` skips a directory met while
//! descending, or named on the command line (not the `.` grep reads when
//! given no operand). Only `*`, `?`, `\` and plain characters are read: a
//! bracket or a brace in a pattern is not covered; a `?` against a name
//! that is not ASCII (one character or several bytes, by the locale) is
//! taken as a match to read, never to skip.

use std::path::Path;

use super::table::Filter;

/// The filters of one grep command.
#[derive(Clone, Debug, Default)]
pub(super) struct GrepFilters {
    /// `--include` (true) and `--exclude` (false) patterns, in order.
    files: Vec<(bool, String)>,
    /// `--exclude-dir` patterns, trailing slashes stripped.
    dirs: Vec<String>,
}

impl GrepFilters {
    /// The grep filters among a command's, or `None` when it has none.
    pub(super) fn of(filters: &[(Filter, &str)]) -> Result<Option<Self>, String> {
        let mut grep = Self::default();
        for (kind, pattern) in filters {
            let readable = |p: &str| {
                if p.contains(['[', ']', '{', '}']) || p.ends_with('\\') {
                    Err(format!(
                        "`{p}`: a bracket, a brace or a trailing backslash in a grep pattern is not read by the catalogue"
                    ))
                } else {
                    Ok(p.to_owned())
                }
            };
            match kind {
                Filter::GrepInclude => grep.files.push((true, readable(pattern)?)),
                Filter::GrepExclude => grep.files.push((false, readable(pattern)?)),
                Filter::GrepExcludeDir => {
                    let trimmed = pattern.trim_end_matches('/');
                    grep.dirs
                        .push(readable(if trimmed.is_empty() { pattern } else { trimmed })?);
                }
                _ => {}
            }
        }
        Ok((!grep.files.is_empty() || !grep.dirs.is_empty()).then_some(grep))
    }

    /// Whether grep skips a start: `arg` as written (`None`: the `.` it
    /// reads when given no operand).
    pub(super) fn skips_start(&self, arg: Option<&str>, is_dir: bool) -> bool {
        match (arg, is_dir) {
            (None, _) => false,
            (Some(arg), true) => excluded(&self.dirs, arg, false),
            (Some(arg), false) => self.skips_file(arg, false),
        }
    }

    /// Whether grep skips an entry met while descending (by base name).
    pub(super) fn skips_entry(&self, name: Option<&str>, is_dir: bool) -> bool {
        let Some(name) = name else {
            return false;
        };
        if is_dir {
            excluded(&self.dirs, name, true)
        } else {
            self.skips_file(name, true)
        }
    }

    fn skips_file(&self, name: &str, anchored: bool) -> bool {
        let Some((first_include, _)) = self.files.first() else {
            return false;
        };
        for (include, pattern) in self.files.iter().rev() {
            match matches(pattern, name, anchored) {
                Some(true) => return !include,
                Some(false) => {}
                // Not known: read it.
                None => return false,
            }
        }
        *first_include
    }
}

/// Whether an exclude-only list skips `name`.
fn excluded(patterns: &[String], name: &str, anchored: bool) -> bool {
    patterns.iter().any(|p| matches(p, name, anchored) == Some(true))
}

/// gnulib's `exclude_fnmatch`: the whole name, or (not anchored) any part
/// after a `/` not followed by another `/`. `None`: not known.
fn matches(pattern: &str, name: &str, anchored: bool) -> Option<bool> {
    if fnmatch(pattern, name)? {
        return Some(true);
    }
    if !anchored {
        let bytes = name.as_bytes();
        for (at, b) in bytes.iter().enumerate() {
            if *b == b'/' && bytes.get(at + 1).is_some_and(|n| *n != b'/') && fnmatch(pattern, &name[at + 1..])? {
                return Some(true);
            }
        }
    }
    Some(false)
}

/// `fnmatch(pattern, name, 0)` for `*`, `?`, `\` and plain characters.
fn fnmatch(pattern: &str, name: &str) -> Option<bool> {
    if pattern.contains('?') && !name.is_ascii() {
        return None;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    Some(glob_at(&p, &n))
}

fn glob_at(p: &[char], n: &[char]) -> bool {
    match p.split_first() {
        None => n.is_empty(),
        Some(('*', rest)) => (0..=n.len()).any(|k| glob_at(rest, &n[k..])),
        Some(('?', rest)) => !n.is_empty() && glob_at(rest, &n[1..]),
        Some(('\\', rest)) => match rest.split_first() {
            Some((c, rest)) => n.first() == Some(c) && glob_at(rest, &n[1..]),
            None => n.first() == Some(&'\\') && n.len() == 1,
        },
        Some((c, rest)) => n.first() == Some(c) && glob_at(rest, &n[1..]),
    }
}

/// The walk a grep reads, its filters applied: `None` when grep skips the
/// start itself.
pub(super) fn builder(from: &Path, grep: Option<&GrepFilters>, arg: Option<&str>) -> Option<ignore::WalkBuilder> {
    let mut builder = ignore::WalkBuilder::new(from);
    builder.standard_filters(false).follow_links(false);
    if let Some(grep) = grep {
        if grep.skips_start(arg, from.is_dir()) {
            return None;
        }
        let grep = grep.clone();
        builder.filter_entry(move |e| {
            e.depth() == 0
                || e.file_type().is_some_and(|t| t.is_symlink())
                || !grep.skips_entry(e.file_name().to_str(), e.file_type().is_some_and(|t| t.is_dir()))
        });
    }
    Some(builder)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::BTreeSet;
    use std::path::PathBuf;
    use std::process::Command;

    use super::*;

    const FILES: &[&str] = &[
        "a.rs",
        "b.txt",
        ".env",
        ".envrc",
        "credentials.json",
        "x y.rs",
        "sub/.env",
        "sub/c.rs",
        "sub/deep/d.rs",
        "sub/sub/e.txt",
        ".hidden/x.rs",
        "dir.rs/f.txt",
        "deep/g.rs",
    ];

    /// Filters as a command gives them, each with the operands it is tried on.
    const FILTERS: &[&[&str]] = &[
        &["--include=*.rs"],
        &["--exclude=.env"],
        &["--include=*v"],
        &["--exclude=*.rs", "--include=*.rs"],
        &["--include=*.rs", "--exclude=a*"],
        &["--include=*.rs", "--exclude=*", "--include=*.txt"],
        &["--exclude-dir=sub"],
        &["--exclude-dir=sub/", "--include=*.rs"],
        &["--exclude-dir=.hidden", "--include=*.rs"],
        &["--exclude-dir=deep", "--exclude=*.txt"],
        &["--exclude=.env", "--exclude=credentials*", "--exclude=.envrc"],
        &["--include=*.r?"],
        &["--exclude=*"],
        &["--include=\\.env"],
        &["--exclude=sub"],
        &["--exclude-dir=*", "--include=*.rs"],
        &["--exclude=*/c.rs"],
        &["--exclude-dir=s*b"],
    ];

    const OPERANDS: &[&[&str]] = &[
        &[],
        &["."],
        &["sub"],
        &["./sub/c.rs", ".env"],
        &["sub/", "a.rs"],
        &["sub/deep"],
    ];

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in FILES {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "a line\n").unwrap();
        }
        dir
    }

    fn relative(root: &Path, path: &Path) -> PathBuf {
        path.canonicalize().unwrap().strip_prefix(root).unwrap().to_path_buf()
    }

    /// What the real GNU grep reads: every file it lists for `-rl ''`.
    fn grep_reads(root: &Path, filters: &[&str], operands: &[&str]) -> BTreeSet<PathBuf> {
        let out = Command::new("grep")
            .arg("-rl")
            .arg("")
            .args(filters)
            .args(operands)
            .current_dir(root)
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| relative(root, &root.join(l)))
            .collect()
    }

    /// What the catalogue's walk reaches under the same filters.
    fn walk_reaches(root: &Path, filters: &[&str], operands: &[&str]) -> BTreeSet<PathBuf> {
        let read: Vec<(Filter, &str)> = filters
            .iter()
            .map(|f| {
                let (name, value) = f.split_once('=').unwrap();
                let kind = match name {
                    "--include" => Filter::GrepInclude,
                    "--exclude" => Filter::GrepExclude,
                    _ => Filter::GrepExcludeDir,
                };
                (kind, value)
            })
            .collect();
        let grep = GrepFilters::of(&read).unwrap().unwrap();
        let starts: Vec<Option<&str>> = if operands.is_empty() {
            vec![None]
        } else {
            operands.iter().map(|o| Some(*o)).collect()
        };
        let mut reached = BTreeSet::new();
        for arg in starts {
            let from = root.join(arg.unwrap_or("."));
            let Some(builder) = builder(&from, Some(&grep), arg) else {
                continue;
            };
            for entry in builder.build() {
                let entry = entry.unwrap();
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    reached.insert(relative(root, entry.path()));
                }
            }
        }
        reached
    }

    #[test]
    fn the_walk_reaches_exactly_what_the_real_gnu_grep_reads() {
        if Command::new("grep").arg("--version").output().is_err() {
            assert!(std::env::var_os("CI").is_none(), "grep must be installed in CI");
            return;
        }
        let dir = tree();
        let root = dir.path().canonicalize().unwrap();
        let mut differ = Vec::new();
        for filters in FILTERS {
            for operands in OPERANDS {
                let real = grep_reads(&root, filters, operands);
                let ours = walk_reaches(&root, filters, operands);
                if real != ours {
                    differ.push(format!(
                        "{filters:?} {operands:?}: grep read {real:?}, the walk {ours:?}"
                    ));
                }
            }
        }
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    }

    #[test]
    fn patterns_the_catalogue_does_not_read_are_refused() {
        for pattern in ["[ab].rs", "*.{rs,txt}", "x\\"] {
            assert!(GrepFilters::of(&[(Filter::GrepInclude, pattern)]).is_err(), "{pattern}");
        }
    }
}
