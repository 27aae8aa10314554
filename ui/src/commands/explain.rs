//! `tether explain -- COMMAND`: how a shell command is read — each command
//! bash would run, where it runs (after a `cd`, as the policy judges it),
//! which the read-only catalogue covers word by word and which it refuses
//! and why, and every command a deny or ask rule sees.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::sanitize;
use crate::shell::{self, Place, Script, Segment, catalogue};

/// Prints the reading of `words` (joined by spaces: the text bash reads),
/// judged from `cwd` (default: the current directory). Exit 0 when the
/// catalogue covers every command, 1 when it does not.
pub fn run(words: &[String], cwd: Option<&Path>, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let out = &mut super::UnlessClosed::new(out);
    let text = words.join(" ");
    let cwd: Option<PathBuf> = match cwd {
        Some(dir) => Some(std::path::absolute(dir)?),
        None => std::env::current_dir().ok(),
    };
    let cwd = cwd.as_deref();
    let script = Script::parse(&text);
    writeln!(out, "{}", sanitize::escape(&text))?;
    let mut covered = true;
    match &script.segments {
        Err(opaque) => {
            covered = false;
            writeln!(
                out,
                "not covered: it holds {} (`{}`), which no allow rule covers",
                opaque.why,
                sanitize::escape(text.get(opaque.span.clone()).unwrap_or_default())
            )?;
        }
        Ok(segments) => {
            // Where each runs after a `cd`: the policy's own reading.
            let places = shell::places(segments, cwd);
            for (k, segment) in segments.iter().enumerate() {
                let place = places.as_ref().and_then(|p| p.get(k));
                covered &= command(out, k + 1, segment, place, cwd)?;
            }
        }
    }
    writeln!(out, "what deny and ask rules see (every command bash could run):")?;
    for found in &script.found {
        writeln!(out, "  {}", sanitize::escape(&shell::join(found)))?;
    }
    for read in &script.reads {
        writeln!(out, "  reads the file {} (a redirection)", sanitize::escape(read))?;
    }
    Ok(if covered {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_FAILED)
    })
}

/// Prints how command `number` fares where it runs (`place`; `None`: in
/// `project`, where the agent works), as the `@read-only` allow and the
/// `@secret` ask see it; whether the catalogue covers it.
fn command(
    out: &mut dyn Write,
    number: usize,
    segment: &Segment,
    place: Option<&Place>,
    project: Option<&Path>,
) -> anyhow::Result<bool> {
    let shown = sanitize::escape(&shell::join(&segment.values()));
    let mut covered = true;
    match place {
        Some(Place::Cd) => writeln!(
            out,
            "command {number}: {shown}  — changes the directory: the commands after it are judged from where it goes"
        )?,
        Some(Place::Unknown(why)) => {
            covered = false;
            writeln!(
                out,
                "command {number}: {shown}  — NOT covered: it runs {}",
                sanitize::escape(why)
            )?;
        }
        None => covered = reading(out, number, &shown, segment, None, project)?,
        Some(Place::In(dirs)) => {
            for dir in dirs {
                covered &= reading(out, number, &shown, segment, Some(dir), project)?;
            }
        }
    }
    if let Some(why) = shell::names_secret_at(segment, place, project) {
        writeln!(out, "  names a secret (@secret): {}", sanitize::escape(why))?;
    }
    Ok(covered)
}

/// Prints the catalogue's reading of one command run in `dir` (`None`: in
/// `project`), word by word; whether it covers it.
fn reading(
    out: &mut dyn Write,
    number: usize,
    shown: &str,
    segment: &Segment,
    dir: Option<&Path>,
    project: Option<&Path>,
) -> anyhow::Result<bool> {
    let reading = catalogue::explain_in(segment, dir.or(project), project);
    let at = dir.map(|d| format!(" (run in {})", sanitize::escape(&d.display().to_string())));
    let at = at.unwrap_or_default();
    match &reading.refused {
        None => writeln!(out, "command {number}: {shown}{at}  — covered by @read-only")?,
        Some(why) => writeln!(
            out,
            "command {number}: {shown}{at}  — NOT covered: {}",
            sanitize::escape(why)
        )?,
    }
    let width = reading
        .notes
        .iter()
        .map(|n| n.word.chars().count())
        .max()
        .unwrap_or(0)
        .min(24);
    for note in &reading.notes {
        writeln!(
            out,
            "  {:width$}  {}",
            sanitize::escape(&note.word),
            sanitize::escape(&note.read_as)
        )?;
    }
    Ok(reading.refused.is_none())
}
