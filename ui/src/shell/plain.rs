//! The allow side: a script's plain segments, or why it has none.

use tree_sitter::Node;

use std::ops::Range;

use super::command::{self, Redirect};
use super::input::HereDoc;
use super::opaque::{opaque, refused};
use super::word::group;
use super::{Opaque, Segment};

/// The plain segments under `node`, or why there are none.
pub(super) fn plain(node: Node<'_>, text: &str, heres: &[HereDoc], out: &mut Vec<Segment>) -> Result<(), Opaque> {
    match node.kind() {
        "program" | "list" | "pipeline" => sequence(node, text, heres, out, &[";", "&&", "||", "|", "\n"]),
        // `if … then … elif … else … fi` of plain commands: each in order.
        "if_statement" | "elif_clause" | "else_clause" => {
            sequence(node, text, heres, out, &[";", "\n", "if", "then", "elif", "else", "fi"])
        }
        "command" => {
            out.push(segment(node, text, heres, &[], node.byte_range())?);
            Ok(())
        }
        "test_command" => {
            out.push(test(node, text)?);
            Ok(())
        }
        "redirected_statement" => {
            let body = node
                .child_by_field_name("body")
                .ok_or_else(|| opaque(node, "a redirection without a command"))?;
            let mut cursor = node.walk();
            let redirects: Vec<Node<'_>> = node.children(&mut cursor).filter(|c| *c != body).collect();
            if body.kind() == "command" {
                out.push(segment(body, text, heres, &redirects, node.byte_range())?);
                return Ok(());
            }
            // The grammar hangs a redirection on a whole pipeline or list
            // (`a | b > /dev/null`): each one plain and wholly its own.
            let mut stray = Vec::new();
            for redirect in &redirects {
                if redirect.kind() != "file_redirect" {
                    return Err(opaque(*redirect, refused(redirect.kind())));
                }
                let parts = command::redirect(*redirect, &mut stray, text);
                plain_redirect(&parts, text)?;
            }
            if let Some(word) = stray.first() {
                return Err(opaque(*word, "words after a redirection of a pipeline"));
            }
            plain(body, text, heres, out)
        }
        kind => Err(opaque(node, refused(kind))),
    }
}

/// Named children read as plain, between the given operators.
fn sequence(
    node: Node<'_>,
    text: &str,
    heres: &[HereDoc],
    out: &mut Vec<Segment>,
    operators: &[&str],
) -> Result<(), Opaque> {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.is_named() {
            plain(child, text, heres, out)?;
            continue;
        }
        match child.kind() {
            op if operators.contains(&op) => {}
            "&" => return Err(opaque(child, "a command run in the background (&)")),
            "|&" => return Err(opaque(child, "a pipe of standard error (|&)")),
            other => return Err(opaque(child, format!("the operator {other:?}"))),
        }
    }
    Ok(())
}

/// A simple command of plain words, with the redirections `outer` the
/// grammar hung on the statement around it; `span` is where it stands.
fn segment(
    node: Node<'_>,
    text: &str,
    heres: &[HereDoc],
    outer: &[Node<'_>],
    span: Range<usize>,
) -> Result<Segment, Opaque> {
    let parts = command::parts(node, outer, text);
    if let Some(&at) = parts.line_starts.first() {
        return Err(Opaque {
            why: "a line break inside a command (bash runs the next line on its own)".into(),
            span: span_of(&parts.words[at]),
        });
    }
    let mut here = false;
    for other in &parts.other {
        match other.kind() {
            "heredoc_redirect" if !here => here = here_document(*other, text, heres)?,
            "herestring_redirect" if !here => here = here_string(*other, text)?,
            kind if !other.is_named() => {
                return Err(opaque(*other, format!("the shell syntax {kind:?}")));
            }
            kind => return Err(opaque(*other, refused(kind))),
        }
    }
    for redirect in &parts.redirects {
        plain_redirect(redirect, text)?;
    }
    let mut words = Vec::with_capacity(parts.words.len());
    for nodes in &parts.words {
        words.push(group(nodes, text)?);
    }
    match words.first() {
        None => return Err(opaque(node, "a command without a name")),
        Some(program) if program.glob => {
            return Err(Opaque {
                why: "a program named by a file-name pattern".into(),
                span: span_of(&parts.words[0]),
            });
        }
        Some(_) => {}
    }
    Ok(Segment { words, span, here })
}

/// A here-document of literal data (a quoted delimiter, or a body without
/// expansions or backslashes, as bash reads it: see [`HereDoc`]) with at
/// most plain redirections beside it.
fn here_document(node: Node<'_>, text: &str, heres: &[HereDoc]) -> Result<bool, Opaque> {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "heredoc_start" | "heredoc_body" | "heredoc_end" | "heredoc_content" | "<<" | "<<-" => {}
            "file_redirect" => plain_redirect(&command::redirect(child, &mut Vec::new(), text), text)?,
            kind => return Err(opaque(child, refused(kind))),
        }
    }
    let here = heres
        .iter()
        .find(|h| h.operator == node.start_byte())
        .ok_or_else(|| opaque(node, "a here-document this reader did not place"))?;
    if here.quoted || !here.body.contains(['$', '`', '\\']) {
        Ok(true)
    } else {
        Err(opaque(node, "a here-document with expansions"))
    }
}

/// A here-string of literal data (no expansions, no backslashes).
fn here_string(node: Node<'_>, text: &str) -> Result<bool, Opaque> {
    let mut cursor = node.walk();
    let data: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let raw = &text[span_of(&data)];
    if data.is_empty() || raw.contains('\\') || group(&data, text).is_err() || raw.contains(['*', '?', '[', '~']) {
        return Err(opaque(node, "a here-string with expansions"));
    }
    Ok(true)
}

/// `[ … ]` (not `[[ … ]]`): the command `[` with its words, as the
/// grammar splits its expression back into them.
fn test(node: Node<'_>, text: &str) -> Result<Segment, Opaque> {
    if node.child(0).map(|c| c.kind()) != Some("[") || text[node.byte_range()].contains('\n') {
        return Err(opaque(node, refused("test_command")));
    }
    let mut tokens = Vec::new();
    expression_tokens(node, text, &mut tokens)?;
    let mut words = Vec::new();
    for nodes in command::adjacent(tokens, text) {
        let word = group(&nodes, text)?;
        if word.glob {
            return Err(opaque(node, "a file-name pattern in a [ ] test"));
        }
        words.push(word);
    }
    Ok(Segment {
        words,
        span: node.byte_range(),
        here: false,
    })
}

/// The tokens of a `[ ]` expression in order; operators bash would read as
/// redirections or grouping make it opaque.
fn expression_tokens<'t>(node: Node<'t>, text: &str, out: &mut Vec<Node<'t>>) -> Result<(), Opaque> {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match (child.is_named(), child.kind()) {
            (true, "unary_expression" | "binary_expression") => expression_tokens(child, text, out)?,
            (true, "test_operator")
                if text[child.byte_range()]
                    .bytes()
                    .skip(1)
                    .all(|b| b.is_ascii_alphabetic()) =>
            {
                out.push(child)
            }
            (true, "word" | "string" | "raw_string" | "number" | "concatenation") => out.push(child),
            (false, "[" | "]" | "=" | "==" | "!=" | "!") => out.push(child),
            (_, kind) => return Err(opaque(child, format!("{} in a [ ] test", refused(kind)))),
        }
    }
    Ok(())
}

fn span_of(nodes: &[Node<'_>]) -> Range<usize> {
    super::word::span(nodes)
}

/// Only a duplication (`2>&1`, `>&2`, `1>&-`) or a redirection to
/// `/dev/null` is plain: anything else reads or writes a file.
fn plain_redirect(redirect: &Redirect<'_>, text: &str) -> Result<(), Opaque> {
    let to = (!redirect.target.is_empty()).then(|| &text[span_of(&redirect.target)]);
    let plain = match (redirect.operator, to) {
        (Some(">&-" | "<&-"), None) => true,
        (Some(">&" | "<&"), Some(fd)) => fd == "-" || (!fd.is_empty() && fd.bytes().all(|b| b.is_ascii_digit())),
        (Some(">" | ">>" | "&>" | "&>>" | ">|"), Some("/dev/null")) => true,
        _ => false,
    };
    if plain {
        Ok(())
    } else {
        Err(opaque(redirect.node, "a redirection to a file"))
    }
}
