//! The read-only catalogue (`"command": ["@read-only"]`): programs that
//! only read, each with the grammar of its arguments as the program itself
//! parses them. An allow covers a command only when every word of it is
//! accounted for — the program is catalogued, each option is one the
//! program really accepts and known to be safe (GNU's abbreviations and
//! bundles resolved as `getopt_long` resolves them), each operand is of a
//! kind the grammar names, and every input path stays inside the working
//! directory and names no secret. An unknown word makes the command not
//! covered: the catalogue answers "is every word known and safe?", never
//! "is some word known to be bad?".
//!
//! The grammars are data ([`Program`]), one file per family; one matcher
//! ([`grammar`]) reads them all and never special-cases a program.

mod bsd;
mod coreutils;
mod diffutils;
mod docs;
mod effects;
mod fileinfo;
mod git;
mod glob;
mod grammar;
mod grepwalk;
mod info;
mod inputs;
mod jq;
mod judge;
mod listing;
mod order;
mod search;
mod secret;
mod sed;
mod shadow;
mod shopts;
mod syntax;
mod table;
mod textutils;
mod walk;
mod zsh;

use std::path::Path;

pub use docs::markdown;
pub use table::{Check, Kind, Operands, Opt, Program, Reads, Role, Syntax, Takes};

use super::{Segment, Word};

/// Every program of the catalogue, in the order docs/policy.md lists them.
pub fn programs() -> impl Iterator<Item = &'static Program> {
    coreutils::PROGRAMS
        .iter()
        .chain(fileinfo::PROGRAMS)
        .chain(textutils::PROGRAMS)
        .chain(diffutils::PROGRAMS)
        .chain(search::PROGRAMS)
        .chain(listing::PROGRAMS)
        .chain(std::iter::once(&sed::SED))
        .chain(std::iter::once(&jq::JQ))
        .chain(info::PROGRAMS)
        .chain(std::iter::once(&git::GIT))
}

/// The catalogued program a command's first word names: only a bare name
/// (`cat`, never `./cat` or `/tmp/cat`, which may be anything). Where the
/// one `PATH` finds is macOS's own, its grammar is macOS's (`bsd/`).
pub fn program(name: &str) -> Option<&'static Program> {
    shadow::userland::macos_program(name).or_else(|| programs().find(|p| p.name == name))
}

/// What the catalogue made of one word (for `tether explain`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The word as the program receives it.
    pub word: String,
    /// What the grammar read it as ("option --line-number", "input path").
    pub read_as: String,
}

/// How one command fared: covered, or the first word refused and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Each word accounted for, in order, up to the one refused.
    pub notes: Vec<Note>,
    /// Why the command is not covered, naming the word; `None`: covered.
    pub refused: Option<String>,
}

/// Whether the catalogue covers one command, judged from `cwd`.
pub fn covers(segment: &Segment, cwd: Option<&Path>) -> Result<(), String> {
    covers_in(segment, cwd, cwd)
}

/// [`covers`] for a command run in `cwd` (where an earlier `cd` left it)
/// whose paths must stay inside `project`, the directory the agent works
/// in.
pub fn covers_in(segment: &Segment, cwd: Option<&Path>, project: Option<&Path>) -> Result<(), String> {
    judge::judge(segment, cwd, project, &mut grammar::Notes::off())
}

/// [`covers`], word by word, for `tether explain`.
pub fn explain(segment: &Segment, cwd: Option<&Path>) -> Reading {
    explain_in(segment, cwd, cwd)
}

/// [`covers_in`], word by word, for `tether explain`.
pub fn explain_in(segment: &Segment, cwd: Option<&Path>, project: Option<&Path>) -> Reading {
    let mut notes = grammar::Notes::on();
    let refused = judge::judge(segment, cwd, project, &mut notes).err();
    Reading {
        notes: notes.into_vec(),
        refused,
    }
}

/// Whether a command names a secret path: any word, an option's value, a
/// file-name pattern's matches in `cwd` (`cat .en?`), or a file its
/// standard input is redirected from (`wc -l < .env`).
pub fn names_secret(segment: &Segment, cwd: Option<&Path>) -> Option<&'static str> {
    names_secret_in(segment, cwd, cwd)
}

/// [`names_secret`] for a command run in `cwd` (where an earlier `cd` left
/// it) in the project the agent works in, `project`: a relative word is
/// also read from there (`cd .git && cat config` reads `.git/config`).
pub fn names_secret_in(segment: &Segment, cwd: Option<&Path>, project: Option<&Path>) -> Option<&'static str> {
    let moved = match (cwd, project) {
        (Some(cwd), Some(project)) if cwd != project => Some(cwd.strip_prefix(project).unwrap_or(cwd)),
        _ => None,
    };
    let at = secret::At { dir: cwd, moved };
    secret::names_secret(&segment.words, at)
        .or_else(|| segment.inputs.iter().find_map(|w| secret::path_secret(&w.value, at)))
}

#[cfg(test)]
mod tests;
