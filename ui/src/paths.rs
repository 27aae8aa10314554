//! Paths as the agent's own process would resolve them: relative to its
//! working directory, `~` expanded, `.` and `..` taken step by step with
//! every symlink on the way resolved where it exists, so a link inside the
//! project that points out of it is outside.

use std::cell::RefCell;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use tether_tools::ToolExecution;

/// The working directory a call is judged from: where its front door says
/// it runs (the hook input's `cwd`, the link's `session/open`, the
/// gateway's own: the `cwd` of the call's invocation context), or, for a
/// shell tool whose arguments name a `workdir` (Codex's `exec_command` and
/// `shell` take one), that directory resolved against it. A workdir inside
/// the working directory is where the command's paths are read from and
/// what "within cwd" means for it; one outside it (or one that cannot be
/// resolved) leaves no working directory to judge from, so no rule that
/// needs one allows the call.
pub fn cwd_of(execution: &ToolExecution) -> Option<PathBuf> {
    let given = given_cwd(execution);
    let Some(workdir) = workdir_in(execution) else {
        return given;
    };
    let project = given.as_deref().and_then(real_dir)?;
    workdir
        .and_then(|w| resolve(w, given.as_deref()))
        .filter(|real| real.starts_with(&project))
}

/// Where a call really runs, to show it (the prompt's "In", a reviewer's
/// `cwd`): the workdir of a shell tool's call wherever it is, else the
/// working directory its front door gave.
pub fn runs_in(execution: &ToolExecution) -> Option<PathBuf> {
    let given = given_cwd(execution);
    match workdir_in(execution) {
        Some(Some(workdir)) => resolve(workdir, given.as_deref()),
        Some(None) => None,
        None => given,
    }
}

fn given_cwd(execution: &ToolExecution) -> Option<PathBuf> {
    execution
        .invocation_context()
        .and_then(|c| c.get("cwd"))
        .and_then(Value::as_str)
        .filter(|c| Path::new(c).is_absolute())
        .map(PathBuf::from)
}

/// Where the call runs when it is not its working directory: the front
/// door's `workdir` (the Codex bridge), else a built-in shell tool's
/// `workdir` argument. `None` when there is none, `Some(None)` when it is
/// there but not a path.
fn workdir_in(execution: &ToolExecution) -> Option<Option<&str>> {
    if let Some(workdir) = execution.invocation_context().and_then(|c| c.get("workdir")) {
        return Some(workdir.as_str().filter(|w| !w.is_empty()));
    }
    if !crate::shell::is_shell_tool(execution.name()) {
        return None;
    }
    let workdir = execution.arguments().get("workdir")?;
    Some(workdir.as_str().filter(|w| !w.is_empty()))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Where `path` leads from `cwd`, symlinks resolved; `None` when it cannot
/// be known (a relative path with no working directory, `~user`, an empty
/// path, a loop of links).
pub fn resolve(path: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    if path.is_empty() {
        return None;
    }
    let (start, rest) = if path == "~" || path.starts_with("~/") {
        (real_dir(&home()?)?, path.get(2..).unwrap_or_default())
    } else if path.starts_with('~') {
        return None;
    } else if path.starts_with('/') {
        (PathBuf::from("/"), path)
    } else {
        (real_dir(cwd?)?, path)
    };
    walk(start, Path::new(rest), &mut 0)
}

/// How many links one path may pass through, as Linux allows (`ELOOP`).
const MAX_LINKS: u32 = 40;

/// `rest` taken step by step from `resolved` (itself free of links), as
/// the kernel walks a path: each existing link is replaced by where it
/// points — a dangling one too, since writing through it creates its
/// target — and `..` is taken from the link's target. Past a name that
/// does not exist nothing below can exist, so the rest is taken as
/// written. One `lstat` a component, where `std::fs::canonicalize` would
/// `readlink` every component from `/` and gives up on a missing one.
fn walk(mut resolved: PathBuf, rest: &Path, links: &mut u32) -> Option<PathBuf> {
    let mut missing = false;
    for component in rest.components() {
        match component {
            Component::Normal(part) => {
                resolved.push(part);
                if missing {
                    continue;
                }
                match std::fs::symlink_metadata(&resolved) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        *links += 1;
                        if *links > MAX_LINKS {
                            return None;
                        }
                        let target = std::fs::read_link(&resolved).ok()?;
                        resolved.pop();
                        let from = if target.is_absolute() {
                            PathBuf::from("/")
                        } else {
                            resolved
                        };
                        resolved = walk(from, &target, links)?;
                    }
                    Ok(_) => {}
                    Err(_) => missing = true,
                }
            }
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(resolved)
}

/// How long a directory's resolved form is reused: the roots and the
/// working directory of one call are resolved for every rule and every
/// command of it (dozens of times in a few microseconds); a moment later
/// they are walked again, so a link swapped in by the agent is seen by
/// its next call. A stale entry cannot widen a rule: a relative path is
/// walked from the same resolved directory as the root it is judged
/// against.
const FRESH: Duration = Duration::from_millis(100);

thread_local! {
    static REAL_DIRS: RefCell<Vec<(PathBuf, Instant, Option<PathBuf>)>> = const { RefCell::new(Vec::new()) };
}

/// `dir` with its links resolved (it is absolute), reused for [`FRESH`].
fn real_dir(dir: &Path) -> Option<PathBuf> {
    if !dir.is_absolute() {
        return None;
    }
    REAL_DIRS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let now = Instant::now();
        if let Some((_, at, real)) = cache.iter().find(|(d, _, _)| d == dir) {
            if now.duration_since(*at) < FRESH {
                return real.clone();
            }
        }
        let real = walk(PathBuf::from("/"), dir, &mut 0);
        cache.retain(|(d, _, _)| d != dir);
        if cache.len() >= 8 {
            cache.remove(0);
        }
        cache.push((dir.to_path_buf(), now, real.clone()));
        real
    })
}

/// A root a rule names: `cwd` (the call's working directory), `cwd/DIR` (a
/// directory in it), `~/…`, or an absolute path.
pub fn root(spec: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    if spec == "cwd" {
        return real_dir(cwd?);
    }
    if let Some(below) = spec.strip_prefix("cwd/") {
        return resolve(below, Some(cwd?));
    }
    if spec.starts_with('/') || spec == "~" || spec.starts_with("~/") {
        return resolve(spec, None);
    }
    None
}

/// Whether a root as written in a policy is one [`root`] can read.
pub fn is_root(spec: &str) -> bool {
    spec == "cwd"
        || spec
            .strip_prefix("cwd/")
            .is_some_and(|below| !below.is_empty() && !below.starts_with('/'))
        || spec.starts_with('/')
        || spec == "~"
        || spec.starts_with("~/")
}

/// Whether `path` resolves inside one of `roots` (or is one). A path that
/// cannot be resolved is inside none.
pub fn within_any(path: &str, roots: &[String], cwd: Option<&Path>) -> bool {
    within_resolved(path, &resolve_roots(roots, cwd), cwd)
}

/// The roots a rule names, resolved once for a call.
pub fn resolve_roots(roots: &[String], cwd: Option<&Path>) -> Vec<PathBuf> {
    roots.iter().filter_map(|r| root(r, cwd)).collect()
}

/// Whether `path` resolves inside one of the resolved `roots`.
pub fn within_resolved(path: &str, roots: &[PathBuf], cwd: Option<&Path>) -> bool {
    resolve(path, cwd).is_some_and(|path| roots.iter().any(|root| path.starts_with(root)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_against_the_working_directory_and_links_that_leave_are_outside() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let cwd = project.path();
        std::fs::create_dir(cwd.join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path(), cwd.join("escape")).unwrap();
        let roots = vec!["cwd".to_owned()];
        assert!(within_any("src/main.rs", &roots, Some(cwd)));
        assert!(within_any("./src/../Cargo.toml", &roots, Some(cwd)));
        assert!(within_any(".", &roots, Some(cwd)));
        assert!(!within_any("../x", &roots, Some(cwd)));
        assert!(!within_any("src/../../x", &roots, Some(cwd)));
        assert!(
            !within_any("escape/secret", &roots, Some(cwd)),
            "a link out of the project"
        );
        assert!(
            !within_any("escape/../x", &roots, Some(cwd)),
            ".. after a link is taken from its target"
        );
        assert!(!within_any("/etc/passwd", &roots, Some(cwd)));
        assert!(!within_any("~/.ssh/id_rsa", &roots, Some(cwd)));
        assert!(!within_any("~root/x", &roots, Some(cwd)));
        assert!(
            !within_any("src/main.rs", &roots, None),
            "no working directory: nothing is within it"
        );
        let abs = cwd.join("src/lib.rs");
        assert!(within_any(abs.to_str().unwrap(), &roots, Some(cwd)));
    }

    #[test]
    fn a_dangling_link_is_judged_by_where_writing_through_it_would_create_a_file() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let cwd = project.path();
        let roots = vec!["cwd".to_owned()];
        // `echo x > notes` through this link creates a file outside.
        std::os::unix::fs::symlink(outside.path().join("new-file"), cwd.join("notes")).unwrap();
        assert!(!within_any("notes", &roots, Some(cwd)));
        // A relative dangling link that stays inside is inside.
        std::os::unix::fs::symlink("draft.md", cwd.join("current.md")).unwrap();
        assert!(within_any("current.md", &roots, Some(cwd)));
        // A loop of links cannot be resolved, so it is within nothing.
        std::os::unix::fs::symlink("loop-b", cwd.join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", cwd.join("loop-b")).unwrap();
        assert!(!within_any("loop-a", &roots, Some(cwd)));
        assert_eq!(resolve("loop-a/x", Some(cwd)), None);
        // Below a missing name the path is taken as written.
        let real = resolve(".", Some(cwd)).unwrap();
        assert_eq!(resolve("new/dir/../f", Some(cwd)), Some(real.join("new/f")));
    }

    #[test]
    fn a_working_directory_reached_through_a_link_is_the_same_directory() {
        let base = tempfile::tempdir().unwrap();
        let real = base.path().join("real");
        std::fs::create_dir_all(real.join("src")).unwrap();
        std::os::unix::fs::symlink(&real, base.path().join("via")).unwrap();
        let via = base.path().join("via");
        let roots = vec!["cwd".to_owned()];
        assert!(within_any("src/main.rs", &roots, Some(&via)));
        let inside = real.join("src/main.rs");
        assert!(within_any(inside.to_str().unwrap(), &roots, Some(&via)));
        assert!(!within_any("../x", &roots, Some(&via)));
    }
}
