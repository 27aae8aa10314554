//! Programs and bash builtins that print facts about the system, the
//! user or other programs, and the ones that only print their operands or
//! test a condition.

use super::table::{
    Check, HELP, Kind, META, Operands, P, Program, READS_LISTED, RUNS, Reads, Syntax, T, Takes, VERSION, WRITES, flag,
    optional, refused, value,
};

const NAMES: Operands = Operands::TEXT;

/// `test`'s words: `-v NAME` (and `-R NAME`) look a variable up, and bash
/// evaluates an array subscript in NAME, command substitutions included:
/// `test -v 'a[$(touch p)]'` runs `touch`.
const CONDITION: Operands = Operands {
    leading: &[],
    rest: Some(Kind::TextBut(
        &["-v", "-R"],
        "looks a variable up, and bash runs the command substitutions in its array subscript",
    )),
};

/// `man`'s operands: a section or a page name. man-db reads a name with a
/// slash as a file and formats it with groff, whose `.so` request includes
/// any other file (`.so /proc/self/environ` prints the agent's
/// environment), so a page of the project is no safer than one outside it.
const PAGES: Operands = Operands {
    leading: &[],
    rest: Some(Kind::Checked(Check {
        name: "PAGE",
        check: page_name,
    })),
};

/// `hash`'s operands: names to look up. zsh's `hash NAME=PATH` makes a
/// later `NAME` run PATH (`hash cat=/usr/bin/python3 && cat x.py` runs
/// python), where bash only fails to find the name.
const LOOKED_UP: Operands = Operands {
    leading: &[],
    rest: Some(Kind::Checked(Check {
        name: "NAME",
        check: looked_up,
    })),
};

fn looked_up(word: &str) -> Result<(), String> {
    if word.contains('=') {
        Err(format!("zsh's `hash {word}` makes a name run another program"))
    } else {
        Ok(())
    }
}

fn page_name(word: &str) -> Result<(), String> {
    if word.contains('/') {
        Err(format!(
            "man reads `{word}` as a file and formats the file with groff, which includes any file it names (`.so`)"
        ))
    } else {
        Ok(())
    }
}

pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        "pwd",
        "prints the working directory",
        Syntax::GNU,
        &[flag("L", ""), flag("P", "")],
        Operands::NONE,
        Reads::Names,
    ),
    // bash's builtin echo reads no options besides -n, -e and -E, which
    // only change how it prints: every word is text.
    Program::new("echo", "prints its words", Syntax::NONE, &[], NAMES, Reads::Names),
    Program::new(
        "printf",
        "prints its words through a format",
        Syntax::GNU,
        &[refused(
            "v",
            "",
            Takes::Value(Kind::Text),
            "assigns a shell variable (PATH …) that later commands use",
        )],
        NAMES,
        Reads::Names,
    ),
    Program::new("true", "does nothing", Syntax::NONE, &[], NAMES, Reads::Names),
    Program::new(
        "false",
        "does nothing, unsuccessfully",
        Syntax::NONE,
        &[],
        NAMES,
        Reads::Names,
    ),
    // `test` and `[` look at files' existence and metadata; they open none.
    Program::new("test", "tests a condition", Syntax::NONE, &[], CONDITION, Reads::Names),
    Program::new("[", "tests a condition", Syntax::NONE, &[], CONDITION, Reads::Names),
    Program::new(
        "which",
        "finds a program on PATH",
        Syntax::GNU,
        &[flag("a", ""), flag("s", "")],
        NAMES,
        Reads::Names,
    ),
    Program::new(
        "type",
        "tells how bash would run a name",
        Syntax::GNU,
        &[
            flag("a", ""),
            flag("f", ""),
            flag("P", ""),
            flag("p", ""),
            flag("t", ""),
        ],
        NAMES,
        Reads::Names,
    ),
    Program::new(
        "command",
        "tells how bash would run a name (only with -v or -V; without them it runs the command)",
        Syntax::GNU,
        &[flag("v", ""), flag("V", ""), flag("p", "")],
        NAMES,
        Reads::Names,
    )
    .requiring(&["v", "V"]),
    Program::new(
        "hash",
        "lists the programs bash remembers",
        Syntax::GNU,
        &[
            flag("l", ""),
            flag("t", ""),
            refused("p", "", Takes::Value(Kind::Text), "makes a name run another program"),
            refused("d", "", Takes::Nothing, "changes what bash remembers"),
            refused("r", "", Takes::Nothing, "changes what bash remembers"),
        ],
        LOOKED_UP,
        Reads::Names,
    ),
    Program::new(
        "whereis",
        "finds a program's binary, source and manual",
        Syntax::GNU,
        &[
            flag("b", ""),
            flag("m", ""),
            flag("s", ""),
            flag("u", ""),
            flag("l", ""),
            flag("h", "help"),
            flag("V", "version"),
        ],
        NAMES,
        Reads::Names,
    ),
    Program::new(
        "man",
        "prints a manual page of the system by name (no pager option: an agent's output is not a terminal; a name with a slash is a file groff would format, refused)",
        Syntax::GNU,
        &[
            flag("a", "all"),
            flag("f", "whatis"),
            flag("k", "apropos"),
            flag("w", "where"),
            flag("W", "where-cat"),
            value("S", "sections", Kind::Text),
            value("s", "", Kind::Text),
            value("L", "locale", Kind::Text),
            refused("P", "pager", Takes::Value(Kind::Text), "runs another program"),
            refused("H", "html", Takes::Value(Kind::Text), "runs a browser"),
            refused("X", "gxditview", Takes::Nothing, "runs another program"),
            refused("l", "local-file", Takes::Nothing, "formats a file it names with groff"),
            refused("t", "troff", Takes::Nothing, "runs groff"),
            refused("T", "troff-device", Takes::Nothing, "runs groff"),
            refused("Z", "ditroff", Takes::Nothing, "runs groff"),
            refused(
                "C",
                "config-file",
                Takes::Value(Kind::Text),
                "reads a configuration that can name programs",
            ),
            refused("p", "preprocessor", Takes::Value(Kind::Text), "runs other programs"),
            refused("R", "recode", Takes::Value(Kind::Text), "writes a recoded page"),
            HELP,
            VERSION,
        ],
        PAGES,
        Reads::Names,
    )
    .judged_by_manpath(),
    Program::new(
        "date",
        "prints the date and time (never sets it)",
        Syntax::GNU,
        &[
            value("d", "date", T),
            flag("", "debug"),
            value("f", "file", P),
            optional("I", "iso-8601", T),
            flag("R", "rfc-email"),
            value("", "rfc-3339", T),
            value("r", "reference", META),
            refused("s", "set", Takes::Value(Kind::Text), "sets the system clock"),
            flag("u", "utc"),
            flag("", "universal"),
            HELP,
            VERSION,
        ],
        // An operand that is not `+FORMAT` sets the clock.
        Operands {
            leading: &[Kind::Prefixed("+")],
            rest: None,
        },
        Reads::Contents,
    ),
    Program::new(
        "whoami",
        "prints the user's name",
        Syntax::GNU,
        &[HELP, VERSION],
        Operands::NONE,
        Reads::Names,
    ),
    Program::new(
        "id",
        "prints user and group ids",
        Syntax::GNU,
        &[
            flag("a", ""),
            flag("Z", "context"),
            flag("g", "group"),
            flag("G", "groups"),
            flag("n", "name"),
            flag("r", "real"),
            flag("u", "user"),
            flag("z", "zero"),
            HELP,
            VERSION,
        ],
        NAMES,
        Reads::Names,
    ),
    Program::new(
        "uname",
        "prints system information",
        Syntax::GNU,
        &[
            flag("a", "all"),
            flag("s", "kernel-name"),
            flag("n", "nodename"),
            flag("r", "kernel-release"),
            flag("v", "kernel-version"),
            flag("m", "machine"),
            flag("p", "processor"),
            flag("i", "hardware-platform"),
            flag("o", "operating-system"),
            HELP,
            VERSION,
        ],
        Operands::NONE,
        Reads::Names,
    ),
    Program::new(
        "file",
        "tells a file's type",
        Syntax::GNU,
        &[
            flag("b", "brief"),
            refused("C", "compile", Takes::Nothing, WRITES),
            flag("", "apple"),
            flag("", "extension"),
            flag("", "mime-encoding"),
            flag("", "mime-type"),
            value("e", "exclude", T),
            value("", "exclude-quiet", T),
            refused("f", "files-from", Takes::Value(T), READS_LISTED),
            value("F", "separator", T),
            flag("i", "mime"),
            flag("k", "keep-going"),
            flag("l", "list"),
            flag("L", "dereference"),
            refused("m", "magic-file", Takes::Value(T), "reads a magic file it compiles"),
            flag("h", "no-dereference"),
            flag("n", "no-buffer"),
            flag("N", "no-pad"),
            flag("0", "print0"),
            flag("p", "preserve-date"),
            value("P", "parameter", T),
            flag("r", "raw"),
            flag("s", "special-files"),
            flag("S", "no-sandbox"),
            refused("z", "uncompress", Takes::Nothing, RUNS),
            refused("Z", "uncompress-noreport", Takes::Nothing, RUNS),
            HELP,
            flag("v", "version"),
        ],
        Operands::PATHS,
        Reads::Names,
    ),
];
