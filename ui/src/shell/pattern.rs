//! Command patterns (`git status *`, `cargo test *`, `git log --format=*`):
//! shell words matched against a command's words (`matching.rs` says
//! which commands of a script a rule matches with them).

use std::borrow::Cow;
use std::fmt;

use globset::{GlobBuilder, GlobMatcher};

use super::{Word, catalogue};

/// One word of a pattern: exact, or a glob where it holds `*`.
#[derive(Clone, Debug)]
enum PatternWord {
    Exact(String),
    Glob(GlobMatcher),
}

impl PatternWord {
    /// A pattern word; `program`: the first word, whose `*` never crosses
    /// a `/` (`./scripts/*` is a script in that directory, not any path
    /// below it).
    fn new(word: &str, program: bool) -> Result<Self, String> {
        if !word.contains('*') {
            return Ok(Self::Exact(if program {
                normalised(word).into_owned()
            } else {
                word.to_owned()
            }));
        }
        // Only `*` is special in a pattern word: everything else is escaped.
        let glob: Vec<String> = word.split('*').map(globset::escape).collect();
        GlobBuilder::new(&glob.join("*"))
            .literal_separator(program)
            .backslash_escape(true)
            .build()
            .map(|g| Self::Glob(g.compile_matcher()))
            .map_err(|e| format!("the word {word:?} is not a valid pattern: {e}"))
    }

    fn is_match(&self, value: &str) -> bool {
        match self {
            Self::Exact(exact) => exact == value,
            Self::Glob(glob) => glob.is_match(value),
        }
    }
}

/// A command pattern: shell words, the last of which may be `*` for "any
/// further words (none included)"; `*` inside a word globs that word.
#[derive(Clone, Debug)]
pub struct Pattern {
    text: String,
    words: Vec<PatternWord>,
    rest: bool,
}

/// Why a pattern is not one, for a located error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError(pub String);

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Pattern {
    /// Reads a pattern as written in a policy.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let words = shell_words::split(text)
            .map_err(|_| PatternError(format!("{text:?} is not shell words: a quote is not closed")))?;
        let Some((last, first)) = words.split_last() else {
            return Err(PatternError(
                "an empty pattern: expected shell words such as \"git status *\"".into(),
            ));
        };
        if let Some(star) = first.iter().position(|w| w == "*") {
            return Err(PatternError(format!(
                "word {} of {text:?} is a lone `*`: it stands for further words only as the last word; to glob one word write it inside the word (\"--format=*\")",
                star + 1
            )));
        }
        let rest = last == "*";
        let exact = if rest { first } else { words.as_slice() };
        let words = exact
            .iter()
            .enumerate()
            .map(|(k, w)| PatternWord::new(w, k == 0).map_err(PatternError))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            text: text.to_owned(),
            words,
            rest,
        })
    }

    /// A pattern of exact words (an "approve always" rule), with `*` last
    /// when further words may follow. None if a word holds a `*`, which a
    /// written pattern would read as a glob.
    pub fn exact(words: &[String], rest: bool) -> Option<Self> {
        if words.is_empty() || words.iter().any(|w| w.contains('*')) {
            return None;
        }
        let mut text = super::join(words);
        if rest {
            text.push_str(" *");
        }
        Some(Self {
            text,
            words: words
                .iter()
                .enumerate()
                .map(|(k, w)| PatternWord::Exact(if k == 0 { normalised(w).into_owned() } else { w.clone() }))
                .collect(),
            rest,
        })
    }

    /// The pattern as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether a plain segment's words match. A word the shell would expand
    /// as a file-name pattern is covered only by the trailing `*`.
    pub fn matches_segment(&self, words: &[Word]) -> bool {
        self.fits(words.len())
            && self.words.iter().zip(words).enumerate().all(|(k, (p, w))| {
                !w.glob
                    && if k == 0 {
                        p.is_match(&normalised(&w.value))
                    } else {
                        p.is_match(&w.value)
                    }
            })
    }

    /// Whether a found command's words match.
    pub fn matches_found(&self, words: &[String]) -> bool {
        self.fits(words.len())
            && self.words.iter().zip(words).enumerate().all(|(k, (p, w))| {
                if k == 0 {
                    p.is_match(&normalised(w))
                } else {
                    p.is_match(w)
                }
            })
    }

    /// Whether the words after an unknown program match from one of them
    /// on (`setsid rm -rf x`, `firejail rm -rf x`): a program Tether does
    /// not know may run its arguments, so a deny or ask rule on `rm` must
    /// not be passed by putting one in front. Catalogued programs only read
    /// their words (`echo rm`, `git rm` are not `rm`).
    pub fn matches_behind_unknown(&self, words: &[String]) -> bool {
        words
            .first()
            .is_some_and(|program| catalogue::program(program).is_none())
            && self.matches_behind(words)
    }

    /// [`Pattern::matches_behind_unknown`] once the program is known to be
    /// unknown.
    pub(super) fn matches_behind(&self, words: &[String]) -> bool {
        (1..words.len()).any(|at| self.matches_found(&words[at..]))
    }

    fn fits(&self, len: usize) -> bool {
        if self.rest {
            len >= self.words.len()
        } else {
            len == self.words.len()
        }
    }
}

/// A program word with `.` and `..` taken lexically (`./scripts/../x` is
/// `x`, `a/../../b` is `../b`), so a pattern on a program path cannot be
/// walked out of. A bare name (most programs) is borrowed as it is.
fn normalised(program: &str) -> Cow<'_, str> {
    if !program.contains('/') {
        return Cow::Borrowed(program);
    }
    let absolute = program.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in program.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    Cow::Owned(
        match (absolute, program.starts_with("./") && !joined.starts_with("..")) {
            (true, _) => format!("/{joined}"),
            (false, true) => format!("./{joined}"),
            (false, false) => joined,
        },
    )
}
