//! The repository a git command run in a directory reads, found as git's
//! own discovery finds it (`.git` a directory, or a file saying `gitdir:`
//! for a linked worktree or a submodule; a bare repository), and the state
//! of its refs, which says when what was read of its history is stale.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// A repository: where its own files are, and its working tree.
#[derive(Debug)]
pub(super) struct Repo {
    /// `.git`, or a linked worktree's `.git/worktrees/NAME`: HEAD, the
    /// index, the worktree's own pseudo-refs.
    pub git_dir: PathBuf,
    /// Where refs, logs and objects are (`commondir`; the git dir itself
    /// for the main worktree).
    pub common_dir: PathBuf,
    /// The working tree's top (`None`: bare).
    pub top: Option<PathBuf>,
}

/// How many files of refs and logs are watched for a change before the
/// history is not kept (each is read or stat-ed at every judged command).
const MAX_WATCHED: usize = 10_000;

/// The repository git would read from `cwd`.
pub(super) fn find(cwd: &Path) -> Result<Repo, String> {
    let cwd = std::fs::canonicalize(cwd).map_err(|e| format!("the working directory cannot be read: {e}"))?;
    for dir in cwd.ancestors() {
        let dot = dir.join(".git");
        match std::fs::metadata(&dot) {
            Ok(meta) if meta.is_dir() => {
                // git passes over a `.git` directory that is not a repository.
                if is_git_dir(&dot) {
                    return Ok(repo(dot, Some(dir.to_owned())));
                }
            }
            Ok(_) => {
                let text = std::fs::read_to_string(&dot).map_err(|e| format!("{}: {e}", dot.display()))?;
                let target = text
                    .strip_prefix("gitdir:")
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| format!("{} is a file that does not say `gitdir:`", dot.display()))?;
                let git_dir = dir.join(target);
                if !is_git_dir(&git_dir) {
                    return Err(format!(
                        "{} names {target}, which is not a git directory",
                        dot.display()
                    ));
                }
                return Ok(repo(git_dir, Some(dir.to_owned())));
            }
            Err(_) if is_git_dir(dir) => return Ok(repo(dir.to_owned(), None)),
            Err(_) => {}
        }
    }
    Err("no git repository is found from the working directory".into())
}

fn repo(git_dir: PathBuf, top: Option<PathBuf>) -> Repo {
    Repo {
        common_dir: common_dir(&git_dir),
        git_dir,
        top,
    }
}

fn common_dir(git_dir: &Path) -> PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) if !text.trim().is_empty() => git_dir.join(text.trim()),
        _ => git_dir.to_owned(),
    }
}

/// git's own test (`is_git_directory`): a HEAD, objects and refs.
fn is_git_dir(dir: &Path) -> bool {
    let common = common_dir(dir);
    std::fs::symlink_metadata(dir.join("HEAD")).is_ok()
        && common.join("objects").is_dir()
        && common.join("refs").is_dir()
}

impl Repo {
    /// The pseudo-refs a revision may name besides refs and HEAD
    /// (`ORIG_HEAD`, `FETCH_HEAD`, `MERGE_HEAD` …): the git dir's files
    /// named in capitals that hold an object id or a `ref:` (a message,
    /// `COMMIT_EDITMSG`, is not one).
    pub fn pseudo_refs(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.git_dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n != "HEAD" && !n.contains("MSG") && n.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
            .filter(|n| {
                let text = std::fs::read(self.git_dir.join(n)).unwrap_or_default();
                text.starts_with(b"ref:") || (text.len() >= 40 && text[..40].iter().all(u8::is_ascii_hexdigit))
            })
            .collect();
        names.sort();
        names
    }

    /// A digest of everything that decides which commits are reachable:
    /// HEAD and the pseudo-refs, loose and packed refs, reflogs, reftables,
    /// shallow and graft files, other worktrees' HEADs. A small file
    /// counts by its contents (a ref rewritten within one clock tick is
    /// still seen), a larger one by size, times and inode.
    pub fn refs_state(&self) -> Result<u64, String> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        let mut seen = 0;
        let mut add = |path: &Path, hasher: &mut std::collections::hash_map::DefaultHasher| -> Result<(), String> {
            seen += 1;
            if seen > MAX_WATCHED {
                return Err(format!("more than {MAX_WATCHED} refs and logs to watch"));
            }
            path.hash(hasher);
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                return Ok(());
            };
            use std::os::unix::fs::MetadataExt;
            (
                meta.len(),
                meta.mtime(),
                meta.mtime_nsec(),
                meta.ctime(),
                meta.ctime_nsec(),
                meta.ino(),
            )
                .hash(hasher);
            if meta.len() <= 128 {
                std::fs::read(path).unwrap_or_default().hash(hasher);
            }
            Ok(())
        };
        for name in ["HEAD", "logs/HEAD", "commondir"] {
            add(&self.git_dir.join(name), &mut hasher)?;
        }
        for name in self.pseudo_refs() {
            add(&self.git_dir.join(name), &mut hasher)?;
        }
        for name in ["packed-refs", "shallow", "info/grafts", "objects/info/alternates"] {
            add(&self.common_dir.join(name), &mut hasher)?;
        }
        for tree in ["refs", "logs", "reftable", "worktrees"] {
            let top = self.common_dir.join(tree);
            let walk = walkdir(&top);
            for path in walk.into_iter().filter(|p| tree != "worktrees" || reaches(p, &top)) {
                add(&path, &mut hasher)?;
            }
        }
        Ok(hasher.finish())
    }
}

/// Whether a file of another worktree (`worktrees/NAME/…`) decides what
/// `--all --reflog` reaches: its HEAD, reflogs and own refs do; its index,
/// `gitdir`, messages and pseudo-refs (which the scan does not read, and a
/// revision cannot name unrefused) do not.
fn reaches(path: &Path, worktrees: &Path) -> bool {
    let mut parts = path
        .strip_prefix(worktrees)
        .map(Path::components)
        .into_iter()
        .flatten()
        .skip(1);
    match parts.next().map(|c| c.as_os_str()) {
        Some(first) if first == "HEAD" => parts.next().is_none(),
        Some(first) => first == "logs" || first == "refs",
        None => false,
    }
}

/// Every file under `dir`, in a stable order (none when it is absent).
fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
        if files.len() > MAX_WATCHED {
            break;
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_other_worktrees_heads_reflogs_and_refs_are_watched() {
        let top = Path::new("/r/.git/worktrees");
        for watched in ["w/HEAD", "w/logs/HEAD", "w/refs/bisect/bad"] {
            assert!(reaches(&top.join(watched), top), "{watched}");
        }
        for skipped in [
            "w/index",
            "w/gitdir",
            "w/commondir",
            "w/COMMIT_EDITMSG",
            "w/ORIG_HEAD",
            "w/AUTO_MERGE",
            "w",
        ] {
            assert!(!reaches(&top.join(skipped), top), "{skipped}");
        }
    }
}
