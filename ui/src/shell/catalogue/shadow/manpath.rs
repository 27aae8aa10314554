//! Where `man NAME` finds its page. man-db (and macOS's man) search the
//! directories `MANPATH` names, and without it derive them from `PATH`:
//! for each `DIR`, `DIR/man`, `DIR/share/man` and the same beside `DIR`
//! (`.venv/bin` gives `.venv/share/man`); their configuration files add
//! more. A page is formatted with groff, whose `.so` includes any file
//! (`.so /proc/self/environ` prints the agent's environment), so a page
//! the project holds — an activated virtualenv's, a direnv `PATH_add`'s —
//! is not covered. The console's environment is the user's, as the
//! agent's shell's is.

use std::path::{Path, PathBuf};

use super::super::table::Program;
use crate::paths;

/// The configuration files man-db, man-1.6 and FreeBSD's man read.
const CONFIGS: &[&str] = &[
    "/etc/manpath.config",
    "/etc/man_db.conf",
    "/etc/man.conf",
    "/usr/local/etc/man.conf",
];

impl Program {
    /// The same program (`man`), not covered where its search path
    /// reaches the working directory.
    pub(in crate::shell::catalogue) const fn judged_by_manpath(self) -> Self {
        Self {
            judge: Some(man),
            ..self
        }
    }
}

/// `man`'s own judge: not covered where a page could come from the
/// working directory.
fn man(_args: &[String], cwd: Option<&Path>) -> Result<(), String> {
    let root = cwd
        .and_then(|c| paths::root("cwd", Some(c)))
        .ok_or("no working directory to tell whether man's pages come from it")?;
    if std::env::var_os("MANOPT").is_some_and(|v| !v.is_empty()) {
        return Err(
            "MANOPT is set in the environment: man reads options from it, which this command does not show".into(),
        );
    }
    let var = |name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut configs: Vec<(String, String)> = Vec::new();
    for file in home
        .map(|h| h.join(".manpath"))
        .into_iter()
        .chain(CONFIGS.iter().map(PathBuf::from))
    {
        if let Ok(text) = std::fs::read_to_string(&file) {
            configs.push((file.display().to_string(), text));
        }
    }
    searched(var("MANPATH").as_deref(), var("PATH").as_deref(), &configs, &root)
}

/// Why a directory man would search lies in (or holds) `root`, if one
/// does: `MANPATH`'s entries, those derived from `PATH`'s, and those the
/// configuration files (name, text) name.
pub(crate) fn searched(
    manpath: Option<&str>,
    path: Option<&str>,
    configs: &[(String, String)],
    root: &Path,
) -> Result<(), String> {
    for entry in manpath.into_iter().flat_map(|m| m.split(':')).filter(|e| !e.is_empty()) {
        reaches(entry, root).map_err(|why| format!("MANPATH holds `{entry}`, {why}"))?;
    }
    for entry in path.into_iter().flat_map(|p| p.split(':')) {
        if !entry.starts_with('/') {
            return Err(format!(
                "PATH holds the relative directory `{entry}`: man searches the manual beside it, in the working directory"
            ));
        }
        let dir = Path::new(entry);
        let beside = dir.parent().unwrap_or(dir);
        for base in [dir, beside] {
            for sub in ["man", "share/man"] {
                let derived = base.join(sub);
                let shown = derived.display().to_string();
                reaches(&shown, root)
                    .map_err(|why| format!("PATH holds `{entry}`, so man searches `{shown}`, {why}"))?;
            }
        }
    }
    for (file, text) in configs {
        for line in text.lines() {
            let mut fields = line.split_whitespace();
            let Some(key) = fields.next() else {
                continue;
            };
            if !matches!(key, "MANDATORY_MANPATH" | "MANPATH" | "MANPATH_MAP" | "MANDB_MAP") {
                continue;
            }
            for dir in fields {
                reaches(dir, root).map_err(|why| format!("{file} names `{dir}` ({key}), {why}"))?;
            }
        }
    }
    Ok(())
}

/// Whether man searching `dir` may read a page of `root`: `dir` is
/// relative, inside `root` or holds it (links resolved).
fn reaches(dir: &str, root: &Path) -> Result<(), String> {
    if !dir.starts_with('/') {
        return Err("a relative directory, found from the working directory".into());
    }
    let resolved = paths::resolve(dir, None).ok_or_else(|| "which cannot be resolved".to_owned())?;
    if resolved.starts_with(root) {
        return Err(format!(
            "inside the working directory ({}): a page there is formatted with groff, whose `.so` includes any file",
            resolved.display()
        ));
    }
    if root.starts_with(&resolved) {
        return Err(format!(
            "which holds the working directory ({}): a page of the project may be found there",
            resolved.display()
        ));
    }
    Ok(())
}
