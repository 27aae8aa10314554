//! How git reads a revision's words (`get_oid_with_context`,
//! `repo_dwim_ref`): where `REV:PATH` splits, the object ids it is written
//! with, and the names git looks up as files in the git directory.

use std::path::Path;

use super::repo::Repo;

/// `REV:PATH` or `:PATH` (`:N:PATH`): one object by its path. The colon
/// is found as git finds it (`get_oid_with_context_1`): outside braces, so
/// `HEAD^{/fix: x}` and `HEAD@{12:00}` are commits; `:/text` is a commit
/// too (a message search).
pub(super) fn object_path(revision: &str) -> bool {
    path_of(revision).is_some()
}

/// The path of a `REV:PATH` or `:N:PATH` word, if it is one.
fn path_of(revision: &str) -> Option<&str> {
    if revision.starts_with(":/") {
        return None;
    }
    let path = if let Some(rest) = revision.strip_prefix(':') {
        rest
    } else {
        let mut depth = 0usize;
        let at = revision.char_indices().find_map(|(at, c)| {
            match c {
                '{' => depth += 1,
                '}' if depth > 0 => depth -= 1,
                ':' if depth == 0 => return Some(at),
                _ => {}
            }
            None
        })?;
        &revision[at + 1..]
    };
    // `:N:PATH` names a stage; a path of digits alone is read as one too
    // (a commit: the history is judged).
    let path = path.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':');
    (!path.is_empty()).then_some(path)
}

/// git reads a `REV:PATH` from the repository's top, or, written `./P` or
/// `../P`, from the working directory: either way it may name a file
/// outside the working directory the catalogue keeps reads in
/// (`git show HEAD:../other/notes.txt`). Covered only where the path stays
/// inside it.
pub(super) fn outside(repo: &Repo, cwd: Option<&Path>, revisions: &[&str]) -> Result<(), String> {
    let at_top = || {
        let top = repo.top.as_deref().and_then(|t| std::fs::canonicalize(t).ok());
        let cwd = cwd.and_then(|c| std::fs::canonicalize(c).ok());
        top.is_some() && top == cwd
    };
    for revision in revisions {
        let Some(path) = path_of(revision) else {
            continue;
        };
        let from_cwd = path == "." || path == ".." || path.starts_with("./") || path.starts_with("../");
        if !from_cwd {
            if at_top() {
                continue;
            }
            return Err(format!(
                "`{revision}` names a path from the repository's top, which is not the working directory: it may be outside it"
            ));
        }
        let mut depth = 0usize;
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| format!("`{revision}` names a path outside the working directory"))?;
                }
                _ => depth += 1,
            }
        }
    }
    Ok(())
}

/// The object ids a revision is written with (`abc1234`, `abc1234~2`,
/// `abc1234..main`, `^abc1234`, `abc1234:src/x.rs`): words of four or more
/// hex digits at the base of each end.
pub(super) fn ids(revision: &str) -> Vec<&str> {
    revision
        .split("..")
        .map(|end| end.trim_start_matches(['.', '^']))
        .map(|end| end.split(['~', '^', '@', ':']).next().unwrap_or(""))
        .filter(|base| base.len() >= 4 && base.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect()
}

/// git reads a revision's name as a file in the git directory first
/// (`info/X`, `rebase-merge/onto`, any name holding an id), and only refs,
/// reflogs and pseudo-refs are read with the history: a revision naming
/// another such file names a commit never judged.
pub(super) fn in_git_dir(repo: &Repo, revisions: &[&str]) -> Result<(), String> {
    let mut pseudo = None;
    for name in revisions.iter().flat_map(|r| names(r)) {
        if name == "HEAD" || name.starts_with("refs/") {
            continue;
        }
        let file = [&repo.git_dir, &repo.common_dir]
            .iter()
            .any(|dir| std::fs::symlink_metadata(dir.join(name)).is_ok_and(|m| m.is_file()));
        if file
            && !pseudo
                .get_or_insert_with(|| repo.pseudo_refs())
                .iter()
                .any(|p| p == name)
        {
            return Err(format!(
                "`{name}` names a file in the git directory, not a ref whose history was judged"
            ));
        }
    }
    Ok(())
}

/// The names a revision starts its ends with (`info/X` of `^info/X~2`,
/// `main` and `topic` of `main...topic@{1}`).
fn names(revision: &str) -> impl Iterator<Item = &str> {
    revision
        .split("..")
        .map(|end| end.trim_start_matches(['.', '^']))
        .map(|end| {
            let end = end.split("@{").next().unwrap_or("");
            end.split(['~', '^', ':']).next().unwrap_or("")
        })
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_written_with_ids_and_paths_are_read() {
        assert_eq!(ids("abc1234"), ["abc1234"]);
        assert_eq!(ids("^abc1234~2"), ["abc1234"]);
        assert_eq!(ids("abc1234..main"), ["abc1234"]);
        assert_eq!(ids("HEAD...beef12:src"), ["beef12"]);
        assert!(ids("HEAD~1").is_empty());
        assert!(ids("abc").is_empty(), "three digits are no id");
        assert!(ids("feature").is_empty());
        assert!(object_path("HEAD:src/x.rs"));
        assert!(object_path(":0:src/x.rs"));
        assert!(!object_path("HEAD:"));
        assert!(!object_path(":/fix"));
        assert!(!object_path("HEAD~2"));
        assert!(!object_path("HEAD^{/in:?}"));
        assert!(!object_path("main@{12:00}"));
        assert!(!object_path("HEAD@{2026-12-06 23:59:59}"));
        assert!(!object_path("HEAD{:x"), "an unclosed brace holds the rest, as in git");
        assert!(object_path("HEAD^{/x:y}:src/x.rs"));
        assert!(object_path("HEAD^{tree}:src"));
    }
}
