//! Reference data, copied from Apple's sources: each macOS program's
//! option string and long-option table, and Libc's messages. The test
//! pins every grammar of `bsd/` to them: each option the program accepts
//! is in its grammar (safe or refused), with the same arity, and nothing
//! else; the parser and the `--version` answer follow from the call.

use super::super::table::{Program, Takes};
use super::{Parser, Probe, find};

/// `has_arg` of a `struct option`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Arg {
    No,
    Required,
    Optional,
}

/// Which Libc function reads the options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Getopt,
    GetoptLong,
}

struct Source {
    name: &'static str,
    /// `owner/name`, tag and file the strings were copied from.
    repo: &'static str,
    tag: &'static str,
    file: &'static str,
    call: Call,
    optstring: &'static str,
    /// `{name, has_arg, flag, val}`: the name, its `has_arg`, and `val`
    /// where it is an option letter.
    long: &'static [(&'static str, Arg, Option<char>)],
    /// Leading `-NUM` words rewritten to `-nNUM` (`obsolete()`).
    obsolete: bool,
}

const TEXT_CMDS: &str = "apple-oss-distributions/text_cmds";
const TAG: &str = "text_cmds-199";
const FILE_CMDS: &str = "apple-oss-distributions/file_cmds";
const FILE_TAG: &str = "file_cmds-457.100.3";

const SOURCES: &[Source] = &[
    Source {
        name: "ls",
        repo: FILE_CMDS,
        tag: FILE_TAG,
        file: "ls/ls.c",
        call: Call::GetoptLong,
        // The `__APPLE__` branch; `--color` is built in (COLORLS).
        optstring: "+@1ABCD:FGHILOPRSTUWXabcdefghiklmnopqrstuvwxy%,",
        long: &[("color", Arg::Optional, None)],
        obsolete: false,
    },
    Source {
        name: "cat",
        repo: TEXT_CMDS,
        tag: TAG,
        file: "cat/cat.c",
        call: Call::Getopt,
        // SUPPORTED_FLAGS without BOOTSTRAP_CAT.
        optstring: "belnstuv",
        long: &[],
        obsolete: false,
    },
    Source {
        name: "head",
        repo: TEXT_CMDS,
        tag: TAG,
        file: "head/head.c",
        call: Call::GetoptLong,
        optstring: "+n:c:",
        long: &[("bytes", Arg::Required, Some('c')), ("lines", Arg::Required, Some('n'))],
        obsolete: true,
    },
    Source {
        name: "tail",
        repo: TEXT_CMDS,
        tag: TAG,
        file: "tail/tail.c",
        call: Call::GetoptLong,
        optstring: "+Fb:c:fn:qrv",
        long: &[
            ("blocks", Arg::Required, Some('b')),
            ("bytes", Arg::Required, Some('c')),
            ("lines", Arg::Required, Some('n')),
            ("quiet", Arg::No, Some('q')),
            ("silent", Arg::No, Some('q')),
            ("verbose", Arg::No, Some('v')),
        ],
        obsolete: true,
    },
    Source {
        name: "wc",
        repo: TEXT_CMDS,
        tag: TAG,
        file: "wc/wc.c",
        call: Call::Getopt,
        // After `xo_parse_args` (see `programs.rs`).
        optstring: "clmwL",
        long: &[],
        obsolete: false,
    },
    Source {
        name: "uniq",
        repo: TEXT_CMDS,
        tag: TAG,
        file: "uniq/uniq.c",
        call: Call::GetoptLong,
        optstring: "+D::cdif:s:u",
        long: &[
            ("all-repeated", Arg::Optional, Some('D')),
            ("count", Arg::No, Some('c')),
            ("repeated", Arg::No, Some('d')),
            ("skip-fields", Arg::Required, Some('f')),
            ("ignore-case", Arg::No, Some('i')),
            ("skip-chars", Arg::Required, Some('s')),
            ("unique", Arg::No, Some('u')),
        ],
        obsolete: true,
    },
    Source {
        name: "cut",
        repo: TEXT_CMDS,
        tag: TAG,
        file: "cut/cut.c",
        call: Call::Getopt,
        optstring: "b:c:d:f:snw",
        long: &[],
        obsolete: false,
    },
    Source {
        name: "stat",
        repo: FILE_CMDS,
        tag: FILE_TAG,
        file: "stat/stat.c",
        call: Call::Getopt,
        // The `__APPLE__` branch, run as `stat` (as `readlink` it reads "fn").
        optstring: "f:FlLnqrst:x",
        long: &[],
        obsolete: false,
    },
    Source {
        name: "du",
        repo: FILE_CMDS,
        tag: FILE_TAG,
        file: "du/du.c",
        call: Call::GetoptLong,
        optstring: "+AB:HI:LPasd:cghklmnrt:x",
        long: &[("si", Arg::No, None)],
        obsolete: false,
    },
    Source {
        name: "grep",
        repo: TEXT_CMDS,
        tag: TAG,
        file: "grep/grep.c",
        call: Call::GetoptLong,
        // The `__APPLE__` branch.
        optstring: "0123456789A:B:C:D:EFGHIJLMOSRUVXZabcd:e:f:hilm:nopqrsuvwxyz",
        long: &[
            ("binary-files", Arg::Required, None),
            ("help", Arg::No, None),
            ("mmap", Arg::No, None),
            ("line-buffered", Arg::No, None),
            ("label", Arg::Required, None),
            ("null", Arg::No, None),
            ("color", Arg::Optional, None),
            ("colour", Arg::Optional, None),
            ("exclude", Arg::Required, None),
            ("include", Arg::Required, None),
            ("exclude-dir", Arg::Required, None),
            ("include-dir", Arg::Required, None),
            ("after-context", Arg::Required, Some('A')),
            ("text", Arg::No, Some('a')),
            ("before-context", Arg::Required, Some('B')),
            ("byte-offset", Arg::No, Some('b')),
            ("context", Arg::Optional, Some('C')),
            ("count", Arg::No, Some('c')),
            ("devices", Arg::Required, Some('D')),
            ("directories", Arg::Required, Some('d')),
            ("extended-regexp", Arg::No, Some('E')),
            ("regexp", Arg::Required, Some('e')),
            ("fixed-strings", Arg::No, Some('F')),
            ("file", Arg::Required, Some('f')),
            ("basic-regexp", Arg::No, Some('G')),
            ("no-filename", Arg::No, Some('h')),
            ("with-filename", Arg::No, Some('H')),
            ("ignore-case", Arg::No, Some('i')),
            ("bz2decompress", Arg::No, Some('J')),
            ("files-with-matches", Arg::No, Some('l')),
            ("files-without-match", Arg::No, Some('L')),
            ("max-count", Arg::Required, Some('m')),
            ("lzma", Arg::No, Some('M')),
            ("line-number", Arg::No, Some('n')),
            ("only-matching", Arg::No, Some('o')),
            ("quiet", Arg::No, Some('q')),
            ("silent", Arg::No, Some('q')),
            ("recursive", Arg::No, Some('r')),
            ("no-messages", Arg::No, Some('s')),
            ("binary", Arg::No, Some('U')),
            ("unix-byte-offsets", Arg::No, Some('u')),
            ("invert-match", Arg::No, Some('v')),
            ("version", Arg::No, Some('V')),
            ("word-regexp", Arg::No, Some('w')),
            ("line-regexp", Arg::No, Some('x')),
            ("xz", Arg::No, Some('X')),
            ("null-data", Arg::No, Some('z')),
            ("decompress", Arg::No, Some('Z')),
        ],
        obsolete: false,
    },
];

/// Apple Libc (apple-oss-distributions/Libc, Libc-1725.40.4): what
/// `getopt` (`stdlib/FreeBSD/getopt.c`, argv[0] as the name) and
/// `getopt_long` (`getopt_long.c`, built GNU_COMPATIBLE, `getprogname()`
/// as the name) print for an option they do not know.
const GETOPT_ILLEGAL: &str = "%s: illegal option -- %c";
const GETOPT_LONG_UNRECOGNIZED: &str = "%s: unrecognized option `%s%s'";
/// grep.c's `errstr[8]`, printed by `-V`/`--version`.
const GREP_VERSION: &str = "%s (BSD grep, GNU compatible) %s";

fn arg_of(takes: Takes) -> Arg {
    match takes {
        Takes::Nothing => Arg::No,
        Takes::Value(_) => Arg::Required,
        Takes::Optional(_) => Arg::Optional,
    }
}

/// The short options an option string declares, with their arity.
fn shorts(optstring: &str) -> Vec<(char, Arg)> {
    let letters: Vec<char> = optstring.trim_start_matches('+').chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < letters.len() {
        let colons = letters[at + 1..].iter().take(2).take_while(|c| **c == ':').count();
        out.push((
            letters[at],
            match colons {
                0 => Arg::No,
                1 => Arg::Required,
                _ => Arg::Optional,
            },
        ));
        at += 1 + colons;
    }
    out.sort_unstable();
    out
}

fn grammar_shorts(program: &Program) -> Vec<(char, Arg)> {
    let mut out: Vec<(char, Arg)> = program
        .options
        .iter()
        .filter_map(|o| o.short.map(|s| (s, arg_of(o.takes))))
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn each_macos_grammar_holds_exactly_the_options_of_apples_source() {
    for source in SOURCES {
        let label = format!("{} ({} {} {})", source.name, source.repo, source.tag, source.file);
        let bsd = find(source.name).unwrap_or_else(|| panic!("{label}: no grammar"));
        let program = &bsd.program;
        assert_eq!(
            grammar_shorts(program),
            shorts(source.optstring),
            "{label}: short options"
        );
        let mut long: Vec<(&str, Arg)> = source.long.iter().map(|(n, a, _)| (*n, *a)).collect();
        long.sort_unstable();
        let mut grammar_long: Vec<(&str, Arg)> = program
            .options
            .iter()
            .filter(|o| !o.long.is_empty())
            .map(|o| (o.long, arg_of(o.takes)))
            .collect();
        grammar_long.sort_unstable();
        assert_eq!(grammar_long, long, "{label}: long options");
        // An entry naming both spellings is one option in the source too.
        for opt in program.options.iter().filter(|o| !o.long.is_empty()) {
            if let Some(short) = opt.short {
                let val = source.long.iter().find(|(n, ..)| *n == opt.long).and_then(|(.., v)| *v);
                assert_eq!(val, Some(short), "{label}: --{} is not -{short}", opt.long);
            }
        }
        let parser = match (source.call, source.optstring.starts_with('+')) {
            (Call::Getopt, _) => Parser::Getopt,
            (Call::GetoptLong, true) => Parser::InOrder,
            (Call::GetoptLong, false) => Parser::Permuting,
        };
        assert_eq!(bsd.parser, parser, "{label}: parser");
        assert_eq!(
            program.syntax.prefixes,
            source.call == Call::GetoptLong,
            "{label}: long options"
        );
        assert!(
            program.syntax.bundles && program.syntax.joined,
            "{label}: getopt bundles and joins"
        );
        assert_eq!(program.syntax.counts, source.obsolete, "{label}: -NUM");
        let probe = if source.long.iter().any(|(n, ..)| *n == "version") {
            Probe::Prints(GREP_VERSION.replacen("%s", source.name, 1).replace(" %s", " ").leak())
        } else {
            Probe::Refuses(
                match source.call {
                    Call::Getopt => GETOPT_ILLEGAL.replacen("%s", source.name, 1).replace("%c", "-"),
                    Call::GetoptLong => GETOPT_LONG_UNRECOGNIZED
                        .replacen("%s", source.name, 1)
                        .replacen("%s", "--", 1)
                        .replacen("%s", "version", 1),
                }
                .leak(),
            )
        };
        assert_eq!(bsd.probe, probe, "{label}: the answer to --version");
    }
    let pinned: Vec<&str> = SOURCES.iter().map(|s| s.name).collect();
    for bsd in super::programs() {
        assert!(pinned.contains(&bsd.program.name), "{} has no source", bsd.program.name);
    }
}
