//! The paths a command names, judged: an input path (inside the working
//! directory, links resolved, no secret), a path whose metadata only is
//! read, and the files its standard input is redirected from.

use std::path::Path;

use super::Segment;
use super::grammar::Notes;
use crate::{paths, secrets};

/// The files a segment's standard input is redirected from: each an input
/// path (bash opens it, the program reads it).
pub(super) fn inputs(
    segment: &Segment,
    cwd: Option<&Path>,
    project: Option<&Path>,
    notes: &mut Notes,
) -> Result<(), String> {
    if segment.inputs.is_empty() {
        return Ok(());
    }
    let root = project.and_then(|c| paths::root("cwd", Some(c)));
    for input in &segment.inputs {
        notes.note(&format!("<{}", input.value), || {
            "standard input read from an input path".into()
        });
        // `< -` opens a file named `-`, never standard input.
        let path = if input.value == "-" { "./-" } else { &input.value };
        input_path(path, cwd, root.as_deref()).map_err(|why| format!("standard input: {why}"))?;
    }
    Ok(())
}

/// `/proc/self/…`, `/proc/thread-self/…` and `/dev/fd/N` name the files of
/// the process that opens them: resolved here they are the console's (its
/// working directory, its descriptors), not the agent's command's.
fn own_process(path: &str) -> Result<(), String> {
    let own = ["/proc/", "/dev/fd", "/dev/std"].iter().any(|p| path.starts_with(p));
    if own {
        return Err(format!(
            "`{path}` names the reading process's own files, which Tether cannot resolve as the command would"
        ));
    }
    Ok(())
}

/// A path whose metadata only is read: inside the working directory, links
/// resolved (a secret's name is fine: its contents are never read).
pub(super) fn meta_path(path: &str, cwd: Option<&Path>, root: Option<&Path>) -> Result<(), String> {
    own_process(path)?;
    let root = root.ok_or_else(|| format!("`{path}`: no working directory to judge the path from"))?;
    let resolved = paths::resolve(path, cwd).ok_or_else(|| format!("`{path}` cannot be resolved"))?;
    if resolved.starts_with(root) {
        Ok(())
    } else {
        Err(format!("`{path}` is outside the working directory"))
    }
}

/// An input path: `-` (standard input), or inside the working directory,
/// links resolved, naming no secret.
pub(super) fn input_path(path: &str, cwd: Option<&Path>, root: Option<&Path>) -> Result<(), String> {
    if path == "-" {
        return Ok(());
    }
    if let Some(why) = secrets::why(path) {
        return Err(format!("`{path}` may hold secrets: {why}"));
    }
    own_process(path)?;
    let root = root.ok_or_else(|| format!("`{path}`: no working directory to judge the path from"))?;
    let resolved = paths::resolve(path, cwd).ok_or_else(|| format!("`{path}` cannot be resolved"))?;
    let inside = resolved
        .strip_prefix(root)
        .map_err(|_| format!("`{path}` is outside the working directory"))?;
    if let Some(why) = secrets::why_path(inside).or_else(|| secrets::bare_config(&resolved)) {
        return Err(format!(
            "`{path}` leads to {}, which may hold secrets: {why}",
            inside.display()
        ));
    }
    Ok(())
}
