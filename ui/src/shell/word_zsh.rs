//! What zsh reads otherwise than bash in a word being read (see
//! `shell/zsh.rs`): `=cmd`, `RC_QUOTES`, `EXTENDED_GLOB`'s operators and
//! `BRACE_CCL`'s braces.

/// What zsh reads otherwise than bash in a word being read.
#[derive(Default)]
pub(super) struct ZshBuild {
    /// The word as an `EXTENDED_GLOB` pattern (quoted specials escaped).
    pub(super) spelling: String,
    /// An unquoted `^` or `#`.
    pub(super) operator: bool,
    /// An unquoted `~` past the word's first character (an exclusion).
    pub(super) tilde: bool,
    /// A quoted `^`, `#` or `~` (literal in zsh's pattern, escaped in the
    /// spelling, which bash's pattern does not escape).
    pub(super) quoted_operator: bool,
    /// The previous character, when it was unquoted.
    pub(super) previous: Option<char>,
    /// An unquoted `=` was seen past the start (`MAGIC_EQUAL_SUBST` then
    /// expands `=cmd` after it, and after a `:`).
    pub(super) assignment: bool,
    /// The word starts with an unquoted `=` (`EQUALS`: `=ls` is the path
    /// of `ls`).
    pub(super) equals: bool,
    /// `=cmd` after an assignment's `=` or a `:` (`--opt==ls`).
    pub(super) magic_equals: bool,
    /// Two single-quoted strings side by side: with `RC_QUOTES`, `''`
    /// inside single quotes is a quote (`'a''b'` is `a'b`).
    pub(super) rc_quotes: bool,
    /// Where the last single-quoted string ended.
    pub(super) raw_end: Option<usize>,
    /// An unquoted `{` not yet closed, and whether anything followed it.
    pub(super) brace: Option<bool>,
    /// `{x}` unquoted: with `BRACE_CCL`, one word per character (`{ab}`
    /// is `a b`, `HEAD@{1}` is `HEAD@1`).
    pub(super) brace_ccl: bool,
}

impl ZshBuild {
    pub(super) fn unquoted(&mut self, c: char, first: bool) {
        match c {
            '=' if first => self.equals = true,
            '=' if self.assignment && matches!(self.previous, Some('=' | ':')) => self.magic_equals = true,
            '=' => self.assignment = true,
            '^' | '#' => self.operator = true,
            '~' if !first => self.tilde = true,
            '{' => self.brace = Some(false),
            '}' if self.brace == Some(true) => self.brace_ccl = true,
            _ => {}
        }
        if c != '{' && self.brace.is_some() {
            self.brace = if c == '}' { None } else { Some(true) };
        }
        self.spelling.push(c);
        self.previous = Some(c);
    }

    pub(super) fn quoted(&mut self, c: char) {
        self.quoted_operator |= matches!(c, '^' | '#' | '~');
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^' | '#' | '~') {
            self.spelling.push('\\');
        }
        self.spelling.push(c);
        self.previous = None;
        if self.brace.is_some() {
            self.brace = Some(true);
        }
    }

    /// Why no allow can judge the word as zsh reads it, if so.
    pub(super) fn unread(&self, value: &str) -> Option<&'static str> {
        if self.equals && value.len() > 1 {
            Some(
                "a word starting with `=`, which zsh replaces with the path of the command it names (`=ls` is /usr/bin/ls)",
            )
        } else if self.magic_equals {
            Some("`=cmd` after an `=` or a `:`, which zsh with MAGIC_EQUAL_SUBST replaces with a command's path")
        } else if self.rc_quotes {
            Some("two single-quoted strings side by side, which zsh with RC_QUOTES reads as one holding a quote")
        } else if self.brace_ccl {
            Some("text in braces, which zsh with BRACE_CCL expands into one word per character")
        } else {
            None
        }
    }

    /// Whether braces are all zsh reads otherwise (no `=cmd`, no
    /// `RC_QUOTES`).
    pub(super) fn brace_only(&self) -> bool {
        self.brace_ccl && !self.equals && !self.magic_equals && !self.rc_quotes
    }

    /// Whether zsh with `EXTENDED_GLOB` reads the word as a pattern where
    /// bash does not, or with other operators.
    pub(super) fn extended(&self, glob: bool) -> bool {
        self.operator || glob && (self.tilde || self.quoted_operator)
    }
}

/// How many words a word's `BRACE_CCL` expansion is followed to.
pub(super) const MAX_BRACE_WORDS: usize = 256;

/// The characters of a `BRACE_CCL` class (`ab`, `a-z`, `z-a` is `-`, `a`
/// and `z`), sorted and each once, as zsh 5.9 expands them.
pub(super) fn brace_class(text: &str) -> Vec<char> {
    let chars: Vec<char> = text.chars().collect();
    let mut class = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        match (chars.get(at + 1), chars.get(at + 2)) {
            (Some('-'), Some(&end)) if chars[at] <= end => {
                class.extend(chars[at]..=end);
                at += 3;
            }
            _ => {
                class.push(chars[at]);
                at += 1;
            }
        }
    }
    class.sort_unstable();
    class.dedup();
    class
}
