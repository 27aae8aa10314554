//! Shell commands read the way bash reads them, with a real bash grammar
//! (`tree-sitter-bash`, the parser Codex decides its own safe commands
//! with), for the policy's `command` rules and the console's "approve
//! always" command rules alike.
//!
//! Bash's input stage comes first (line continuations joined, here-document
//! bodies ended where bash ends them: `input.rs`); where the grammar and
//! bash disagree, bash wins (`ui/tests/bash_differential.rs` runs the real
//! bash against this reader).
//!
//! A command is read twice, for the two ways a rule can use it:
//! - **to allow** ([`Script::segments`]): only text that parses whole into
//!   simple commands of plain words joined by `&&`, `||`, `;`, `|`, line
//!   breaks and `if … then … else … fi` has segments; anything else a shell
//!   would do besides running those words (an expansion, a substitution, a
//!   redirection to a file, a subshell, a leading assignment, backgrounding,
//!   a comment, text the grammar skipped …) leaves the script [`Opaque`],
//!   and no allow can cover it.
//! - **to deny or ask** ([`Script::found`]): every command found anywhere in
//!   the text — each segment, inside substitutions, inside `sh -c STRING`,
//!   behind wrappers such as `sudo` or `xargs` (their own options read as
//!   they read them), after `find -exec` — with its program named by its
//!   basename (`/bin/rm` is `rm`); text nested too deeply to read sets
//!   [`Script::beyond_depth`].

pub mod catalogue;
mod command;
mod dirs;
mod input;
mod matching;
mod opaque;
mod options;
mod parse;
mod pattern;
mod plain;
mod read;
mod rough;
mod sets;
mod unwrap;
mod word;
mod wrappers;
mod zsh;

use std::ops::Range;
use std::rc::Rc;

pub use dirs::{Place, places};
pub use matching::{CommandMatch, Polarity};
pub use pattern::{Pattern, PatternError};
pub use read::{BUILT_IN_POINTERS, command_at, command_of, is_shell_tool, shared_command};
pub use sets::{CommandSet, names_secret_at};

/// One word of a plain command, after quote removal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The word as the program receives it (`\rm`, `"rm"` and `r''m` are `rm`).
    pub value: String,
    /// Holds an unquoted `*`, `?` or `[` (or, for zsh with
    /// `EXTENDED_GLOB`, `^` or `#`: [`Zsh::Extended`]): the shell may
    /// expand it into other words (file names), so only a pattern's
    /// trailing `*` covers it.
    pub glob: bool,
    /// The word as a file-name pattern, `Some` exactly when [`Word::glob`]:
    /// unquoted `*`, `?`, `[`…`]` are metacharacters, and every quoted or
    /// backslash-escaped `*`, `?`, `[`, `]` or `\` is escaped with a
    /// backslash (`'*'.r?` is `\*.r?`). Expanding it in the directory the
    /// command runs in gives the words bash passes (`nullglob` off: no
    /// match leaves [`Word::value`]).
    pub pattern: Option<String>,
    /// How zsh reads the word where it reads it otherwise than bash.
    pub zsh: Zsh,
}

impl Word {
    /// A word given as it is (an argv element: no shell reads it).
    pub fn literal(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            glob: false,
            pattern: None,
            zsh: Zsh::Same,
        }
    }
}

/// How zsh reads a word, where it reads it otherwise than bash. The agents'
/// hooks do not say which shell runs a command (Claude Code runs its Bash
/// tool in the user's shell when that is zsh, Codex runs `zsh -lc` for a
/// zsh user), so a command text is read as both would read it
/// ([`Script::parse`]); see `zsh.rs`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Zsh {
    /// As bash reads it (a file-name pattern is matched with zsh's own
    /// rules: `**/` always recursive, `.` and `..` never matched).
    #[default]
    Same,
    /// Holds an unquoted `^` or `#`, or a `~` after a pattern character:
    /// under `EXTENDED_GLOB` (off by default; a user's `.zshenv` may set
    /// it) a file-name pattern, spelled here with every quoted special
    /// character escaped by a backslash (`'^'x^y` is `\^x^y`).
    Extended(String),
    /// Ends in a reflog's `@{N}` of one digit: with `BRACE_CCL` (off by
    /// default; a user's `.zshenv` may set it) zsh passes this word
    /// instead, the braces dropped (`HEAD@{1}` is `HEAD@1`). The catalogue
    /// judges that reading too, and deny and ask rules see it.
    Braces(String),
    /// Other unquoted braces: with `BRACE_CCL` zsh passes these words
    /// (`x{ab}` is `xa xb`, `--forc{e}` is `--force`). No allow covers it;
    /// deny and ask rules see them. None: more than the reader follows, and
    /// the text matches every deny and ask ([`Script::beyond_depth`]).
    BraceClass(Vec<String>),
    /// zsh makes something of it no allow can judge (`=ls` is the path
    /// of `ls`): why.
    Unread(&'static str),
}

/// One simple command of a plain script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The program and its arguments.
    pub words: Vec<Word>,
    /// Where the segment stands in the text (empty for an argv command).
    pub span: Range<usize>,
    /// Its standard input is literal data written in the text: a
    /// here-document with a quoted delimiter or without expansions, or a
    /// here-string without expansions (`cat <<'EOF'`, `grep x <<< 'a b'`).
    /// The data is not in [`Segment::words`]; a rule that allows the
    /// segment allows the program reading it.
    pub here: bool,
    /// The files its standard input is redirected from (`wc -l < in.txt`,
    /// `<in.txt sort`): plain words, no pattern or expansion; bash opens
    /// each for reading.
    pub inputs: Vec<Word>,
    /// How it is joined to the segment before it in the text.
    pub joint: Joint,
}

/// How a segment is joined to the one before it: what decides whether it
/// runs, and so which directory an earlier `cd` left it in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Joint {
    /// The first, or after `;`, a line break or an `if`'s keywords (or
    /// after `&&`/`||` following a compound whose own result is not one
    /// segment's): it runs whatever came before did.
    #[default]
    Seq,
    /// After `&&`: it runs when the and-or list before it succeeded.
    And,
    /// After `||`: it runs when the and-or list before it failed.
    Or,
    /// After `|`: the same pipeline, each part in a subshell of its own.
    Pipe,
}

impl Segment {
    /// A segment of `words` with nothing else: no here-document, no input
    /// redirection, first in its text.
    pub fn of(words: Vec<Word>, span: Range<usize>) -> Self {
        Self {
            words,
            span,
            here: false,
            inputs: Vec::new(),
            joint: Joint::Seq,
        }
    }

    /// The words' values.
    pub fn values(&self) -> Vec<String> {
        self.words.iter().map(|w| w.value.clone()).collect()
    }

    /// The words as zsh with `BRACE_CCL` passes them, where that differs
    /// from [`Segment::values`] (`HEAD@{1}` is `HEAD@1`: [`Zsh::Braces`]).
    pub fn brace_ccl_values(&self) -> Option<Vec<String>> {
        let braced = |w: &Word| matches!(w.zsh, Zsh::Braces(_) | Zsh::BraceClass(_));
        self.words.iter().any(braced).then(|| {
            self.words
                .iter()
                .flat_map(|w| match &w.zsh {
                    Zsh::Braces(word) => vec![word.clone()],
                    Zsh::BraceClass(words) => words.clone(),
                    _ => vec![w.value.clone()],
                })
                .collect()
        })
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
    /// Some text was not read because it is nested deeper than the reader
    /// follows (`eval` in `eval` ten times, `sh -c` in `sh -c` …): commands
    /// may run that [`Script::found`] does not hold, so a rule must treat
    /// the script as matching every deny and ask.
    pub beyond_depth: bool,
    /// The files a redirection anywhere in the text opens for reading (`<
    /// f`, `3< f`, `<> f`), as written: what a command reads besides its
    /// words, which [`Script::found`] does not show.
    pub reads: Vec<String>,
}

impl Script {
    /// Reads a command line as bash or zsh would run it (which one runs
    /// an agent's command is not known: see [`Zsh`]). A policy asks for
    /// the same call's command once per rule: the last few reads are kept.
    pub fn parse(text: &str) -> Self {
        Rc::unwrap_or_clone(zsh::also(text, parse::cached(text)))
    }

    /// A command given as an argv array: one plain segment (no shell reads
    /// its words), unless it is `bash -lc SCRIPT` and the like, which is
    /// SCRIPT as that shell reads it (sh, bash, dash: bash's reading; zsh:
    /// bash's and zsh's; fish, ksh, csh …: opaque).
    pub fn argv(argv: &[String]) -> Self {
        if let Some(script) = unwrap::shell_script(argv) {
            return script;
        }
        let mut found = unwrap::Found::default();
        unwrap::found(argv, 0, &mut found);
        Self {
            segments: Ok(vec![Segment::of(argv.iter().map(Word::literal).collect(), 0..0)]),
            found: found.commands,
            beyond_depth: found.beyond_depth,
            reads: Vec::new(),
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
            beyond_depth: false,
            reads: Vec::new(),
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
