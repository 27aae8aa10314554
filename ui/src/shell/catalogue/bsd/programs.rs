//! macOS's `ls` (file_cmds-457.100.3) and `cat`, `head`, `tail`, `wc`,
//! `uniq`, `cut` (text_cmds-199). Every option each one's option string and long-option
//! table hold is listed, the ones an allow never covers as refused, so a
//! word is read as the program reads it (`sources.rs` pins the lists to
//! the option strings).

use super::super::table::Effect::{FollowsLinks, Recurses};
use super::super::table::{Kind, Operands, Program, Reads, Syntax, T, Takes, effect, flag, optional, refused, value};
use super::{Bsd, GETOPT, LONG_COUNTS, Parser, Probe};

/// `uniq -D[TYPE]`, `--all-repeated[=TYPE]` (uniq.c compares them ignoring
/// case; another case is not covered).
const SEPARATION: Kind = Kind::Choice(&["none", "prepend", "separate"]);

const N: Kind = Kind::Text;
/// `ls --color=WHEN`: ls.c's `do_color_always`, `_auto`, `_never`.
const WHEN: Kind = Kind::Choice(&["always", "yes", "force", "auto", "tty", "if-tty", "never", "no", "none"]);

pub(super) const PROGRAMS: &[Bsd] = &[
    Bsd {
        program: Program::new(
            "ls",
            "lists directories (macOS's own)",
            Syntax::GNU,
            &[
                flag("@", ""),
                flag("1", ""),
                flag("A", ""),
                flag("B", ""),
                flag("C", ""),
                value("D", "", T),
                flag("F", ""),
                flag("G", ""),
                flag("H", ""),
                flag("I", ""),
                effect("L", "", &[FollowsLinks]),
                flag("O", ""),
                flag("P", ""),
                effect("R", "", &[Recurses]),
                flag("S", ""),
                flag("T", ""),
                flag("U", ""),
                flag("W", ""),
                flag("X", ""),
                flag("a", ""),
                flag("b", ""),
                flag("c", ""),
                flag("d", ""),
                flag("e", ""),
                flag("f", ""),
                flag("g", ""),
                flag("h", ""),
                flag("i", ""),
                flag("k", ""),
                flag("l", ""),
                flag("m", ""),
                flag("n", ""),
                flag("o", ""),
                flag("p", ""),
                flag("q", ""),
                flag("r", ""),
                flag("s", ""),
                flag("t", ""),
                flag("u", ""),
                flag("v", ""),
                flag("w", ""),
                flag("x", ""),
                flag("y", ""),
                flag("%", ""),
                flag(",", ""),
                optional("", "color", WHEN),
            ],
            Operands::METAS,
            Reads::Names,
        ),
        parser: Parser::InOrder,
        probe: Probe::Refuses("ls: unrecognized option `--version'"),
    },
    Bsd {
        program: Program::new(
            "cat",
            "prints files (macOS's own)",
            GETOPT,
            &[
                flag("b", ""),
                flag("e", ""),
                refused(
                    "l",
                    "",
                    Takes::Nothing,
                    "waits for a lock on its standard output, as long as another process holds one",
                ),
                flag("n", ""),
                flag("s", ""),
                flag("t", ""),
                flag("u", ""),
                flag("v", ""),
            ],
            Operands::PATHS,
            Reads::Contents,
        ),
        parser: Parser::Getopt,
        probe: Probe::Refuses("cat: illegal option -- -"),
    },
    Bsd {
        program: Program {
            judge: Some(dash_is_a_file),
            ..Program::new(
                "head",
                "prints the first lines of files (macOS's own)",
                LONG_COUNTS,
                &[value("c", "bytes", N), value("n", "lines", N)],
                Operands::PATHS,
                Reads::Contents,
            )
        },
        parser: Parser::InOrder,
        probe: Probe::Refuses("head: unrecognized option `--version'"),
    },
    Bsd {
        program: Program {
            judge: Some(dash_is_a_file),
            ..Program::new(
                "tail",
                "prints the last lines of files (macOS's own)",
                LONG_COUNTS,
                &[
                    flag("F", ""),
                    value("b", "blocks", N),
                    value("c", "bytes", N),
                    flag("f", ""),
                    value("n", "lines", N),
                    flag("q", "quiet"),
                    flag("", "silent"),
                    flag("r", ""),
                    flag("v", "verbose"),
                ],
                Operands::PATHS,
                Reads::Contents,
            )
        },
        parser: Parser::InOrder,
        probe: Probe::Refuses("tail: unrecognized option `--version'"),
    },
    Bsd {
        program: Program {
            judge: Some(libxo),
            ..Program::new(
                "wc",
                "counts lines, words and bytes (macOS's own)",
                GETOPT,
                &[
                    flag("c", ""),
                    flag("l", ""),
                    flag("m", ""),
                    flag("w", ""),
                    flag("L", ""),
                ],
                Operands::PATHS,
                Reads::Contents,
            )
        },
        parser: Parser::Getopt,
        probe: Probe::Refuses("wc: illegal option -- -"),
    },
    Bsd {
        program: Program::new(
            "uniq",
            "drops repeated lines (macOS's own)",
            // uniq.c's `obsolete()` rewrites a leading `-NUM` into `-fNUM`
            // (and `+NUM`, read here as an input path, into `-sNUM`).
            LONG_COUNTS,
            &[
                optional("D", "all-repeated", SEPARATION),
                flag("c", "count"),
                flag("d", "repeated"),
                value("f", "skip-fields", N),
                flag("i", "ignore-case"),
                value("s", "skip-chars", N),
                flag("u", "unique"),
            ],
            // `uniq IN OUT` writes OUT; getopt stops at IN, so `uniq IN -c`
            // writes the file `-c`.
            Operands {
                leading: &[Kind::Path],
                rest: None,
            },
            Reads::Contents,
        ),
        parser: Parser::InOrder,
        probe: Probe::Refuses("uniq: unrecognized option `--version'"),
    },
    Bsd {
        program: Program::new(
            "cut",
            "prints parts of lines (macOS's own)",
            GETOPT,
            &[
                value("b", "", T),
                value("c", "", T),
                value("d", "", T),
                value("f", "", T),
                flag("n", ""),
                flag("s", ""),
                flag("w", ""),
            ],
            Operands::PATHS,
            Reads::Contents,
        ),
        parser: Parser::Getopt,
        probe: Probe::Refuses("cut: illegal option -- -"),
    },
];

/// macOS's `wc` hands its arguments to libxo (`xo_parse_args`) before
/// getopt sees them: libxo takes every word starting `--libxo`, wherever
/// it stands (after an operand, after `--`), and its options choose an
/// output encoder, which is a library it loads. Not read here, so never
/// covered.
fn libxo(args: &[String], cwd: Option<&std::path::Path>) -> Result<(), String> {
    match args.iter().find(|a| a.starts_with("--libxo")) {
        Some(word) => Err(format!(
            "`{word}` is read by macOS's wc as libxo's option wherever it stands, and libxo's options are not in the catalogue"
        )),
        None => dash_is_a_file(args, cwd),
    }
}

/// macOS's `head`, `tail` and `wc` open an operand `-` as a file of that
/// name (none of them reads it as standard input), which the matcher
/// takes for standard input: not covered.
fn dash_is_a_file(args: &[String], _cwd: Option<&std::path::Path>) -> Result<(), String> {
    match args.iter().any(|a| a == "-") {
        true => Err(
            "`-`: macOS's head, tail and wc open a file named `-`, not standard input, and the catalogue does not judge it as a path"
                .into(),
        ),
        false => Ok(()),
    }
}
