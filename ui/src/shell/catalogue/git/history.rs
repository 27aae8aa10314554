//! What a repository's history holds: every commit reachable from its refs,
//! its reflogs and its pseudo-refs, and every path any of their trees
//! names, read by git itself (`git rev-list --objects --all --reflog`,
//! blobs only) and kept per repository until a ref or a reflog changes.
//!
//! Reading history with git rather than in Rust: the object store (packs,
//! deltas, zlib, commit graphs, reftables) is most of git, and git reads
//! it the way the command being judged will. The run is bounded in time;
//! a history too long to read in that time is not known, and what would
//! print it is not covered.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::repo::Repo;
use super::spawn;
use crate::secrets;

/// How long reading a history may take (the first judged command after a
/// ref changes waits for it; ~0.1 s for 10,000 commits).
const LIMIT: Duration = Duration::from_secs(3);

/// At most this many secret paths are kept (one is enough to refuse).
const MAX_KEPT: usize = 20;

/// What a history holds, as far as a judge needs it.
#[derive(Debug, Default)]
pub(super) struct History {
    /// Every reachable commit's id, sorted (a revision written as an id
    /// must be one of them).
    commits: Vec<Box<str>>,
    /// Paths that name secrets, relative to the repository's top.
    pub secrets: Vec<String>,
    /// Why what the history holds is not known, if it is not.
    pub unknown: Option<String>,
}

impl History {
    /// Whether `prefix` (hex, at least 4 digits) abbreviates a reachable
    /// commit.
    pub fn has_commit(&self, prefix: &str) -> bool {
        let prefix = prefix.to_ascii_lowercase();
        let at = self.commits.partition_point(|c| **c < *prefix);
        self.commits.get(at).is_some_and(|c| c.starts_with(&prefix))
    }

    fn unknown(why: String) -> Self {
        Self {
            unknown: Some(why),
            ..Self::default()
        }
    }
}

/// Each repository's history (by its git dir), with the refs state it was
/// read in.
type Cache = HashMap<PathBuf, (u64, Arc<History>)>;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// The history of `repo`, read again only when its refs change.
pub(super) fn read(repo: &Repo) -> Arc<History> {
    let before = match repo.refs_state() {
        Ok(state) => state,
        Err(why) => return Arc::new(History::unknown(why)),
    };
    let key = repo.git_dir.clone();
    if let Some((state, history)) = CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .get(&key)
        && *state == before
    {
        return history.clone();
    }
    let history = Arc::new(scan(repo));
    // A ref that moved while git read is read again next time.
    if repo.refs_state().is_ok_and(|after| after == before) {
        let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        let cache = cache.get_or_insert_with(HashMap::new);
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(key, (before, history.clone()));
    }
    history
}

/// At most this many objects a ref names directly are looked up.
const MAX_UNNAMED: usize = 8;

fn scan(repo: &Repo) -> History {
    // A pseudo-ref is passed as it is: `AUTO_MERGE` (a conflicted merge's
    // result) names a tree, not a commit.
    let pseudo = repo.pseudo_refs();
    let mut args = vec![
        "rev-list",
        "--objects",
        "--all",
        "--reflog",
        "--filter=object:type=blob",
        "--missing=print",
    ];
    args.extend(pseudo.iter().map(String::as_str));
    let out = match spawn::git(repo, &args, LIMIT) {
        Ok(out) => out,
        Err(why) => return History::unknown(format!("its history cannot be read: {why}")),
    };
    let (mut history, unnamed) = parse(&out);
    if unnamed.len() > MAX_UNNAMED {
        return History::unknown(format!("more than {MAX_UNNAMED} refs name trees or files directly"));
    }
    // A root tree (`AUTO_MERGE`) is listed with its files' paths; a file
    // a ref names directly (a tagged blob) has no path to judge.
    for id in unnamed {
        let kind = spawn::git(repo, &["cat-file", "-t", &id], LIMIT).unwrap_or_default();
        if kind.trim_ascii() != b"tree" {
            history.unknown =
                Some("a ref names a file's contents directly, under no path the catalogue can judge".into());
        }
    }
    history
}

/// `rev-list --objects` with blobs only: a commit's id alone on its line,
/// a blob's id and the path it was first met at, an annotated tag's id and
/// its name; `?ID` a missing object; an id with an empty name an object a
/// ref names directly (a tree, or a tagged blob), returned apart.
fn parse(out: &[u8]) -> (History, Vec<String>) {
    let mut history = History::default();
    let mut unnamed = Vec::new();
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let line = String::from_utf8_lossy(line);
        if line.starts_with('?') {
            return (
                History::unknown("objects are missing from the repository (a partial clone?)".into()),
                unnamed,
            );
        }
        match line.split_once(' ') {
            None if line.bytes().all(|b| b.is_ascii_hexdigit()) => history.commits.push(line.into()),
            None => {
                return (
                    History::unknown(format!("git printed {line:?}, which is not an object")),
                    unnamed,
                );
            }
            Some((id, "")) => unnamed.push(id.to_owned()),
            Some((_, path)) => {
                if history.secrets.len() < MAX_KEPT && secrets::why(path).is_some() {
                    history.secrets.push(path.to_owned());
                }
            }
        }
    }
    history.commits.sort_unstable();
    (history, unnamed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_is_read_from_rev_list_objects() {
        let out = b"fb2c7fee075c6f255b49a17ac5442690441a7bd4\ne52d01e7b5de856580ef0312c56df090fa9ee6ce\n\
9dc2db27fdf934e42283de2a835b4ef4bc0216cb v1.0\n8e1461aca7948ba0614a87a732a65358bcf149a5 config/.ENV\n\
95ae4b5039a26b72854efba732f63e56aab00fda src/x.rs\n";
        let (history, unnamed) = parse(out);
        assert_eq!(history.unknown, None);
        assert!(unnamed.is_empty());
        assert_eq!(history.secrets, ["config/.ENV"]);
        assert!(history.has_commit("fb2c7f"));
        assert!(history.has_commit("E52D"));
        assert!(!history.has_commit("8e1461"), "a blob is not a commit");
        let (_, unnamed) =
            parse(b"fb2c7fee075c6f255b49a17ac5442690441a7bd4\n8e1461aca7948ba0614a87a732a65358bcf149a5 \n");
        assert_eq!(unnamed, ["8e1461aca7948ba0614a87a732a65358bcf149a5"]);
        assert!(
            parse(b"?8e1461aca7948ba0614a87a732a65358bcf149a5\n")
                .0
                .unknown
                .is_some()
        );
    }
}
