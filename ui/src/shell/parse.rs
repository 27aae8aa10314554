//! The tree-sitter walk: plain segments for allows, every command for denies.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

use super::{Opaque, Script, Segment, Word, unwrap};

/// How deep `sh -c 'sh -c …'` and substitutions are followed; deeper text
/// is opaque (and its commands beyond the limit are not found).
pub(super) const MAX_DEPTH: usize = 8;

/// How many recent reads each thread keeps.
const CACHED: usize = 4;

thread_local! {
    // A parser is cheap to reuse and costly to build: one per thread.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    // Every rule with a `command` condition reads the same call's command:
    // the last few texts read, newest last.
    static RECENT: RefCell<Vec<(String, Script)>> = const { RefCell::new(Vec::new()) };
}

/// [`script`] at depth 0, from the recent reads when the text is there.
pub(super) fn cached(text: &str) -> Script {
    let hit = RECENT.with(|recent| recent.borrow().iter().find(|(t, _)| t == text).map(|(_, s)| s.clone()));
    if let Some(script) = hit {
        return script;
    }
    let script = script(text, 0);
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        if recent.len() >= CACHED {
            recent.remove(0);
        }
        recent.push((text.to_owned(), script.clone()));
    });
    script
}

fn tree(text: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(text, None)
    })
}

/// Reads `text` at nesting `depth` (0 for a tool's own command).
pub(super) fn script(text: &str, depth: usize) -> Script {
    let whole = 0..text.len();
    if depth > MAX_DEPTH {
        return Script::opaque("commands nested too deeply to read", Vec::new());
    }
    // Bash keeps a carriage return or another control character inside a
    // word where a terminal hides it, and the grammar may not agree with
    // bash about them: such text is not read as plain.
    let control = text
        .char_indices()
        .find(|(_, c)| c.is_control() && !matches!(c, '\n' | '\t'));
    let Some(tree) = tree(text) else {
        return Script::opaque("the command could not be parsed", Vec::new());
    };
    let root = tree.root_node();
    let mut found = Vec::new();
    find(root, text, depth, &mut found);
    let segments = if let Some((at, c)) = control {
        Err(Opaque {
            why: format!("a control character ({})", c.escape_unicode()),
            span: at..at + c.len_utf8(),
        })
    } else if root.has_error() {
        let at = first_error(root).map_or(whole, |n| n.byte_range());
        Err(Opaque {
            why: "text that does not parse as a shell command".into(),
            span: at,
        })
    } else {
        let mut segments = Vec::new();
        plain(root, text, &mut segments).map(|()| segments)
    };
    Script { segments, found }
}

fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).find_map(first_error)
}

fn opaque(node: Node<'_>, why: impl Into<String>) -> Opaque {
    Opaque {
        why: why.into(),
        span: node.byte_range(),
    }
}

/// What a node the allow side refuses does, in a few words.
fn refused(kind: &str) -> &'static str {
    match kind {
        "command_substitution" => "a command substitution",
        "process_substitution" => "a process substitution",
        "expansion" | "simple_expansion" => "a variable expansion",
        "arithmetic_expansion" => "an arithmetic expansion",
        "ansi_c_string" => "an ANSI-C quoted string ($'…')",
        "translated_string" => "a translated string ($\"…\")",
        "brace_expression" => "a brace expansion",
        "subshell" => "a subshell",
        "compound_statement" => "a { } group",
        "function_definition" => "a function definition",
        "variable_assignment" | "variable_assignments" => "a variable assignment",
        "declaration_command" | "unset_command" => "a variable declaration",
        "heredoc_redirect" => "a here-document",
        "herestring_redirect" => "a here-string",
        "test_command" => "a [[ ]] test",
        "negated_command" => "a negated command (!)",
        "if_statement" | "while_statement" | "for_statement" | "c_style_for_statement" | "case_statement" => {
            "a control structure"
        }
        _ => "shell syntax that is not a plain command",
    }
}

/// The plain segments under `node`, or why there are none.
fn plain(node: Node<'_>, text: &str, out: &mut Vec<Segment>) -> Result<(), Opaque> {
    match node.kind() {
        "program" | "list" | "pipeline" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if child.is_named() {
                    if child.kind() != "comment" {
                        plain(child, text, out)?;
                    }
                    continue;
                }
                match child.kind() {
                    ";" | "&&" | "||" | "|" | "\n" => {}
                    "&" => return Err(opaque(child, "a command run in the background (&)")),
                    "|&" => return Err(opaque(child, "a pipe of standard error (|&)")),
                    other => return Err(opaque(child, format!("the operator {other:?}"))),
                }
            }
            Ok(())
        }
        "command" => {
            out.push(segment(node, text)?);
            Ok(())
        }
        "redirected_statement" => {
            // The grammar hangs a redirection on a whole pipeline or list
            // (`a | b > /dev/null`): each one plain, then the body as usual.
            let mut cursor = node.walk();
            let mut body = None;
            for child in node.children(&mut cursor) {
                match child.kind() {
                    "file_redirect" => plain_redirect(child, text)?,
                    _ if body.is_none() && child.is_named() && !child.kind().ends_with("_redirect") => {
                        body = Some(child)
                    }
                    _ => return Err(opaque(child, refused(child.kind()))),
                }
            }
            match body {
                Some(body) => plain(body, text, out),
                None => Err(opaque(node, "a redirection without a command")),
            }
        }
        kind => Err(opaque(node, refused(kind))),
    }
}

/// A simple command of plain words.
fn segment(node: Node<'_>, text: &str) -> Result<Segment, Opaque> {
    let mut words = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if !child.is_named() {
            return Err(opaque(
                child,
                format!("the shell syntax {:?}", &text[child.byte_range()]),
            ));
        }
        match child.kind() {
            "command_name" => {
                let name = child
                    .named_child(0)
                    .ok_or_else(|| opaque(child, "a command without a name"))?;
                let word = word(name, text)?;
                if word.glob {
                    return Err(opaque(child, "a program named by a file-name pattern"));
                }
                words.push(word);
            }
            "file_redirect" => plain_redirect(child, text)?,
            "comment" => {}
            _ => words.push(word(child, text)?),
        }
    }
    if words.is_empty() {
        return Err(opaque(node, "a command without a name"));
    }
    Ok(Segment {
        words,
        span: node.byte_range(),
    })
}

/// Only a duplication (`2>&1`, `>&2`, `1>&-`) or a redirection to
/// `/dev/null` is plain: anything else reads or writes a file.
fn plain_redirect(node: Node<'_>, text: &str) -> Result<(), Opaque> {
    let mut operator = None;
    let mut destination = None;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match (child.is_named(), child.kind()) {
            (true, "file_descriptor") => {}
            (true, _) if destination.is_none() => destination = Some(child),
            (false, op) if operator.is_none() => operator = Some(op),
            _ => return Err(opaque(node, "a redirection to a file")),
        }
    }
    let to = destination.map(|d| &text[d.byte_range()]);
    let plain = match (operator, to) {
        (Some(">&-" | "<&-"), None) => true,
        (Some(">&" | "<&"), Some(fd)) => fd == "-" || (!fd.is_empty() && fd.bytes().all(|b| b.is_ascii_digit())),
        (Some(">" | ">>" | "&>" | "&>>" | ">|"), Some("/dev/null")) => true,
        _ => false,
    };
    if plain {
        Ok(())
    } else {
        Err(opaque(node, "a redirection to a file"))
    }
}

/// One word after quote removal, or why it is not plain.
fn word(node: Node<'_>, text: &str) -> Result<Word, Opaque> {
    let mut word = Word {
        value: String::new(),
        glob: false,
    };
    let mut unquoted = String::new();
    part(node, text, &mut word, &mut unquoted)?;
    if brace_expansion(&unquoted) {
        return Err(opaque(node, refused("brace_expression")));
    }
    Ok(word)
}

fn part(node: Node<'_>, text: &str, word: &mut Word, unquoted: &mut String) -> Result<(), Opaque> {
    let raw = &text[node.byte_range()];
    match node.kind() {
        "word" | "number" => {
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        // A line continuation: bash removes both.
                        Some('\n') | None => {}
                        Some(escaped) => word.value.push(escaped),
                    },
                    '$' | '`' | '(' | ')' => return Err(opaque(node, refused("expansion"))),
                    '*' | '?' | '[' => {
                        word.glob = true;
                        word.value.push(c);
                    }
                    _ => {
                        unquoted.push(c);
                        word.value.push(c);
                    }
                }
            }
            // A tilde starts an expansion only where the word starts.
            Ok(())
        }
        "raw_string" => {
            let inner = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\''));
            let inner = inner.ok_or_else(|| opaque(node, "an unterminated quote"))?;
            word.value.push_str(inner);
            unquoted.push(' ');
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
                        Some(e @ ('"' | '\\' | '$' | '`')) => word.value.push(e),
                        Some(other) => {
                            word.value.push('\\');
                            word.value.push(other);
                        }
                        None => word.value.push('\\'),
                    },
                    '$' | '`' => return Err(opaque(node, refused("expansion"))),
                    _ => word.value.push(c),
                }
            }
            unquoted.push(' ');
            Ok(())
        }
        "concatenation" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if !child.is_named() {
                    return Err(opaque(child, refused("expansion")));
                }
                part(child, text, word, unquoted)?;
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

/// Every command under `node`, however deeply nested, as best-effort words.
fn find(node: Node<'_>, text: &str, depth: usize, found: &mut Vec<Vec<String>>) {
    if node.kind() == "command" {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "command_name"
                | "word"
                | "number"
                | "raw_string"
                | "string"
                | "concatenation"
                | "expansion"
                | "simple_expansion"
                | "command_substitution"
                | "ansi_c_string"
                | "arithmetic_expansion"
                | "process_substitution"
                | "brace_expression"
                | "translated_string" => {
                    let target = if child.kind() == "command_name" {
                        child.named_child(0).unwrap_or(child)
                    } else {
                        child
                    };
                    words.push(value(target, text));
                }
                _ => {}
            }
        }
        if !words.is_empty() {
            unwrap::found(&words, depth, found);
            // A shell fed a here-document or a here-string runs its text.
            if unwrap::is_shell(&words[0]) {
                here_text(node, text, depth, found);
            }
        }
    }
    if node.kind() == "redirected_statement"
        && let Some(body) = node.child_by_field_name("body")
        && body.kind() == "command"
        && body
            .child_by_field_name("name")
            .is_some_and(|n| unwrap::is_shell(&value(n.named_child(0).unwrap_or(n), text)))
    {
        here_text(node, text, depth, found);
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        find(child, text, depth, found);
    }
}

/// Commands in the here-documents and here-strings directly under `node`.
fn here_text(node: Node<'_>, text: &str, depth: usize, found: &mut Vec<Vec<String>>) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let body = match child.kind() {
            "heredoc_redirect" => {
                let mut inner = child.walk();
                child
                    .children(&mut inner)
                    .find(|n| n.kind() == "heredoc_body")
                    .map(|n| text[n.byte_range()].to_owned())
            }
            "herestring_redirect" => child.named_child(0).map(|n| value(n, text)),
            _ => None,
        };
        if let Some(body) = body {
            found.extend(script(&body, depth + 1).found);
        }
    }
}

/// A word's value when it is plain, else its text as written.
fn value(node: Node<'_>, text: &str) -> String {
    word(node, text).map_or_else(|_| text[node.byte_range()].to_owned(), |w| w.value)
}
