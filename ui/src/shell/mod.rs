//! Shell commands read the way bash reads them, with a real bash grammar
//! (`tree-sitter-bash`, the parser Codex decides its own safe commands
//! with), for the policy's `command` rules and the console's "approve
//! always" command rules alike.
//!
//! A command is read twice, for the two ways a rule can use it:
//! - **to allow** ([`Script::segments`]): only text that parses whole into
//!   simple commands of plain words joined by `&&`, `||`, `;`, `|` and line
//!   breaks has segments; anything else a shell would do besides running
//!   those words (an expansion, a substitution, a redirection to a file, a
//!   subshell, a leading assignment, backgrounding …) leaves the script
//!   [`Opaque`], and no allow can cover it.
//! - **to deny or ask** ([`Script::found`]): every command found anywhere in
//!   the text — each segment, inside substitutions, inside `sh -c STRING`,
//!   behind wrappers such as `sudo` or `xargs`, after `find -exec` — with its
//!   program named by its basename (`/bin/rm` is `rm`).

mod parse;
mod pattern;
mod read;
mod unwrap;

use std::ops::Range;

pub use pattern::{CommandMatch, Pattern, PatternError, Polarity};
pub use read::{BUILT_IN_POINTERS, command_at, command_of, is_shell_tool};

/// One word of a plain command, after quote removal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The word as the program receives it (`\rm`, `"rm"` and `r''m` are `rm`).
    pub value: String,
    /// Holds an unquoted `*`, `?` or `[`: the shell may expand it into other
    /// words (file names), so only a pattern's trailing `*` covers it.
    pub glob: bool,
}

impl Word {
    /// A word given as it is (an argv element: no shell reads it).
    pub fn literal(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            glob: false,
        }
    }
}

/// One simple command of a plain script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The program and its arguments.
    pub words: Vec<Word>,
    /// Where the segment stands in the text (empty for an argv command).
    pub span: Range<usize>,
}

impl Segment {
    /// The words' values.
    pub fn values(&self) -> Vec<String> {
        self.words.iter().map(|w| w.value.clone()).collect()
    }
}

/// Why a script cannot be allowed by any rule, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opaque {
    /// What the shell would do besides running plain words, in a few words
    /// ("a command substitution", "a redirection to a file").
    pub why: String,
    /// The part of the text that does it.
    pub span: Range<usize>,
}

/// A shell command as read for rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    /// The simple commands, in order, when the whole text is plain.
    pub segments: Result<Vec<Segment>, Opaque>,
    /// Every command found anywhere in the text, wrappers unwrapped and
    /// programs named by basename; words that are not plain keep their text.
    pub found: Vec<Vec<String>>,
}

impl Script {
    /// Reads a command line as bash would. A policy asks for the same
    /// call's command once per rule: the last few reads are kept.
    pub fn parse(text: &str) -> Self {
        parse::cached(text)
    }

    /// A command given as an argv array: one plain segment (no shell reads
    /// its words), unless it is `bash -lc SCRIPT` and the like, which is
    /// SCRIPT.
    pub fn argv(argv: &[String]) -> Self {
        if let Some(script) = unwrap::shell_script(argv) {
            return Self::parse(script);
        }
        let mut found = Vec::new();
        unwrap::found(argv, 0, &mut found);
        Self {
            segments: Ok(vec![Segment {
                words: argv.iter().map(Word::literal).collect(),
                span: 0..0,
            }]),
            found,
        }
    }

    /// A script no allow covers and no deny can read (e.g. two different
    /// commands in one call).
    pub fn opaque(why: impl Into<String>, found: Vec<Vec<String>>) -> Self {
        Self {
            segments: Err(Opaque {
                why: why.into(),
                span: 0..0,
            }),
            found,
        }
    }

    /// The one plain command this is, if it is exactly one.
    pub fn single(&self) -> Option<&Segment> {
        match &self.segments {
            Ok(segments) if segments.len() == 1 => segments.first(),
            _ => None,
        }
    }
}

/// The basename of a program (`/bin/rm` is `rm`).
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Words joined back for display, quoted where a shell would need it.
pub fn join(words: &[String]) -> String {
    shell_words::join(words)
}

#[cfg(test)]
mod tests;
