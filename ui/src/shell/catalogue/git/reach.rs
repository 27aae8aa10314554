//! What git prints beyond the files a command names: a commit's changes,
//! the history's patches, the index, an object by its id, remote URLs.
//! `git show`, `git log -p`, `git diff HEAD~1`, `git diff --cached`,
//! `git status -v` and `git grep --cached` print files as the history or
//! the index holds them, so a secret committed once (even deleted since),
//! or only staged, is printed though no word names it. Such a form is
//! covered only when Tether can show no secret path is reachable by it:
//! the index holds none (read in Rust, [`super::index`]), the history
//! holds none (read by git, [`super::history`]), or every path the
//! command is limited to (`git log -p -- src/x.rs`) is literal and reaches
//! none. Anything not known — no repository found, an index or a history
//! that cannot be read — is not covered.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::history::History;
use super::repo::{self, Repo};
use super::revisions::ADDS_COMMITS;
use super::revname::{ids, in_git_dir, object_path, outside};
use super::words::{self, Words};
use super::{history, index, remote, spawn};
use crate::secrets;

/// Options that make diff, log or show print what files hold: patches,
/// lines, or an answer about their contents (`-S`, `-G`, `-I`).
const PRINTS_CONTENTS: &[&str] = &[
    "patch",
    "u",
    "unified",
    "patch-with-raw",
    "patch-with-stat",
    "word-diff",
    "word-diff-regex",
    "color-words",
    "function-context",
    "check",
    "binary",
    "c",
    "cc",
    "dd",
    "m",
    "diff-merges",
    "combined-all-paths",
    "L",
    "S",
    "G",
    "ignore-matching-lines",
];

/// Options of diff and show that print names and counts in place of the
/// patch.
const PRINTS_NAMES: &[&str] = &[
    "stat",
    "numstat",
    "shortstat",
    "name-only",
    "name-status",
    "summary",
    "dirstat",
    "raw",
    "compact-summary",
    "no-patch",
    "quiet",
];

/// Options that print paths other than those the command is limited to
/// (`--follow` follows a rename out of a secret; `-L` follows renames too).
const WIDENS: &[&str] = &["follow", "full-diff", "L", "find-copies-harder"];

/// How long `git config` may take.
const QUICK: Duration = Duration::from_secs(2);

/// The judge git's grammar hands every covered command to.
pub(super) fn judge(argv: &[String], cwd: Option<&Path>) -> Result<(), String> {
    let words = words::read(&super::GIT, argv)?;
    match words.sub.name {
        "diff" | "log" | "show" => revisions(&words, cwd),
        "status" if words.has("verbose") => {
            let repo = find(cwd)?;
            reach(&words, &repo, cwd, Needs::BOTH, None, &[], &[])
        }
        "grep" => grep(&words, cwd),
        "remote" if words.has("verbose") => remote::urls(&find(cwd)?),
        "branch" | "tag" => signatures(words.values("format")),
        _ => Ok(()),
    }
}

/// `git grep` reads the index: all of it with `--cached`, and without,
/// the entries marked assume-unchanged or skip-worktree (whose files it
/// reads from the index, not the disk); with `--recurse-submodules`, each
/// submodule's index too, which is not read here.
fn grep(words: &Words, cwd: Option<&Path>) -> Result<(), String> {
    let cached = words.has("cached");
    let repo = match find(cwd) {
        Ok(repo) => repo,
        // Outside a repository, git grep fails (or, configured so, searches
        // the directory, whose files the walk judges).
        Err(_) if !cached => return Ok(()),
        Err(why) => return Err(why),
    };
    let index = index::read(&repo.git_dir)?;
    if words.has("recurse-submodules") && index.submodules {
        return Err("`--recurse-submodules` reads each submodule's index, which the catalogue does not read".into());
    }
    if cached {
        return reach(words, &repo, cwd, Needs::INDEX, None, &[], &[]);
    }
    match index.read_from_index.first() {
        Some(path) => Err(format!(
            "the index marks {path} assume-unchanged or skip-worktree, so `git grep` reads it from the index: {}",
            secrets::why(path).unwrap_or("a secret")
        )),
        None => Ok(()),
    }
}

fn find(cwd: Option<&Path>) -> Result<Repo, String> {
    let cwd = cwd.ok_or("no working directory to find the repository from")?;
    repo::find(cwd).map_err(|why| format!("{why}: what git would print is not known"))
}

/// What a form prints from.
#[derive(Clone, Copy)]
struct Needs {
    /// The index and the files it tracks.
    index: bool,
    /// Commits.
    history: bool,
}

impl Needs {
    const INDEX: Self = Self {
        index: true,
        history: false,
    };
    const HISTORY: Self = Self {
        index: false,
        history: true,
    };
    const BOTH: Self = Self {
        index: true,
        history: true,
    };
}

/// diff, log and show.
fn revisions(words: &Words, cwd: Option<&Path>) -> Result<(), String> {
    let sub = words.sub.name;
    signatures(words.values("format").chain(words.values("pretty")))?;
    let mut paths: Vec<&str> = words.paths.clone();
    let mut revisions = Vec::new();
    for operand in &words.operands {
        let on_disk = cwd.is_some_and(|c| std::fs::symlink_metadata(c.join(operand)).is_ok());
        if on_disk {
            paths.push(operand);
        } else {
            revisions.push(*operand);
        }
    }
    let patch = PRINTS_CONTENTS.iter().any(|o| words.has(o)) || words.has("p");
    let contents = match sub {
        "log" => patch,
        _ => patch || !PRINTS_NAMES.iter().any(|o| words.has(o)) && !words.has("s"),
    };
    // `git show` prints a blob whatever the format, and an id or a ref
    // (a tag of a blob) may name one.
    let ids: Vec<&str> = revisions.iter().flat_map(|r| ids(r)).collect();
    let objects = sub == "show" || (contents && !ids.is_empty());
    if !contents && !objects {
        return Ok(());
    }
    if let Some(other) = revisions
        .iter()
        .find(|r| r.contains("worktrees/") || r.contains("main-worktree/"))
    {
        return Err(format!(
            "`{other}` names another worktree's refs, which the catalogue does not read"
        ));
    }
    let repo = find(cwd)?;
    in_git_dir(&repo, &revisions)?;
    outside(&repo, cwd, &revisions)?;
    let mut read = None;
    if objects {
        let history = read.insert(history::read(&repo));
        if let Some(why) = &history.unknown {
            return Err(format!(
                "`git {sub}` prints any object a revision names, and the repository's {why}"
            ));
        }
        if let Some(id) = ids.iter().find(|id| !history.has_commit(id)) {
            return Err(format!(
                "`{id}` names no commit the repository's refs reach: it may be a file's contents (a blob) or a commit no ref keeps"
            ));
        }
    }
    if !contents {
        return Ok(());
    }
    let needs = match sub {
        "diff" if !revisions.is_empty() || ["cached", "staged", "merge-base"].iter().any(|o| words.has(o)) => {
            Needs::BOTH
        }
        "diff" => Needs::INDEX,
        _ => Needs::HISTORY,
    };
    reach(words, &repo, cwd, needs, read, &revisions, &paths)
}

/// The form is covered when no secret path is reachable by it.
fn reach(
    words: &Words,
    repo: &Repo,
    cwd: Option<&Path>,
    needs: Needs,
    read: Option<Arc<History>>,
    revisions: &[&str],
    paths: &[&str],
) -> Result<(), String> {
    let mut secrets = Vec::new();
    if needs.index {
        secrets.extend(index::secrets(&repo.git_dir)?);
    }
    let in_index = !secrets.is_empty();
    if needs.history {
        let history = read.unwrap_or_else(|| history::read(repo));
        if let Some(why) = &history.unknown {
            return Err(format!(
                "`git {}` prints what the history holds, and the repository's {why}",
                words.sub.name
            ));
        }
        secrets.extend(history.secrets.iter().cloned());
    }
    let Some(first) = secrets.first() else {
        return Ok(());
    };
    let holds = format!(
        "`git {}` prints what the {} holds, and it holds {first}, which may hold secrets: {}",
        words.sub.name,
        if in_index { "index" } else { "history" },
        secrets::why(first).unwrap_or("a secret"),
    );
    limited(words, repo, cwd, revisions, paths, &secrets).map_err(|why| format!("{holds} ({why})"))
}

/// Whether the command prints only paths that reach no secret.
fn limited(
    words: &Words,
    repo: &Repo,
    cwd: Option<&Path>,
    revisions: &[&str],
    paths: &[&str],
    secrets: &[String],
) -> Result<(), String> {
    if let Some(option) = WIDENS.iter().find(|o| words.has(o)) {
        return Err(format!("`--{option}` prints paths besides those it is limited to"));
    }
    // `git show REV:PATH` prints that one file (its path is judged as a
    // word) or lists a directory's names, unless an option adds commits.
    if words.sub.name == "show"
        && paths.is_empty()
        && !revisions.is_empty()
        && revisions.iter().all(|r| object_path(r))
        && !ADDS_COMMITS.iter().any(|o| words.has(o))
    {
        return Ok(());
    }
    if paths.is_empty() || words.sub.name == "status" || words.sub.name == "grep" {
        return Err("limit it to paths that never held one: `-- PATH`".into());
    }
    let top = repo
        .top
        .as_deref()
        .ok_or("a bare repository has no working tree to read paths from")?;
    let cwd = cwd.ok_or("no working directory")?;
    let prefix = std::fs::canonicalize(cwd)
        .ok()
        .and_then(|c| Some(c.strip_prefix(std::fs::canonicalize(top).ok()?).ok()?.to_owned()))
        .ok_or("the working directory is outside the working tree")?;
    for path in paths {
        if path.starts_with(':') || path.contains(['*', '?', '[', '\\']) {
            return Err(format!(
                "`{path}` is a pattern, whose reach the catalogue does not judge"
            ));
        }
        let spec = normal(&prefix.join(path)).ok_or_else(|| format!("`{path}` leads out of the working tree"))?;
        let spec = spec.to_string_lossy().to_lowercase();
        if let Some(secret) = secrets.iter().find(|s| {
            let s = s.to_lowercase();
            spec.is_empty() || s == spec || s.starts_with(&format!("{spec}/"))
        }) {
            return Err(format!("`{path}` reaches {secret}"));
        }
    }
    // `log.follow` makes `git log -- ONE_PATH` follow its renames.
    if words.sub.name == "log" && paths.len() == 1 && !words.has("no-follow") {
        let follow = spawn::git(repo, &["config", "--bool", "--get", "log.follow"], QUICK).unwrap_or_default();
        if String::from_utf8_lossy(&follow).trim() != "false" && !follow.is_empty() {
            return Err("`log.follow` is set: `git log` follows the path's renames".into());
        }
    }
    Ok(())
}

/// `a/./b/../c` as `a/c`; `None` when it climbs above its start.
fn normal(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// A pretty format that verifies signatures (`%G?`, `%GS` …) runs gpg;
/// so does a ref format's `%(signature)`.
fn signatures<'a>(mut formats: impl Iterator<Item = &'a str>) -> Result<(), String> {
    match formats.find(|f| f.contains("%G") || f.contains("%(signature")) {
        Some(format) => Err(format!("`{format}` verifies signatures, which runs gpg")),
        None => Ok(()),
    }
}
