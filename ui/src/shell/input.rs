//! Bash's input stage: before it splits a line into words, bash takes out
//! every backslash-newline (a line continuation) except inside single
//! quotes, `$'…'`, a comment, or the body of a here-document whose
//! delimiter is quoted. `ls x\⏎#;touch p` is `ls x#;touch p` to bash: two
//! commands, the `#` part of a word. The grammar reads the joined text,
//! with comments and here-document bodies blanked out (same length, so
//! spans stay put): bash ends a body only at its delimiter line, the
//! grammar at any line starting with it; the bodies are kept as bash reads
//! them ([`HereDoc`]).

mod here;

use std::borrow::Cow;
use std::ops::Range;

/// A text as bash's word splitter sees it, and where each part came from.
pub(super) struct Joined<'a> {
    /// The text with its line continuations taken out.
    pub text: Cow<'a, str>,
    /// Where in `text` a backslash-newline was taken out, ascending.
    removed: Vec<usize>,
    /// A continuation stood where this reader does not model bash's rules
    /// for certain (a `${…}`, a `case` in a substitution …).
    pub uncertain: bool,
    /// Where the first comment stood: comments are blanked out of
    /// [`Joined::text`] (the grammar reads a backslash ending a comment as
    /// a continuation, bash does not), so the allow side needs to know.
    pub comment: Option<Range<usize>>,
    /// The here-documents, in order, with the bodies bash reads. Their
    /// bodies are blanked out of [`Joined::text`] (newlines kept): the
    /// grammar ends a body at a line that merely starts with the
    /// delimiter (`<<'rm'` ends at `rm -rf x` to it), bash only at the
    /// delimiter itself.
    pub heres: Vec<HereDoc>,
    /// The joined text with the bodies left in, when some were blanked.
    pub unblanked: Option<String>,
}

/// A here-document as bash reads it.
pub(super) struct HereDoc {
    /// Where its `<<` stands in [`Joined::text`].
    pub operator: usize,
    /// Its body, up to the delimiter line (continuations joined when the
    /// delimiter is unquoted, as bash joins them).
    pub body: String,
    /// The delimiter is quoted: the body is data, never expanded.
    pub quoted: bool,
}

impl Joined<'_> {
    /// The range of the original text that `range` of [`Joined::text`]
    /// came from.
    pub fn original(&self, range: Range<usize>) -> Range<usize> {
        let before = |at: usize| self.removed.partition_point(|&r| r <= at);
        let start = range.start + 2 * before(range.start);
        let end = match range.end.checked_sub(1) {
            Some(last) if range.end > range.start => last + 2 * before(last) + 1,
            _ => start,
        };
        start..end
    }
}

/// The text bash's word splitter reads.
pub(super) fn join(text: &str) -> Joined<'_> {
    if !text.contains("\\\n") && !text.contains("<<") {
        return Joined {
            text: Cow::Borrowed(text),
            removed: Vec::new(),
            uncertain: false,
            comment: None,
            heres: Vec::new(),
            unblanked: None,
        };
    }
    let mut lexer = Lexer {
        bytes: text.as_bytes(),
        at: 0,
        out: Vec::with_capacity(text.len()),
        removed: Vec::new(),
        uncertain: false,
        pending: Vec::new(),
        comment: None,
        heres: Vec::new(),
        bodies: Vec::new(),
        closed_substitution: None,
    };
    lexer.run();
    let Lexer {
        mut out,
        removed,
        mut uncertain,
        comment,
        heres,
        bodies,
        ..
    } = lexer;
    // `(( x << y ))` and `[[ … ]]` shift and compare: no body follows.
    if !heres.is_empty() && (text.contains("((") || text.contains("[[")) {
        uncertain = true;
    }
    let unblanked = (!bodies.is_empty()).then(|| String::from_utf8_lossy(&out).into_owned());
    for body in bodies {
        // Bytes of any character become spaces: still UTF-8.
        out[body].iter_mut().filter(|b| **b != b'\n').for_each(|b| *b = b' ');
    }
    // Only ASCII bytes are taken out or blanked, so the rest is still UTF-8.
    match String::from_utf8(out) {
        Ok(joined) => Joined {
            text: Cow::Owned(joined),
            removed,
            uncertain,
            comment,
            heres,
            unblanked,
        },
        Err(_) => Joined {
            text: Cow::Borrowed(text),
            removed: Vec::new(),
            uncertain: true,
            comment: None,
            heres: Vec::new(),
            unblanked: None,
        },
    }
}

/// Where the lexer stands: quoting contexts nest.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Top,
    Double,
    /// `$(…)` or `$((…))`, with the open parentheses inside it.
    Substitution(usize),
    Backtick,
    /// `${…}`.
    Brace,
}

/// The context a `$(`, `${` or backtick at the cursor (`c`, then `next`)
/// opens, and how many bytes it takes; a backtick inside backticks closes
/// them instead.
fn opening(c: u8, next: Option<u8>) -> Option<(Context, usize)> {
    match (c, next) {
        (b'`', _) => Some((Context::Backtick, 1)),
        (b'$', Some(b'(')) => Some((Context::Substitution(0), 2)),
        (b'$', Some(b'{')) => Some((Context::Brace, 2)),
        _ => None,
    }
}

/// A here-document whose body starts at the next line.
struct Here {
    operator: usize,
    delimiter: Vec<u8>,
    quoted: bool,
    strip_tabs: bool,
}

struct Lexer<'a> {
    bytes: &'a [u8],
    at: usize,
    out: Vec<u8>,
    removed: Vec<usize>,
    uncertain: bool,
    pending: Vec<Here>,
    comment: Option<Range<usize>>,
    heres: Vec<HereDoc>,
    /// Where the bodies stand in `out`.
    bodies: Vec<Range<usize>>,
    /// Where a `)` closing a substitution ended in `out`.
    closed_substitution: Option<usize>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.at + ahead).copied()
    }

    fn copy(&mut self, n: usize) {
        let end = (self.at + n).min(self.bytes.len());
        self.out.extend_from_slice(&self.bytes[self.at..end]);
        self.at = end;
    }

    /// A backslash at the cursor: a continuation is taken out, any other
    /// escaped character kept with its backslash.
    fn backslash(&mut self) {
        if self.peek(1) == Some(b'\n') {
            self.removed.push(self.out.len());
            self.at += 2;
        } else {
            self.copy(2);
        }
    }

    /// Copies up to and including the byte `end` (or to the end of text),
    /// `escapes` saying whether a backslash escapes the next byte.
    fn copy_until(&mut self, end: u8, escapes: bool) {
        while let Some(c) = self.peek(0) {
            if escapes && c == b'\\' {
                self.copy(2);
                continue;
            }
            self.copy(1);
            if c == end {
                return;
            }
        }
        self.uncertain = true;
    }

    fn at_word_start(&self) -> bool {
        // `$(x)#`: the `)` closing a substitution is inside a word.
        if self.closed_substitution == Some(self.out.len()) {
            return false;
        }
        self.out
            .last()
            .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'))
    }

    fn run(&mut self) {
        let mut stack = vec![Context::Top];
        while let Some(c) = self.peek(0) {
            let context = stack.last().copied().unwrap_or(Context::Top);
            if c == b'\\' {
                self.backslash();
                continue;
            }
            // The same in and out of double quotes.
            if let Some((opened, length)) = opening(c, self.peek(1)) {
                if opened == Context::Backtick && context == Context::Backtick {
                    stack.pop();
                } else {
                    stack.push(opened);
                }
                self.copy(length);
                continue;
            }
            if context == Context::Double {
                if c == b'"' {
                    stack.pop();
                }
                self.copy(1);
                continue;
            }
            if context == Context::Brace && matches!(c, b'\'' | b'"' | b'{' | b'#') {
                // Quoting inside `${…}` depends on the operator and on the
                // quotes around it.
                self.uncertain = true;
            }
            match (c, self.peek(1)) {
                (b'\'', _) => {
                    self.copy(1);
                    self.copy_until(b'\'', false);
                }
                (b'$', Some(b'\'')) => {
                    self.copy(2);
                    self.copy_until(b'\'', true);
                }
                (b'"', _) => {
                    stack.push(Context::Double);
                    self.copy(1);
                }
                (b'}', _) if context == Context::Brace => {
                    stack.pop();
                    self.copy(1);
                }
                (b'(', _) => {
                    if let Some(Context::Substitution(open)) = stack.last_mut() {
                        *open += 1;
                    }
                    self.copy(1);
                }
                (b')', _) => {
                    match stack.last_mut() {
                        Some(Context::Substitution(0)) => {
                            stack.pop();
                            self.closed_substitution = Some(self.out.len() + 1);
                        }
                        Some(Context::Substitution(open)) => *open -= 1,
                        _ => {}
                    }
                    self.copy(1);
                }
                (b'#', _) if self.at_word_start() && context != Context::Brace => {
                    if context != Context::Top {
                        // A comment in a substitution may end it early.
                        self.uncertain = true;
                    }
                    let start = self.out.len();
                    while self.peek(0).is_some_and(|b| b != b'\n') {
                        self.copy(1);
                    }
                    self.out[start..].fill(b' ');
                    self.comment.get_or_insert(start..self.out.len());
                }
                // A here-string, not a here-document.
                (b'<', Some(b'<')) if self.peek(2) == Some(b'<') => self.copy(3),
                (b'<', Some(b'<')) => {
                    self.copy(2);
                    self.here_operator();
                }
                (b'\n', _) => {
                    self.copy(1);
                    if matches!(context, Context::Top | Context::Substitution(_)) {
                        self.here_bodies();
                    }
                }
                _ => {
                    if let Context::Substitution(_) = context
                        && self.at_word_start()
                        && self.bytes[self.at..].starts_with(b"case")
                    {
                        // `case` patterns close parentheses they never opened.
                        self.uncertain = true;
                    }
                    self.copy(1);
                }
            }
        }
        if stack.len() > 1 || !self.pending.is_empty() {
            self.uncertain = true;
        }
    }
}
