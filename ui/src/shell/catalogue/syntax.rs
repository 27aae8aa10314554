//! How a program reads its options: GNU `getopt_long`, git's parsers,
//! `find`'s primaries, or no options at all.

/// How a program reads its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Syntax {
    /// Any unambiguous prefix of a long option is that option (GNU
    /// `getopt_long`, git's parse-options).
    pub prefixes: bool,
    /// Short options bundle (`-la`, `-uo FILE`).
    pub bundles: bool,
    /// A short option's value may be joined to it (`-n5`).
    pub joined: bool,
    /// `-NUM` is a count (`head -20`, `git log -5`).
    pub counts: bool,
    /// Options are whole words with one dash (`find -name`), never bundled
    /// or abbreviated; operands (starting points) come before them.
    pub words: bool,
    /// No options at all: every word is an operand (`echo`, `test`).
    pub none: bool,
}

impl Syntax {
    /// GNU `getopt_long`: prefixes, bundles, options anywhere until `--`.
    pub const GNU: Self = Self {
        prefixes: true,
        bundles: true,
        joined: true,
        counts: false,
        words: false,
        none: false,
    };
    /// GNU with `-NUM` counts (`head`, `tail`, `grep -3`).
    pub const GNU_COUNTS: Self = Self {
        counts: true,
        ..Self::GNU
    };
    /// Long options written whole, short ones bundled (ripgrep, fd, tree).
    pub const EXACT: Self = Self {
        prefixes: false,
        ..Self::GNU
    };
    /// git's revision and diff options: whole long names, no bundles, `-5`.
    pub const GIT_REVISIONS: Self = Self {
        prefixes: false,
        bundles: false,
        joined: true,
        counts: true,
        words: false,
        none: false,
    };
    /// Whole long names, and every short option a word of its own with its
    /// value in the next word (tree).
    pub const SEPARATE: Self = Self {
        bundles: false,
        joined: false,
        ..Self::EXACT
    };
    /// `find`'s primaries.
    pub const WORDS: Self = Self {
        prefixes: false,
        bundles: false,
        joined: false,
        counts: false,
        words: true,
        none: false,
    };
    /// No options: `echo`, `test`, `true`.
    pub const NONE: Self = Self {
        prefixes: false,
        bundles: false,
        joined: false,
        counts: false,
        words: false,
        none: true,
    };
}
