//! macOS's `stat` and `du` (file_cmds-457.100.3): metadata only, read
//! with `stat(2)` and fts; `du` descends into directories, following
//! links only with `-L` (`-H`: a link given as an operand).

use super::super::table::Effect::FollowsLinks;
use super::super::table::{Operands, Program, Reads, Syntax, T, effect, flag, value};
use super::{Bsd, GETOPT, Parser, Probe};

pub(super) const PROGRAMS: &[Bsd] = &[
    Bsd {
        program: Program::new(
            "stat",
            "shows a file's metadata (macOS's own)",
            GETOPT,
            &[
                value("f", "", T),
                flag("F", ""),
                flag("l", ""),
                flag("L", ""),
                flag("n", ""),
                flag("q", ""),
                flag("r", ""),
                flag("s", ""),
                value("t", "", T),
                flag("x", ""),
            ],
            Operands::METAS,
            Reads::Names,
        ),
        parser: Parser::Getopt,
        probe: Probe::Refuses("stat: illegal option -- -"),
    },
    Bsd {
        program: Program::new(
            "du",
            "measures disk usage (macOS's own)",
            Syntax::GNU,
            &[
                flag("A", ""),
                value("B", "", T),
                flag("H", ""),
                value("I", "", T),
                effect("L", "", &[FollowsLinks]),
                flag("P", ""),
                flag("a", ""),
                flag("s", ""),
                value("d", "", T),
                flag("c", ""),
                flag("g", ""),
                flag("h", ""),
                flag("k", ""),
                flag("l", ""),
                flag("m", ""),
                flag("n", ""),
                flag("r", ""),
                value("t", "", T),
                flag("x", ""),
                flag("", "si"),
            ],
            Operands::METAS,
            Reads::Names,
        )
        .recursive(),
        parser: Parser::InOrder,
        probe: Probe::Refuses("du: unrecognized option `--version'"),
    },
];
