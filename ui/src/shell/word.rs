//! One word of a command after quote removal, as bash passes it.

use tree_sitter::Node;

use super::opaque::{opaque, refused};
use super::{Opaque, Word, Zsh};
use zsh_build::{MAX_BRACE_WORDS, ZshBuild, brace_class};

#[path = "word_zsh.rs"]
mod zsh_build;

/// One word after quote removal, made of byte-adjacent nodes (see
/// [`super::command`]), or why it is not plain.
pub(super) fn group(nodes: &[Node<'_>], text: &str) -> Result<Word, Opaque> {
    let mut build = Build::default();
    for node in nodes {
        part(*node, text, &mut build)?;
    }
    if build.tilde_open {
        build.after_tilde(true);
    }
    if build.odd_tilde {
        return Err(Opaque {
            why: "a tilde (~) bash expands other than as the home directory at a word's start, or a quoted one".into(),
            span: span(nodes),
        });
    }
    if brace_expansion(&build.unquoted) {
        let span = span(nodes);
        return Err(Opaque {
            why: refused("brace_expression").into(),
            span,
        });
    }
    let zsh = match build.zsh.unread(&build.value) {
        Some(_) if let Some(word) = build.brace_ccl_word() => Zsh::Braces(word),
        // Past the bound, no words: read as matching every deny and ask.
        Some(_) if build.zsh.brace_only() => Zsh::BraceClass(build.brace_ccl_words().unwrap_or_default()),
        Some(why) => Zsh::Unread(why),
        None if build.zsh.extended(build.glob) => Zsh::Extended(build.zsh.spelling),
        None => Zsh::Same,
    };
    let glob = build.glob || matches!(zsh, Zsh::Extended(_));
    Ok(Word {
        pattern: glob.then_some(build.pattern),
        value: build.value,
        glob,
        zsh,
    })
}

/// Where a word's nodes stand in the text.
pub(super) fn span(nodes: &[Node<'_>]) -> std::ops::Range<usize> {
    match (nodes.first(), nodes.last()) {
        (Some(first), Some(last)) => first.start_byte()..last.end_byte(),
        _ => 0..0,
    }
}

/// A word's value when it is plain, else its text as written.
pub(super) fn group_value(nodes: &[Node<'_>], text: &str) -> String {
    group(nodes, text).map_or_else(|_| text[span(nodes)].to_owned(), |w| w.value)
}

/// A word being read: its value, its glob pattern, its unquoted text.
#[derive(Default)]
struct Build {
    value: String,
    glob: bool,
    pattern: String,
    /// The unquoted characters, a space standing for each quoted part.
    unquoted: String,
    /// The word starts with an unquoted `~` not yet followed by anything.
    tilde_open: bool,
    /// A tilde bash would expand other than as `~` or `~/…` at the start
    /// (`~user`, `~+`, `a=~/x`), or a quoted leading `~` that a path judge
    /// would read as the home directory.
    odd_tilde: bool,
    /// What zsh would make of it besides.
    zsh: ZshBuild,
    /// Where each unquoted `{` and `}` stands in the value.
    braces: Vec<(usize, char)>,
}

impl Build {
    /// With `BRACE_CCL`, the one word zsh passes for a word that ends in
    /// a reflog's `@{N}` of one digit, its braces unquoted and nothing else
    /// read otherwise by zsh: the braces dropped (`HEAD@{1}` is `HEAD@1`,
    /// `stash@{0}` is `stash@0`). Any other braces (`{ab}` is `a b`,
    /// `@{10}` is `@0 @1`, `x{.txt}`) stay unread.
    fn brace_ccl_word(&self) -> Option<String> {
        let zsh = &self.zsh;
        let other = zsh.equals && self.value.len() > 1 || zsh.magic_equals || zsh.rc_quotes;
        if other || self.glob || zsh.extended(self.glob) {
            return None;
        }
        let [(open, '{'), (close, '}')] = self.braces[..] else {
            return None;
        };
        let digit = self
            .value
            .get(open + 1..close)
            .filter(|d| d.len() == 1 && d.bytes().all(|b| b.is_ascii_digit()))?;
        let before = &self.value[..open];
        let alone = self.value.matches(['{', '}']).count() == 2;
        (close + 1 == self.value.len() && before.ends_with('@') && alone).then(|| format!("{before}{digit}"))
    }

    /// With `BRACE_CCL`, every word zsh makes of the word: each group of
    /// unquoted braces one character at a time, in ASCII order (`a-z` a
    /// range, `{}` itself), groups left to right (`x{ab}` is `xa xb`,
    /// `--forc{e}` is `--force`); `None` past [`MAX_BRACE_WORDS`].
    fn brace_ccl_words(&self) -> Option<Vec<String>> {
        let mut words = vec![String::new()];
        let mut from = 0;
        let mut open = None;
        for &(at, c) in &self.braces {
            match (c, open) {
                ('{', _) => open = Some(at),
                ('}', Some(start)) => {
                    open = None;
                    let class = brace_class(self.value.get(start + 1..at)?);
                    if class.is_empty() {
                        continue;
                    }
                    let before = self.value.get(from..start)?;
                    words = words
                        .iter()
                        .flat_map(|w| class.iter().map(move |c| format!("{w}{before}{c}")))
                        .collect();
                    if words.len() > MAX_BRACE_WORDS {
                        return None;
                    }
                    from = at + 1;
                }
                _ => {}
            }
        }
        let rest = self.value.get(from..)?;
        Some(words.into_iter().map(|w| w + rest).collect())
    }

    /// An unquoted character that stands for itself.
    fn plain(&mut self, c: char) {
        if matches!(c, '{' | '}') {
            self.braces.push((self.value.len(), c));
        }
        self.zsh.unquoted(c, self.value.is_empty());
        self.after_tilde(c == '/');
        if c == '~' {
            if self.value.is_empty() {
                self.tilde_open = true;
            } else if self.value.ends_with(['=', ':']) {
                // Bash expands `~` after `=` or `:` in a word that looks
                // like an assignment, even an argument (`a=~/x`).
                self.odd_tilde = true;
            }
        }
        self.unquoted.push(c);
        if c == ']' {
            // Unquoted, `]` closes a bracket expression.
            self.value.push(c);
            self.pattern.push(c);
        } else {
            self.literal(c);
        }
    }

    /// A quoted or backslash-escaped character.
    fn quoted(&mut self, c: char) {
        self.zsh.quoted(c);
        self.after_tilde(false);
        if c == '~' && self.value.is_empty() {
            self.odd_tilde = true;
        }
        self.literal(c);
    }

    /// What follows a leading `~` must be an unquoted `/` (or nothing).
    fn after_tilde(&mut self, unquoted_slash: bool) {
        if self.tilde_open {
            self.tilde_open = false;
            self.odd_tilde |= !unquoted_slash;
        }
    }

    /// A character that stands for itself in the value and the pattern.
    fn literal(&mut self, c: char) {
        self.value.push(c);
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            self.pattern.push('\\');
        }
        self.pattern.push(c);
    }

    /// An unquoted `*`, `?` or `[`: a pattern character.
    fn meta(&mut self, c: char) {
        self.zsh.unquoted(c, self.value.is_empty());
        self.after_tilde(false);
        self.glob = true;
        self.value.push(c);
        self.pattern.push(c);
    }
}

fn part(node: Node<'_>, text: &str, word: &mut Build) -> Result<(), Opaque> {
    let raw = &text[node.byte_range()];
    match node.kind() {
        "word" | "number" => {
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        // A line continuation: bash removes both.
                        Some('\n') => {}
                        Some(escaped) => word.quoted(escaped),
                        // A backslash ending the text stands for itself.
                        None => word.quoted('\\'),
                    },
                    '$' | '`' | '(' | ')' => return Err(opaque(node, refused("expansion"))),
                    '*' | '?' | '[' => word.meta(c),
                    // The grammar may start a word with the line break
                    // before it (see `command::Parts::line_starts`).
                    '\n' | ' ' | '\t' if word.value.is_empty() => {}
                    '\n' => return Err(opaque(node, "a line break inside a word")),
                    _ => word.plain(c),
                }
            }
            Ok(())
        }
        "raw_string" => {
            let inner = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\''));
            let inner = inner.ok_or_else(|| opaque(node, "an unterminated quote"))?;
            word.zsh.rc_quotes |= word.zsh.raw_end == Some(node.start_byte());
            inner.chars().for_each(|c| word.quoted(c));
            word.zsh.raw_end = Some(node.end_byte());
            word.unquoted.push(' ');
            Ok(())
        }
        "string" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                match (child.is_named(), child.kind()) {
                    (false, "\"") | (true, "string_content") => {}
                    (true, kind) => return Err(opaque(child, refused(kind))),
                    (false, _) => return Err(opaque(child, refused("expansion"))),
                }
            }
            let inner = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"'));
            let inner = inner.ok_or_else(|| opaque(node, "an unterminated quote"))?;
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some('\n') => {}
                        Some(e @ ('"' | '\\' | '$' | '`')) => word.quoted(e),
                        Some(other) => {
                            word.quoted('\\');
                            word.quoted(other);
                        }
                        None => word.quoted('\\'),
                    },
                    '$' | '`' => return Err(opaque(node, refused("expansion"))),
                    _ => word.quoted(c),
                }
            }
            word.unquoted.push(' ');
            Ok(())
        }
        // An operator of a `[ ]` test, which the grammar keeps apart.
        "test_operator" | "=" | "==" | "!=" | "!" | "[" | "]" => {
            raw.chars().for_each(|c| word.plain(c));
            Ok(())
        }
        "concatenation" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if !child.is_named() {
                    return Err(opaque(child, refused("expansion")));
                }
                part(child, text, word)?;
            }
            Ok(())
        }
        kind => Err(opaque(node, refused(kind))),
    }
}

/// Whether unquoted text holds `{a,b}` or `{1..3}`, which bash expands into
/// several words (`{}` alone, as `find -exec` uses it, is literal).
fn brace_expansion(unquoted: &str) -> bool {
    unquoted.match_indices('{').any(|(at, _)| {
        let rest = &unquoted[at + 1..];
        rest.find('}')
            .is_some_and(|end| rest[..end].contains(',') || rest[..end].contains(".."))
    })
}
