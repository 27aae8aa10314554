//! The shape of a grammar: a program, its options and its operands, and
//! the short constructors the family files write their tables with (how a
//! program reads its options is `syntax.rs`, re-exported here).

pub use super::syntax::Syntax;

/// A catalogued program and the grammar of its arguments.
#[derive(Debug)]
pub struct Program {
    /// The name a command runs it by (`sort`; `status` for `git status`).
    pub name: &'static str,
    /// What it does, in a few words (docs/policy.md).
    pub about: &'static str,
    /// How it reads its options.
    pub syntax: Syntax,
    /// Every option it accepts that the grammar knows, safe or not: an
    /// abbreviation is resolved against all of them, as the program does.
    pub options: &'static [Opt],
    /// Its operands.
    pub operands: Operands,
    /// What it does with an input path.
    pub reads: Reads,
    /// Whether it descends into directories by itself (`rg`, `find`).
    pub recurses: bool,
    /// Whether it follows links in the directories it reads by itself
    /// (`diff DIR1 DIR2`).
    pub follows: bool,
    /// Which files a recursive read of contents reaches.
    pub walk: Walk,
    /// One of these options must be given (`command -v`).
    pub requires: &'static [&'static str],
    /// Its subcommands (`git status`), chosen by the first operand.
    pub subcommands: &'static [Program],
    /// A judge of its own, run once the grammar has accounted for every
    /// word: what the words reach beyond their input paths (git's history
    /// and index, in `git/reach.rs`).
    pub judge: Option<Judge>,
    /// The environment variable naming a file of arguments the program
    /// reads before its own (ripgrep's `RIPGREP_CONFIG_PATH`). The option
    /// that turns it off is not looked for: where a word is an option and
    /// where a value is the grammar's to say, so the file is always read.
    pub config: Option<&'static str>,
}

/// A program's own judge: its arguments (program name excluded) and the
/// working directory; `Err` says why the command is not covered.
pub type Judge = fn(&[String], Option<&std::path::Path>) -> Result<(), String>;

/// One option.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    /// Its short letter, if any.
    pub short: Option<char>,
    /// Its long name without dashes (`line-number`); for [`Syntax::WORDS`]
    /// the whole word (`-name`, `(`, `!`).
    pub long: &'static str,
    /// What it takes.
    pub takes: Takes,
    /// Whether an allow may cover it, and what it changes.
    pub role: Role,
}

/// What an option takes after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// Nothing.
    Nothing,
    /// A value: `--opt=v`, `--opt v`, `-ov`, `-o v`.
    Value(Kind),
    /// A value only when attached: `--color=always`, `-u1`.
    Optional(Kind),
}

/// What an operand or an option's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Any text (a format, a name, a count).
    Text,
    /// A path the program reads: inside the working directory, no secret.
    Path,
    /// A path whose metadata only the program reads, never its contents
    /// (`ls -l`, `stat`, `find -newer`): inside the working directory,
    /// links resolved; a secret's name is fine.
    Meta,
    /// A pattern or expression the program matches with.
    Pattern,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Text that starts with this prefix (`date +FORMAT`).
    Prefixed(&'static str),
    /// A filter on what a walk that skips hidden and ignored files reads
    /// (ripgrep's `-g`, `-t`): a glob or type that names a file reads it
    /// even when it is hidden or ignored, so the walk applies it too.
    Filter(Filter),
    /// Any text but these words, with why (`test -v 'a[$(cmd)]'` runs
    /// `cmd`: bash evaluates the subscript).
    TextBut(&'static [&'static str], &'static str),
    /// A program's own language, read by its family file's reader (a sed
    /// script): covered only where the reader says every part is safe.
    Checked(Check),
}

/// A reader for one kind of value, named for messages and docs.
#[derive(Clone, Copy, Debug)]
pub struct Check {
    /// What the value is (`SCRIPT`).
    pub name: &'static str,
    /// Why the value is not covered, or `Ok`.
    pub check: fn(&str) -> Result<(), String>,
}

impl PartialEq for Check {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Check {}

/// How an option's value filters a walk that skips hidden and ignored
/// files ([`Walk::Ignoring`]), as ripgrep reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// An override glob (`-g`): `!GLOB` skips, `GLOB` reads only what it
    /// matches, hidden and ignored files included.
    Glob,
    /// The same, matched case-insensitively (`--iglob`).
    IGlob,
    /// Reads only files of this type (`-t`), hidden ones included.
    Type,
    /// Skips files of this type (`-T`).
    TypeNot,
    /// Defines a type (`--type-add NAME:GLOB`).
    TypeAdd,
    /// Clears a type's globs (`--type-clear`).
    TypeClear,
    /// GNU grep's `--include`: reads only files it matches (see
    /// `grepwalk.rs`; grep's walk of everything, [`Walk::Everything`]).
    GrepInclude,
    /// GNU grep's `--exclude`: skips files it matches.
    GrepExclude,
    /// GNU grep's `--exclude-dir`: skips directories it matches.
    GrepExcludeDir,
}

/// Whether an allow may cover an option, and what it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Only changes what is printed.
    Safe,
    /// Safe, with an effect the judge weighs.
    Effect(&'static [Effect]),
    /// The option writes, runs a program or reads files it is not given
    /// as paths: never covered. The reason is shown.
    Refused(&'static str),
}

/// What an option changes that the judge weighs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Descends into directories.
    Recurses,
    /// Follows symbolic links while descending.
    FollowsLinks,
    /// Reads hidden and ignored files too (`rg -u`, `--no-ignore`).
    SeesAll,
    /// Reads hidden files, still skipping what ignore files name (`rg
    /// --hidden`, `-.`).
    SeesHidden,
    /// Gives the pattern, so every operand is a path (`grep -e PAT`).
    GivesPattern,
    /// Makes every operand a pattern (`git branch --list PATTERN`).
    OperandsArePatterns,
    /// Filters a walk by rules the catalogue does not read (`grep
    /// --exclude-from`): the walk is judged unfiltered.
    FiltersUnread,
}

/// A program's operands: the leading ones by kind, then any number of
/// `rest` (none when `rest` is `None`).
#[derive(Clone, Copy, Debug)]
pub struct Operands {
    pub leading: &'static [Kind],
    pub rest: Option<Kind>,
}

impl Operands {
    pub const NONE: Self = Self {
        leading: &[],
        rest: None,
    };
    pub const PATHS: Self = Self {
        leading: &[],
        rest: Some(Kind::Path),
    };
    /// Paths whose metadata only is read (`ls`, `stat`).
    pub const METAS: Self = Self {
        leading: &[],
        rest: Some(Kind::Meta),
    };
    pub const TEXT: Self = Self {
        leading: &[],
        rest: Some(Kind::Text),
    };
    /// A pattern, then paths (`grep`, `rg`, `fd`).
    pub const PATTERN_THEN_PATHS: Self = Self {
        leading: &[Kind::Pattern],
        rest: Some(Kind::Path),
    };
}

/// Which files a recursive read of contents reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// Every file, hidden ones included (`grep -r`).
    Everything,
    /// Every file but the repository's own `.git` (`git grep`); an operand
    /// that names nothing on disk is a revision or a pathspec, whose reach
    /// is not known, so it is not covered.
    OutsideGit,
    /// What ripgrep reads by default: no hidden files, nothing ignored by
    /// `.gitignore`, `.ignore` or `.rgignore` (read with ripgrep's own
    /// walker, the `ignore` crate), unless an option sees all.
    Ignoring,
}

/// What a program does with an input path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Prints what files hold.
    Contents,
    /// Prints names and metadata only.
    Names,
}

impl Program {
    /// A program with no subcommands and nothing required.
    pub const fn new(
        name: &'static str,
        about: &'static str,
        syntax: Syntax,
        options: &'static [Opt],
        operands: Operands,
        reads: Reads,
    ) -> Self {
        Self {
            name,
            about,
            syntax,
            options,
            operands,
            reads,
            recurses: false,
            follows: false,
            walk: Walk::Everything,
            requires: &[],
            subcommands: &[],
            judge: None,
            config: None,
        }
    }

    /// The same program, reading the arguments of the file `var` names
    /// before its own.
    pub const fn configured_by(self, var: &'static str) -> Self {
        Self {
            config: Some(var),
            ..self
        }
    }

    /// The same program, descending into directories by itself.
    pub const fn recursive(self) -> Self {
        Self { recurses: true, ..self }
    }

    /// The same program, following links in the directories it reads.
    pub const fn following(self) -> Self {
        Self { follows: true, ..self }
    }

    /// The same program, whose recursive reads reach only what `walk` does.
    pub const fn walking(self, walk: Walk) -> Self {
        Self { walk, ..self }
    }

    /// The same program, needing one of these options.
    pub const fn requiring(self, requires: &'static [&'static str]) -> Self {
        Self { requires, ..self }
    }
}

const fn letter(short: &str) -> Option<char> {
    match short.as_bytes() {
        [b] => Some(*b as char),
        _ => None,
    }
}

/// A flag: short letter (`""` for none) and long name (`""` for none).
pub const fn flag(short: &str, long: &'static str) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes: Takes::Nothing,
        role: Role::Safe,
    }
}

/// An option taking a value of `kind`.
pub const fn value(short: &str, long: &'static str, kind: Kind) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes: Takes::Value(kind),
        role: Role::Safe,
    }
}

/// An option taking a value only when attached (`--color[=WHEN]`).
pub const fn optional(short: &str, long: &'static str, kind: Kind) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes: Takes::Optional(kind),
        role: Role::Safe,
    }
}

/// A flag with effects.
pub const fn effect(short: &str, long: &'static str, effects: &'static [Effect]) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes: Takes::Nothing,
        role: Role::Effect(effects),
    }
}

/// An option the program accepts that an allow never covers, taking
/// `takes`, with the reason.
pub const fn refused(short: &str, long: &'static str, takes: Takes, why: &'static str) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes,
        role: Role::Refused(why),
    }
}

/// Shorthands for the tables.
pub const T: Kind = Kind::Text;
pub const P: Kind = Kind::Path;
pub const META: Kind = Kind::Meta;
pub const PAT: Kind = Kind::Pattern;
/// `--help` and `--version`, which every GNU program accepts.
pub const HELP: Opt = flag("", "help");
pub const VERSION: Opt = flag("", "version");
pub const WRITES: &str = "writes a file";
pub const RUNS: &str = "runs another program";
pub const READS_LISTED: &str = "reads files named in another file, which this command does not show";

impl Opt {
    /// The same option, with effects.
    pub const fn with(self, effects: &'static [Effect]) -> Self {
        Self {
            role: Role::Effect(effects),
            ..self
        }
    }

    /// How the option is written, for messages (`-o/--output`).
    pub fn shown(&self, syntax: Syntax) -> String {
        match (self.short, self.long) {
            _ if syntax.words => self.long.to_owned(),
            (Some(s), "") => format!("-{s}"),
            (None, long) => format!("--{long}"),
            (Some(s), long) => format!("-{s}/--{long}"),
        }
    }
}
