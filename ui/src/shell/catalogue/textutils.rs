//! Small GNU coreutils (Debian 12: coreutils 9.1) and util-linux filters
//! that read files or standard input and print to standard output only:
//! tr, tac, rev, paste, comm, fold, base64, od, the checksum programs,
//! readlink, nproc, seq. Options as `--help` lists them, every one of them
//! (an abbreviation resolves against all, as `getopt_long` does); a
//! checksum program's `--check` reads the files a list names, refused.

use super::table::{
    HELP, Kind, Operands, Opt, Program, READS_LISTED, Reads, Syntax, T, Takes, VERSION, flag, optional, refused, value,
};

const N: Kind = Kind::Text;

/// The options of coreutils' md5sum.c family (md5sum, sha*sum).
const DIGEST_OPTIONS: &[Opt] = &[
    flag("b", "binary"),
    refused("c", "check", Takes::Nothing, READS_LISTED),
    flag("", "tag"),
    flag("t", "text"),
    flag("z", "zero"),
    // Meaningful only with --check, which is refused.
    flag("", "ignore-missing"),
    flag("", "quiet"),
    flag("", "status"),
    flag("", "strict"),
    flag("w", "warn"),
    HELP,
    VERSION,
];

/// A checksum program: prints a digest of each file it is given.
const fn digest(name: &'static str, about: &'static str) -> Program {
    Program::new(
        name,
        about,
        Syntax::GNU,
        DIGEST_OPTIONS,
        Operands::PATHS,
        Reads::Contents,
    )
}

pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        "tr",
        "translates or deletes characters of its standard input (its operands are character sets, never files)",
        Syntax::GNU,
        &[
            flag("c", "complement"),
            flag("C", ""),
            flag("d", "delete"),
            flag("s", "squeeze-repeats"),
            flag("t", "truncate-set1"),
            HELP,
            VERSION,
        ],
        // SET1 [SET2]: a third word is an error, never a file.
        Operands {
            leading: &[T, T],
            rest: None,
        },
        Reads::Contents,
    ),
    Program::new(
        "tac",
        "prints files last line first",
        Syntax::GNU,
        &[
            flag("b", "before"),
            flag("r", "regex"),
            value("s", "separator", T),
            HELP,
            VERSION,
        ],
        Operands::PATHS,
        Reads::Contents,
    ),
    Program::new(
        "rev",
        "prints each line reversed (util-linux)",
        Syntax::GNU,
        &[flag("h", "help"), flag("V", "version")],
        Operands::PATHS,
        Reads::Contents,
    ),
    Program::new(
        "paste",
        "joins lines of files side by side",
        Syntax::GNU,
        &[
            value("d", "delimiters", T),
            flag("s", "serial"),
            flag("z", "zero-terminated"),
            HELP,
            VERSION,
        ],
        Operands::PATHS,
        Reads::Contents,
    ),
    Program::new(
        "comm",
        "compares two sorted files line by line",
        Syntax::GNU,
        &[
            flag("1", ""),
            flag("2", ""),
            flag("3", ""),
            flag("", "check-order"),
            flag("", "nocheck-order"),
            value("", "output-delimiter", T),
            flag("", "total"),
            flag("z", "zero-terminated"),
            HELP,
            VERSION,
        ],
        Operands::PATHS,
        Reads::Contents,
    ),
    Program::new(
        "fold",
        "wraps lines to a width",
        Syntax::GNU_COUNTS,
        &[
            flag("b", "bytes"),
            flag("s", "spaces"),
            value("w", "width", N),
            HELP,
            VERSION,
        ],
        Operands::PATHS,
        Reads::Contents,
    ),
    Program::new(
        "base64",
        "encodes or decodes base64 to standard output",
        Syntax::GNU,
        &[
            flag("d", "decode"),
            flag("i", "ignore-garbage"),
            value("w", "wrap", N),
            HELP,
            VERSION,
        ],
        Operands::PATHS,
        Reads::Contents,
    ),
    Program::new(
        "od",
        "dumps files in octal, hexadecimal and other formats",
        Syntax::GNU,
        &[
            value("A", "address-radix", T),
            value("", "endian", Kind::Choice(&["big", "little"])),
            value("j", "skip-bytes", N),
            value("N", "read-bytes", N),
            optional("S", "strings", N),
            value("t", "format", T),
            flag("v", "output-duplicates"),
            optional("w", "width", N),
            flag("", "traditional"),
            flag("a", ""),
            flag("b", ""),
            flag("c", ""),
            flag("d", ""),
            flag("f", ""),
            flag("i", ""),
            flag("l", ""),
            flag("o", ""),
            flag("s", ""),
            flag("x", ""),
            HELP,
            VERSION,
        ],
        Operands::PATHS,
        Reads::Contents,
    ),
    digest("md5sum", "prints MD5 digests of files"),
    digest("sha1sum", "prints SHA-1 digests of files"),
    digest("sha224sum", "prints SHA-224 digests of files"),
    digest("sha256sum", "prints SHA-256 digests of files"),
    digest("sha384sum", "prints SHA-384 digests of files"),
    digest("sha512sum", "prints SHA-512 digests of files"),
    Program::new(
        "readlink",
        "prints where links lead (names only)",
        Syntax::GNU,
        &[
            flag("f", "canonicalize"),
            flag("e", "canonicalize-existing"),
            flag("m", "canonicalize-missing"),
            flag("n", "no-newline"),
            flag("q", "quiet"),
            flag("s", "silent"),
            flag("v", "verbose"),
            flag("z", "zero"),
            HELP,
            VERSION,
        ],
        Operands::PATHS,
        Reads::Names,
    ),
    Program::new(
        "nproc",
        "prints the number of processors",
        Syntax::GNU,
        &[flag("", "all"), value("", "ignore", N), HELP, VERSION],
        Operands::NONE,
        Reads::Names,
    ),
    Program::new(
        "seq",
        "prints a sequence of numbers",
        Syntax::GNU,
        &[
            value("f", "format", T),
            value("s", "separator", T),
            flag("w", "equal-width"),
            HELP,
            VERSION,
        ],
        Operands::TEXT,
        Reads::Names,
    ),
];
