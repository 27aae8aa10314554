//! GNU diffutils that only read (Debian 12: diffutils 3.8): `diff` and
//! `cmp`. Options as `--help` lists them; those that write, run a program
//! or read files named elsewhere are listed refused, so an abbreviation
//! resolves against every option as `getopt_long` does.

use super::table::{HELP, Kind, Operands, Program, RUNS, Reads, Syntax, T, Takes, flag, optional, refused, value};

const N: Kind = Kind::Text;
const WHEN: Kind = Kind::Choice(&["always", "yes", "force", "never", "no", "none", "auto", "tty", "if-tty"]);

pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        "diff",
        "compares two files",
        Syntax::GNU,
        &[
            flag("", "normal"),
            flag("q", "brief"),
            flag("s", "report-identical-files"),
            // `-c` and `-u` take nothing: `-ur` is `-u -r`, `-ul` is `-u -l`.
            flag("c", ""),
            optional("", "context", N),
            flag("u", ""),
            optional("", "unified", N),
            value("C", "", N),
            value("U", "", N),
            flag("e", "ed"),
            flag("n", "rcs"),
            flag("y", "side-by-side"),
            value("W", "width", N),
            flag("", "left-column"),
            flag("", "suppress-common-lines"),
            flag("p", "show-c-function"),
            value("F", "show-function-line", T),
            refused("l", "paginate", Takes::Nothing, RUNS),
            flag("t", "expand-tabs"),
            flag("T", "initial-tab"),
            value("", "tabsize", N),
            flag("", "suppress-blank-empty"),
            refused(
                "r",
                "recursive",
                Takes::Nothing,
                "compares whole trees, reading every file in them",
            ),
            flag("", "no-dereference"),
            refused("N", "new-file", Takes::Nothing, "reads files missing from one side"),
            refused(
                "",
                "unidirectional-new-file",
                Takes::Nothing,
                "reads files missing from one side",
            ),
            flag("", "ignore-file-name-case"),
            flag("", "no-ignore-file-name-case"),
            refused("x", "exclude", Takes::Value(T), "applies to recursive comparisons"),
            refused("X", "exclude-from", Takes::Value(T), "applies to recursive comparisons"),
            refused(
                "S",
                "starting-file",
                Takes::Value(T),
                "applies to recursive comparisons",
            ),
            refused(
                "",
                "from-file",
                Takes::Value(T),
                "compares a file with any number of others",
            ),
            refused(
                "",
                "to-file",
                Takes::Value(T),
                "compares a file with any number of others",
            ),
            flag("i", "ignore-case"),
            flag("E", "ignore-tab-expansion"),
            flag("Z", "ignore-trailing-space"),
            flag("b", "ignore-space-change"),
            flag("w", "ignore-all-space"),
            flag("B", "ignore-blank-lines"),
            value("I", "ignore-matching-lines", T),
            flag("a", "text"),
            flag("", "strip-trailing-cr"),
            value("D", "ifdef", T),
            value("", "old-group-format", T),
            value("", "new-group-format", T),
            value("", "changed-group-format", T),
            value("", "unchanged-group-format", T),
            value("", "line-format", T),
            value("", "old-line-format", T),
            value("", "new-line-format", T),
            value("", "unchanged-line-format", T),
            value("", "label", T),
            flag("d", "minimal"),
            value("", "horizon-lines", N),
            flag("", "speed-large-files"),
            optional("", "color", WHEN),
            value("", "palette", T),
            HELP,
            flag("v", "version"),
        ],
        Operands {
            leading: &[Kind::Path, Kind::Path],
            rest: None,
        },
        Reads::Contents,
    )
    // Given a directory, diff compares every file in it with its namesake
    // on the other side, following links (`diff . other` printed ./.env).
    .recursive()
    .following(),
    Program::new(
        "cmp",
        "compares two files byte by byte",
        Syntax::GNU,
        &[
            flag("b", "print-bytes"),
            value("i", "ignore-initial", T),
            flag("l", "verbose"),
            value("n", "bytes", T),
            flag("s", "quiet"),
            flag("", "silent"),
            HELP,
            flag("v", "version"),
        ],
        Operands {
            leading: &[Kind::Path, Kind::Path, Kind::Text, Kind::Text],
            rest: None,
        },
        Reads::Contents,
    ),
];
