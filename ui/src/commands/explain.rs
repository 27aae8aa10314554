//! `tether explain -- COMMAND`: how a shell command is read — each command
//! bash would run, which the read-only catalogue covers word by word and
//! which it refuses and why, and every command a deny or ask rule sees.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::sanitize;
use crate::shell::{self, Script, catalogue};

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
            for (k, segment) in segments.iter().enumerate() {
                let reading = catalogue::explain(segment, cwd.as_deref());
                let shown = sanitize::escape(&shell::join(&segment.values()));
                match &reading.refused {
                    None => writeln!(out, "command {}: {shown}  — covered by @read-only", k + 1)?,
                    Some(why) => {
                        covered = false;
                        writeln!(
                            out,
                            "command {}: {shown}  — NOT covered: {}",
                            k + 1,
                            sanitize::escape(why)
                        )?;
                    }
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
                if let Some(why) = catalogue::names_secret(segment, cwd.as_deref()) {
                    writeln!(out, "  names a secret (@secret): {why}")?;
                }
            }
        }
    }
    writeln!(out, "what deny and ask rules see (every command bash could run):")?;
    for found in &script.found {
        writeln!(out, "  {}", sanitize::escape(&shell::join(found)))?;
    }
    Ok(if covered {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_FAILED)
    })
}
