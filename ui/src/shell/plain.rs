//! The allow side: a script's plain segments, or why it has none.

use tree_sitter::Node;

use std::ops::Range;

use super::command::{self, Redirect};
use super::input::HereDoc;
use super::opaque::{opaque, refused};
use super::word::group;
use super::{Joint, Opaque, Segment, Word};

/// The plain segments under `node`, or why there are none.
pub(super) fn plain(node: Node<'_>, text: &str, heres: &[HereDoc], out: &mut Vec<Segment>) -> Result<(), Opaque> {
    let mut read = Read {
        text,
        heres,
        out,
        next: Joint::Seq,
    };
    read.node(node)
}

/// The segments read so far, and how the next one is joined to them.
struct Read<'a> {
    text: &'a str,
    heres: &'a [HereDoc],
    out: &'a mut Vec<Segment>,
    next: Joint,
}

impl<'t> Read<'_> {
    fn push(&mut self, mut segment: Segment) {
        segment.joint = std::mem::replace(&mut self.next, Joint::Seq);
        self.out.push(segment);
    }

    fn node(&mut self, node: Node<'t>) -> Result<(), Opaque> {
        let (text, heres) = (self.text, self.heres);
        match node.kind() {
            "program" | "list" | "pipeline" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'t>> = node.children(&mut cursor).collect();
                self.sequence(None, &children, &[";", "&&", "||", "|", "\n"])
            }
            // `if … then … elif … else … fi` of plain commands: each in order.
            "if_statement" | "elif_clause" | "else_clause" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'t>> = node.children(&mut cursor).collect();
                self.sequence(None, &children, &[";", "\n", "if", "then", "elif", "else", "fi"])
            }
            "command" => {
                let (segment, trailing) = segment(node, text, heres, &[], node.byte_range())?;
                self.push(segment);
                self.sequence(Some(node), &trailing, &["&&", "||", "|"])
            }
            "test_command" => {
                let segment = test(node, text)?;
                self.push(segment);
                Ok(())
            }
            "redirected_statement" => {
                let body = node
                    .child_by_field_name("body")
                    .ok_or_else(|| opaque(node, "a redirection without a command"))?;
                let mut cursor = node.walk();
                let redirects: Vec<Node<'_>> = node.children(&mut cursor).filter(|c| *c != body).collect();
                if body.kind() == "command" {
                    let (segment, trailing) = segment(body, text, heres, &redirects, node.byte_range())?;
                    self.push(segment);
                    return self.sequence(Some(body), &trailing, &["&&", "||", "|"]);
                }
                // The grammar hangs a redirection that ends a pipeline or a
                // list on all of it (`a | b > /dev/null`, `a && b < f`);
                // bash gives it to the simple command it ends. Each is
                // plain and wholly its own, or standard input read from a
                // file by that last command.
                let mut stray = Vec::new();
                let mut inputs = Vec::new();
                for redirect in &redirects {
                    if redirect.kind() != "file_redirect" {
                        return Err(opaque(*redirect, refused(redirect.kind())));
                    }
                    let parts = command::redirect(*redirect, &mut stray, text);
                    match input(&parts, text)? {
                        Some(word) => inputs.push((*redirect, word)),
                        None => plain_redirect(&parts, text)?,
                    }
                }
                if let Some(word) = stray.first() {
                    return Err(opaque(*word, "words after a redirection of a pipeline"));
                }
                let before = self.out.len();
                self.node(body)?;
                let read_body = self.out.len() > before;
                for (redirect, word) in inputs {
                    match self.out.last_mut().filter(|_| read_body) {
                        Some(last) if ends_in_a_command(body) && redirect.start_byte() >= body.end_byte() => {
                            last.inputs.push(word);
                        }
                        _ => {
                            return Err(opaque(redirect, "standard input redirected to a compound command"));
                        }
                    }
                }
                Ok(())
            }
            kind => Err(opaque(node, refused(kind))),
        }
    }

    /// Nodes read as plain in order, between the given operators, after
    /// `before` (already read).
    fn sequence(
        &mut self,
        mut before: Option<Node<'t>>,
        children: &[Node<'t>],
        operators: &[&str],
    ) -> Result<(), Opaque> {
        for &child in children {
            if child.is_named() {
                self.node(child)?;
                before = Some(child);
                continue;
            }
            match child.kind() {
                op if operators.contains(&op) => {
                    self.next = match op {
                        // `&&` and `||` weigh the result of what stands
                        // before them: one segment's only when it ends in
                        // one (`if … fi && x` weighs the whole `if`).
                        "&&" if before.is_some_and(ends_in_a_segment) => Joint::And,
                        "||" if before.is_some_and(ends_in_a_segment) => Joint::Or,
                        "|" => Joint::Pipe,
                        _ => Joint::Seq,
                    }
                }
                "&" => return Err(opaque(child, "a command run in the background (&)")),
                "|&" => return Err(opaque(child, "a pipe of standard error (|&)")),
                other => return Err(opaque(child, format!("the operator {other:?}"))),
            }
        }
        Ok(())
    }
}

/// Whether the result of `node` is the result of its last segment.
fn ends_in_a_segment(node: Node<'_>) -> bool {
    match node.kind() {
        "command" | "test_command" => true,
        "redirected_statement" => node.child_by_field_name("body").is_some_and(ends_in_a_segment),
        "list" | "pipeline" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).last().is_some_and(ends_in_a_segment)
        }
        _ => false,
    }
}

/// Whether `node` ends in a simple command of its own, which a
/// redirection after it belongs to (`a | b < f`: `b`'s; `a && if …; fi <
/// f`: the whole `if`'s).
fn ends_in_a_command(node: Node<'_>) -> bool {
    match node.kind() {
        "command" => true,
        "list" | "pipeline" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).last().is_some_and(ends_in_a_command)
        }
        _ => false,
    }
}

/// A simple command of plain words, with the redirections `outer` the
/// grammar hung on the statement around it; `span` is where it stands.
/// With it, what the grammar hung on its here-document: the rest of the
/// line (`cat <<EOF | wc -l`), operators and commands in order.
fn segment<'t>(
    node: Node<'t>,
    text: &str,
    heres: &[HereDoc],
    outer: &[Node<'t>],
    span: Range<usize>,
) -> Result<(Segment, Vec<Node<'t>>), Opaque> {
    let parts = command::parts(node, outer, text);
    if let Some(&at) = parts.line_starts.first() {
        return Err(Opaque {
            why: "a line break inside a command (bash runs the next line on its own)".into(),
            span: span_of(&parts.words[at]),
        });
    }
    let mut here = false;
    let mut trailing = Vec::new();
    for other in &parts.other {
        match other.kind() {
            "heredoc_redirect" if !here => here = here_document(*other, text, heres, &mut trailing)?,
            "herestring_redirect" if !here => here = here_string(*other, text)?,
            kind if !other.is_named() => {
                return Err(opaque(*other, format!("the shell syntax {kind:?}")));
            }
            kind => return Err(opaque(*other, refused(kind))),
        }
    }
    let mut inputs = Vec::new();
    for redirect in &parts.redirects {
        match input(redirect, text)? {
            Some(word) => inputs.push(word),
            None => plain_redirect(redirect, text)?,
        }
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
    Ok((
        Segment {
            words,
            span,
            here,
            inputs,
            joint: Joint::Seq,
        },
        trailing,
    ))
}

/// A redirection of standard input from a file (`< in.txt`, `0< in.txt`),
/// its word: plain, no file-name pattern (bash expands one in a
/// redirection when it gives one word) and no tilde. `None`: not one
/// (`/dev/null` is plain as it is).
fn input(redirect: &Redirect<'_>, text: &str) -> Result<Option<Word>, Opaque> {
    let fd = redirect.fd.map(|n| &text[n.byte_range()]);
    if redirect.operator != Some("<") || !matches!(fd, None | Some("0")) || redirect.target.is_empty() {
        return Ok(None);
    }
    let word = group(&redirect.target, text)?;
    if word.value == "/dev/null" {
        return Ok(None);
    }
    if word.glob {
        return Err(opaque(redirect.node, "a file-name pattern in a redirection"));
    }
    if word.value.starts_with('~') {
        return Err(opaque(redirect.node, "a tilde in a redirection"));
    }
    Ok(Some(word))
}

/// A here-document of literal data (a quoted delimiter, or a body without
/// expansions or backslashes, as bash reads it: see [`HereDoc`]) with at
/// most plain redirections beside it; the rest of its line the grammar
/// hangs on it (`| wc -l`, `&& ls`) goes to `trailing`.
fn here_document<'t>(
    node: Node<'t>,
    text: &str,
    heres: &[HereDoc],
    trailing: &mut Vec<Node<'t>>,
) -> Result<bool, Opaque> {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "heredoc_start" | "heredoc_body" | "heredoc_end" | "heredoc_content" | "<<" | "<<-" => {}
            "file_redirect" => plain_redirect(&command::redirect(child, &mut Vec::new(), text), text)?,
            "&&" | "||" | "|" | "pipeline" | "list" | "command" | "redirected_statement" => trailing.push(child),
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
    Ok(Segment::of(words, node.byte_range()))
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
        (Some(">" | ">>" | "&>" | "&>>" | ">|" | "<"), Some("/dev/null")) => true,
        _ => false,
    };
    if plain {
        Ok(())
    } else {
        Err(opaque(redirect.node, "a redirection to a file"))
    }
}
