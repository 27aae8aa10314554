//! Paths as the agent's own process would resolve them: relative to its
//! working directory, `~` expanded, `.` and `..` taken step by step with
//! every symlink on the way resolved where it exists, so a link inside the
//! project that points out of it is outside.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use tether_tools::ToolExecution;

/// The working directory a call runs in, as its front door gave it (the
/// hook input's `cwd`, the link's `session/open`, the gateway's own): the
/// `cwd` of the call's invocation context.
pub fn cwd_of(execution: &ToolExecution) -> Option<PathBuf> {
    execution
        .invocation_context()
        .and_then(|c| c.get("cwd"))
        .and_then(Value::as_str)
        .filter(|c| Path::new(c).is_absolute())
        .map(PathBuf::from)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Where `path` leads from `cwd`, symlinks resolved; `None` when it cannot
/// be known (a relative path with no working directory, `~user`, an empty
/// path).
pub fn resolve(path: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    if path.is_empty() {
        return None;
    }
    let (start, rest) = if path == "~" || path.starts_with("~/") {
        (home()?, path.get(2..).unwrap_or_default())
    } else if path.starts_with('~') {
        return None;
    } else if path.starts_with('/') {
        (PathBuf::from("/"), path)
    } else {
        (cwd?.to_path_buf(), path)
    };
    // Where the whole path exists, the kernel resolves it as the agent's
    // process would, links and `..` alike, in one call.
    if let Ok(real) = std::fs::canonicalize(start.join(rest)) {
        return Some(real);
    }
    let mut resolved = settle(start);
    for component in Path::new(rest).components() {
        match component {
            Component::Normal(part) => {
                resolved.push(part);
                resolved = settle(resolved);
            }
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(resolved)
}

/// The path with its symlinks resolved when it exists, else as it is.
fn settle(path: PathBuf) -> PathBuf {
    match std::fs::symlink_metadata(&path) {
        Ok(_) => std::fs::canonicalize(&path).unwrap_or(path),
        Err(_) => path,
    }
}

/// A root a rule names: `cwd` (the call's working directory), `~/…`, or an
/// absolute path.
pub fn root(spec: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    if spec == "cwd" {
        return cwd.map(|c| settle(c.to_path_buf()));
    }
    if spec.starts_with('/') || spec == "~" || spec.starts_with("~/") {
        return resolve(spec, None);
    }
    None
}

/// Whether a root as written in a policy is one [`root`] can read.
pub fn is_root(spec: &str) -> bool {
    spec == "cwd" || spec.starts_with('/') || spec == "~" || spec.starts_with("~/")
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
}
