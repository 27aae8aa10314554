//! macOS's own programs (`/bin/ls`, `/usr/bin/head` …), with the grammars
//! of Apple's sources: FreeBSD's tools as Apple builds them (file_cmds for
//! `ls`, `stat`, `du`; text_cmds for `cat`, `head`, `tail`, `wc`, `uniq`,
//! `cut`, `grep`). A name is read
//! with one of these grammars only where the program `PATH` finds is
//! macOS's own (`shadow/userland.rs` decides, failing closed); anywhere
//! else the catalogue's GNU grammar, or nothing.
//!
//! Two option parsers, both Apple Libc's (`stdlib/FreeBSD/getopt.c`,
//! `getopt_long.c`): plain `getopt(3)`, which reads only one-letter
//! options and stops at the first operand (every later word, `-n` too, is
//! an operand); and `getopt_long(3)`, which also reads `--name`, `--name=v`
//! and any prefix of a long name that is not ambiguous, and moves operands
//! after the options (as GNU's does) unless the option string starts with
//! `+` or `POSIXLY_CORRECT` is set.

mod fileinfo;
mod grep;
mod programs;

use super::table::{Program, Syntax};

/// How a macOS program reads its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parser {
    /// `getopt(3)`: one-letter options, ending at the first operand.
    Getopt,
    /// `getopt_long(3)` with an option string starting with `+`: long
    /// options too, still ending at the first operand.
    InOrder,
    /// `getopt_long(3)`: options anywhere until `--`, unless
    /// `POSIXLY_CORRECT` is set.
    Permuting,
}

/// What `NAME --version` answers when `NAME` is macOS's own program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// It fails, and the first line on standard error is exactly this
    /// (getopt's complaint about `--version`).
    Refuses(&'static str),
    /// It succeeds, and the first line on standard output starts so.
    Prints(&'static str),
}

/// One of macOS's programs: its grammar, its parser and how it answers
/// the probe.
#[derive(Debug)]
pub(crate) struct Bsd {
    pub program: Program,
    pub parser: Parser,
    pub probe: Probe,
}

/// `getopt(3)`: one-letter options, bundled (`-la`), a value joined
/// (`-n5`) or in the next word; no long options at all.
const GETOPT: Syntax = Syntax {
    prefixes: false,
    ..Syntax::GNU
};
/// `getopt_long(3)` behind a rewrite of the leading `-NUM` words into
/// `-nNUM` (head's and tail's `obsolete()`).
const LONG_COUNTS: Syntax = Syntax::GNU_COUNTS;

/// Every macOS program the catalogue reads exactly.
pub(crate) fn programs() -> impl Iterator<Item = &'static Bsd> {
    programs::PROGRAMS
        .iter()
        .chain(fileinfo::PROGRAMS)
        .chain(std::iter::once(&grep::GREP))
}

/// macOS's `name`, if the catalogue has its grammar.
pub(crate) fn find(name: &str) -> Option<&'static Bsd> {
    programs().find(|b| b.program.name == name)
}

/// The markdown list of macOS's programs (docs/policy.md), each with its
/// parser, from the same tables the matcher reads (the docs test writes
/// and checks it).
#[cfg(test)]
pub(crate) fn markdown() -> String {
    let mut out = String::new();
    for bsd in programs() {
        super::docs::entry(&mut out, bsd.program.name, &bsd.program);
        let parser = match bsd.parser {
            Parser::Getopt => "  Read with `getopt(3)`: one-letter options only, ending at the first operand.\n",
            Parser::InOrder => {
                "  Read with `getopt_long(3)` in order (`+`): options end at the first operand; a long option may be abbreviated.\n"
            }
            Parser::Permuting => {
                "  Read with `getopt_long(3)`: options anywhere until `--` (at the first operand with `POSIXLY_CORRECT`); a long option may be abbreviated.\n"
            }
        };
        out.push_str(parser);
    }
    out
}

/// The macOS entry whose grammar `program` is, if it is one.
pub(crate) fn of(program: &Program) -> Option<&'static Bsd> {
    programs().find(|b| std::ptr::eq(&b.program, program))
}

#[cfg(test)]
mod sources;
#[cfg(test)]
mod tests;
