//! macOS's `grep` (text_cmds-199 `grep/grep.c`: FreeBSD's grep as Apple
//! builds it, with `-J`, `-M`, `-X`, `-Z` decompressing in-process and no
//! `-P`). `getopt_long` without `+`: options follow operands unless
//! `POSIXLY_CORRECT` is set. `-NUM` is no count here but digits, each an
//! option of its own (`-15`, `-5n`).
//!
//! Its recursive walk (`-r`, `-R`, `-d recurse`) is fts's: hidden files
//! too; links skipped unless `-S` (every link followed) or `-O` (only an
//! operand that is a link). `--include`, `--exclude`, `--include-dir`
//! and `--exclude-dir` only narrow that walk, by rules the catalogue does
//! not read (fnmatch against the path and the name), so the walk is
//! judged whole.

use super::super::table::Effect::{FiltersUnread, FollowsLinks, GivesPattern, Recurses};
use super::super::table::{Kind, Operands, P, PAT, Program, Reads, Syntax, T, effect, flag, optional, value};
use super::{Bsd, Parser, Probe};

const N: Kind = Kind::Text;
/// `--color=WHEN` as grep.c compares it (case aside: another case is not
/// covered).
const WHEN: Kind = Kind::Choice(&["auto", "tty", "if-tty", "always", "yes", "force", "never", "none", "no"]);

pub(super) const GREP: Bsd = Bsd {
    program: Program {
        judge: Some(grep_options),
        ..Program::new(
            "grep",
            "searches files for a pattern (macOS's own)",
            Syntax::GNU,
            &[
                flag("0", ""),
                flag("1", ""),
                flag("2", ""),
                flag("3", ""),
                flag("4", ""),
                flag("5", ""),
                flag("6", ""),
                flag("7", ""),
                flag("8", ""),
                flag("9", ""),
                value("A", "after-context", N),
                value("B", "before-context", N),
                value("C", "", N),
                optional("", "context", N),
                value("D", "devices", Kind::Choice(&["read", "skip"])),
                flag("E", "extended-regexp"),
                flag("F", "fixed-strings"),
                flag("G", "basic-regexp"),
                flag("H", "with-filename"),
                flag("I", ""),
                flag("J", "bz2decompress"),
                flag("L", "files-without-match"),
                flag("M", "lzma"),
                flag("O", ""),
                effect("S", "", &[FollowsLinks]),
                effect("R", "", &[Recurses]),
                flag("U", "binary"),
                flag("V", "version"),
                flag("X", "xz"),
                flag("Z", "decompress"),
                flag("a", "text"),
                flag("b", "byte-offset"),
                flag("c", "count"),
                // `-d recurse` is `-r`: only the other two actions are read.
                value("d", "directories", Kind::Choice(&["read", "skip"])),
                value("e", "regexp", PAT).with(&[GivesPattern]),
                value("f", "file", P).with(&[GivesPattern]),
                flag("h", "no-filename"),
                flag("i", "ignore-case"),
                flag("l", "files-with-matches"),
                value("m", "max-count", N),
                flag("n", "line-number"),
                flag("o", "only-matching"),
                flag("p", ""),
                flag("q", "quiet"),
                flag("", "silent"),
                effect("r", "recursive", &[Recurses]),
                flag("s", "no-messages"),
                flag("u", "unix-byte-offsets"),
                flag("v", "invert-match"),
                flag("w", "word-regexp"),
                flag("x", "line-regexp"),
                flag("y", ""),
                flag("z", "null-data"),
                value("", "binary-files", Kind::Choice(&["binary", "without-match", "text"])),
                flag("", "help"),
                flag("", "mmap"),
                flag("", "line-buffered"),
                value("", "label", T),
                flag("", "null"),
                optional("", "color", WHEN),
                optional("", "colour", WHEN),
                value("", "exclude", T).with(&[FiltersUnread]),
                value("", "include", T).with(&[FiltersUnread]),
                value("", "exclude-dir", T).with(&[FiltersUnread]),
                value("", "include-dir", T).with(&[FiltersUnread]),
            ],
            Operands::PATTERN_THEN_PATHS,
            Reads::Contents,
        )
    },
    parser: Parser::Permuting,
    probe: Probe::Prints("grep (BSD grep, GNU compatible) "),
};

/// macOS's grep puts the words of `GREP_OPTIONS` (split at spaces) before
/// its own arguments: options this command does not show. The console's
/// environment is the user's, which the agent's shell inherits.
fn grep_options(_args: &[String], _cwd: Option<&std::path::Path>) -> Result<(), String> {
    unread_options(std::env::var_os("GREP_OPTIONS").as_deref())
}

/// Why a grep whose `GREP_OPTIONS` is `value` is not covered, if so (any
/// word but none: grep skips an empty value).
pub(super) fn unread_options(value: Option<&std::ffi::OsStr>) -> Result<(), String> {
    match value {
        Some(set) if !set.is_empty() => Err(
            "GREP_OPTIONS is set in the environment: macOS's grep reads its words as options before the command's own"
                .into(),
        ),
        _ => Ok(()),
    }
}
