//! The parts of a call an always-rule's fit reads: a shell call's exact
//! command, a path's directory, and whether a path stays inside one.

use std::path::Path;

use serde_json::Value;

use super::Fit;
use crate::{paths, shell};

/// The narrowest fit of a shell call: its command as written, its other
/// arguments free. A built-in shell tool's command is at one of its own
/// pointers, and only when the other is absent (both: two commands).
pub(super) fn exact_command(tool: &str, arguments: &Value, command_at: Option<&str>) -> Option<Fit> {
    let (pointer, absent) = match command_at {
        Some(pointer) if !shell::is_shell_tool(tool) => (pointer, Vec::new()),
        _ if shell::is_shell_tool(tool) => {
            let present: Vec<&str> = shell::BUILT_IN_POINTERS
                .into_iter()
                .filter(|p| arguments.pointer(p).is_some())
                .collect();
            let [pointer] = present[..] else { return None };
            let absent = shell::BUILT_IN_POINTERS
                .into_iter()
                .filter(|p| *p != pointer)
                .map(str::to_owned)
                .collect();
            (pointer, absent)
        }
        _ => return None,
    };
    let command = arguments.pointer(pointer)?.clone();
    Some(Fit::Command {
        pointer: pointer.to_owned(),
        command,
        absent,
    })
}

/// The directory of a path, when the path has one and no `.` / `..` parts.
pub(super) fn directory_of(path: &str) -> Option<String> {
    let (dir, _) = path.rsplit_once('/')?;
    let normal = !dir.is_empty() && dir.split('/').all(|part| !matches!(part, "." | ".."));
    normal.then(|| dir.to_owned())
}

/// Whether `path` lies under `dir` without climbing out of it: as text (no
/// `.` or `..` parts), and where it leads, symlinks resolved (a link under
/// `dir` that points elsewhere is not under it). Relative paths are resolved
/// from the call's working directory; without one, only the text is judged.
pub(super) fn inside(path: &str, dir: &str, cwd: Option<&Path>) -> bool {
    let textually = path
        .strip_prefix(dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| !rest.is_empty() && rest.split('/').all(|part| !matches!(part, "" | "." | "..")));
    if !textually {
        return false;
    }
    let relative = !dir.starts_with('/') && !dir.starts_with('~');
    if relative && cwd.is_none() {
        return true;
    }
    match (paths::resolve(path, cwd), paths::resolve(dir, cwd)) {
        (Some(path), Some(dir)) => path.starts_with(dir),
        _ => false,
    }
}
