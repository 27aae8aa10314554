//! One word of a command after quote removal, as bash passes it.

use tree_sitter::Node;

use super::opaque::{opaque, refused};
use super::{Opaque, Word};

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
    Ok(Word {
        pattern: build.glob.then_some(build.pattern),
        value: build.value,
        glob: build.glob,
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
}

impl Build {
    /// An unquoted character that stands for itself.
    fn plain(&mut self, c: char) {
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
            inner.chars().for_each(|c| word.quoted(c));
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
