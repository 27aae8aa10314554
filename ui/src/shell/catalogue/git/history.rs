//! What a repository's history holds: every commit reachable from its refs,
//! its reflogs and its pseudo-refs, and every path any of their trees
//! names, read by git itself (`git rev-list --objects --all --reflog`,
//! blobs only) and kept per repository until a ref or a reflog changes.
//!
//! When one does (each commit an agent makes), only what is new is read:
//! `rev-list --objects --all --reflog --not TIPS`, the tips being the
//! commits the last read started from. The objects `--not` leaves out are
//! those the last read listed (git's own guarantee: a push sends exactly
//! this difference), and a secret enters a history only in a new object,
//! so the union of the two reads names every secret path a full read
//! would. A ref deleted or a reflog expired takes a tip away: then the
//! whole history is read again, so that a secret a rewrite removed is
//! forgotten (keeping it, a superset, would only refuse more).
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
    /// This history with what a read since its tips found (`new`): the
    /// commits and the secret paths of both.
    fn joined(&self, new: History) -> Self {
        let mut commits = Vec::with_capacity(self.commits.len() + new.commits.len());
        commits.extend(self.commits.iter().cloned());
        commits.extend(new.commits);
        commits.sort_unstable();
        commits.dedup();
        let mut secrets = self.secrets.clone();
        for path in new.secrets {
            if secrets.len() < MAX_KEPT && !secrets.contains(&path) {
                secrets.push(path);
            }
        }
        Self {
            commits,
            secrets,
            unknown: None,
        }
    }

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

/// A history as read: the refs state it was read in, and the tip commits
/// it was read from (sorted; none when it is not known), where the next
/// read starts.
#[derive(Clone)]
struct Read {
    state: u64,
    history: Arc<History>,
    tips: Arc<[Box<str>]>,
}

/// Each repository's history, by its git dir.
type Cache = HashMap<PathBuf, Read>;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// The history of `repo`, read again only when its refs change, and then
/// only what is new.
pub(super) fn read(repo: &Repo) -> Arc<History> {
    let before = match repo.refs_state() {
        Ok(state) => state,
        Err(why) => return Arc::new(History::unknown(why)),
    };
    let key = repo.git_dir.clone();
    let last = CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .get(&key)
        .cloned();
    if let Some(last) = &last
        && last.state == before
    {
        return last.history.clone();
    }
    let (history, tips) = scan(repo, last.as_ref());
    let history = Arc::new(history);
    // A ref that moved while git read is read again next time.
    if repo.refs_state().is_ok_and(|after| after == before) {
        let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        let cache = cache.get_or_insert_with(HashMap::new);
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(
            key,
            Read {
                state: before,
                history: history.clone(),
                tips: tips.into(),
            },
        );
    }
    history
}

/// At most this many objects a ref names directly are looked up.
const MAX_UNNAMED: usize = 8;

/// Reads the history of `repo`: what is new since `last` when every tip
/// it was read from is still one, else all of it; with the tips it was
/// read from.
fn scan(repo: &Repo, last: Option<&Read>) -> (History, Vec<Box<str>>) {
    // A pseudo-ref is passed as it is: `AUTO_MERGE` (a conflicted merge's
    // result) names a tree, not a commit.
    let pseudo = repo.pseudo_refs();
    // The tips before the objects: what is read next reaches at least
    // them, so the next read may leave out all they reach.
    let tips = match tips(repo, &pseudo) {
        Ok(tips) => tips,
        Err(why) => {
            return (
                History::unknown(format!("its history cannot be read: {why}")),
                Vec::new(),
            );
        }
    };
    let since = last.filter(|last| {
        last.history.unknown.is_none()
            && !last.tips.is_empty()
            && last.tips.iter().all(|tip| tips.binary_search(tip).is_ok())
    });
    if let Some(last) = since {
        let not: Vec<u8> = last
            .tips
            .iter()
            .flat_map(|tip| format!("^{tip}\n").into_bytes())
            .collect();
        let new = objects(repo, &pseudo, &not);
        // A tip gone from the object store meanwhile (`?ID`), or git
        // refusing: the whole history is read instead.
        if new.unknown.is_none() {
            return (last.history.joined(new), tips);
        }
    }
    let history = objects(repo, &pseudo, &[]);
    let tips = if history.unknown.is_none() { tips } else { Vec::new() };
    (history, tips)
}

/// The commits `--all --reflog` and the pseudo-refs start from, sorted.
fn tips(repo: &Repo, pseudo: &[String]) -> Result<Vec<Box<str>>, String> {
    let mut args = vec!["rev-list", "--no-walk=unsorted", "--all", "--reflog"];
    args.extend(pseudo.iter().map(String::as_str));
    let out = spawn::git(repo, &args, LIMIT)?;
    let mut tips: Vec<Box<str>> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| String::from_utf8_lossy(l).into())
        .collect();
    if let Some(odd) = tips.iter().find(|t| !t.bytes().all(|b| b.is_ascii_hexdigit())) {
        return Err(format!("git printed {odd:?} for a commit"));
    }
    tips.sort_unstable();
    tips.dedup();
    Ok(tips)
}

/// The objects the refs, reflogs and pseudo-refs reach, less those the
/// revisions `not` (`^ID` lines, read by `--stdin`) reach.
fn objects(repo: &Repo, pseudo: &[String], not: &[u8]) -> History {
    let mut args = vec![
        "rev-list",
        "--objects",
        "--all",
        "--reflog",
        "--filter=object:type=blob",
        "--missing=print",
    ];
    args.extend(pseudo.iter().map(String::as_str));
    if !not.is_empty() {
        args.push("--stdin");
    }
    let out = match spawn::git_fed(repo, &args, not, LIMIT) {
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
    use super::super::tests::{git, repo, write};
    use super::*;

    fn last(history: History, tips: Vec<Box<str>>) -> Read {
        Read {
            state: 0,
            history: Arc::new(history),
            tips: tips.into(),
        }
    }

    #[test]
    fn after_a_commit_only_what_is_new_is_read_and_the_union_is_the_whole() {
        let dir = repo();
        let repo = super::super::repo::find(dir.path()).unwrap();
        let (first, tips) = scan(&repo, None);
        assert_eq!((first.commits.len(), first.secrets.len(), tips.len()), (2, 0, 2));
        write(dir.path(), ".env", "KEY=1\n");
        git(dir.path(), &["add", "-f", ".env"]);
        git(dir.path(), &["commit", "-qm", "three"]);
        let before = last(first, tips);
        let pseudo = repo.pseudo_refs();
        let not: Vec<u8> = before
            .tips
            .iter()
            .flat_map(|t| format!("^{t}\n").into_bytes())
            .collect();
        let new = objects(&repo, &pseudo, &not);
        assert_eq!(
            (new.commits.len(), new.secrets.as_slice()),
            (1, [".env".to_owned()].as_slice())
        );
        let (joined, tips) = scan(&repo, Some(&before));
        let (whole, all_tips) = scan(&repo, None);
        assert_eq!((&joined.commits, &joined.secrets), (&whole.commits, &whole.secrets));
        assert_eq!((joined.unknown, tips), (None, all_tips));
    }

    #[test]
    fn a_tip_gone_reads_the_whole_history_again() {
        let dir = repo();
        let repo = super::super::repo::find(dir.path()).unwrap();
        let (first, tips) = scan(&repo, None);
        // A history said to hold a secret under tips that are no longer all
        // there (one is not a commit of this repository): read whole, the
        // secret is not kept.
        let mut tips = tips;
        tips.push("0123456789012345678901234567890123456789".into());
        tips.sort_unstable();
        let said = History {
            secrets: vec![".env".into()],
            ..first
        };
        let (read, _) = scan(&repo, Some(&last(said, tips)));
        assert_eq!((read.commits.len(), read.secrets.len(), read.unknown), (2, 0, None));
    }

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
