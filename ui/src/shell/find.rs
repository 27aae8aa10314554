//! The deny side: every command in a text, however deeply nested.

use tree_sitter::Node;

use super::command::parts;
use super::input::HereDoc;
use super::parse::script;
use super::rough;
use super::unwrap::{self, Found};
use super::word::group_value;

/// The text and its here-document bodies.
struct Source<'a> {
    text: &'a str,
    heres: &'a [HereDoc],
}

/// Every command under `node`, however deeply nested, as best-effort words.
pub(super) fn find(node: Node<'_>, text: &str, heres: &[HereDoc], depth: usize, found: &mut Found) {
    let source = Source { text, heres };
    walk(node, &source, depth, found, &[]);
}

/// `outer`: redirections the grammar hung on a statement around `node`,
/// which belong to the last simple command in it.
fn walk<'t>(node: Node<'t>, source: &Source<'_>, depth: usize, found: &mut Found, outer: &[Node<'t>]) {
    let mut cursor = node.walk();
    match node.kind() {
        "command" => {
            command(node, source, depth, found, outer);
            for child in node.children(&mut cursor) {
                walk(child, source, depth, found, &[]);
            }
        }
        "redirected_statement" => {
            let body = node.child_by_field_name("body");
            let redirects: Vec<Node<'t>> = node
                .children(&mut cursor)
                .filter(|c| Some(*c) != body && c.kind().ends_with("redirect"))
                .collect();
            for child in node.children(&mut cursor) {
                let here = if Some(child) == body { redirects.as_slice() } else { &[] };
                walk(child, source, depth, found, here);
            }
        }
        // `[` is a builtin (no program to find), but the grammar may read
        // a `[` … `]` across a line break that ends it for bash.
        "test_command" if source.text[node.byte_range()].contains('\n') => {
            for words in rough::commands(&source.text[node.byte_range()]) {
                unwrap::found(&words, depth, found);
            }
            for child in node.children(&mut cursor) {
                walk(child, source, depth, found, &[]);
            }
        }
        "pipeline" | "list" => {
            let last = node.named_children(&mut node.walk()).last();
            for child in node.children(&mut cursor) {
                let here = if Some(child) == last { outer } else { &[] };
                walk(child, source, depth, found, here);
            }
        }
        _ => {
            for child in node.children(&mut cursor) {
                walk(child, source, depth, found, &[]);
            }
        }
    }
}

/// One simple command: its words (and what it runs), and the text a shell
/// reads from its here-documents and here-strings.
fn command<'t>(node: Node<'t>, source: &Source<'_>, depth: usize, found: &mut Found, outer: &[Node<'t>]) {
    let text = source.text;
    let parts = parts(node, outer, text);
    let words: Vec<String> = parts.words.iter().map(|w| group_value(w, text)).collect();
    if words.is_empty() {
        return;
    }
    // Each line the grammar glued on is a command of its own to bash.
    let mut from = 0;
    for &to in parts.line_starts.iter().chain([&words.len()]) {
        unwrap::found(&words[from..to], depth, found);
        from = to;
    }
    // A shell fed a here-document or a here-string runs its text.
    if unwrap::is_shell(&words[0]) {
        for here in parts.other {
            here_text(here, source, depth, found);
        }
    }
}

/// The commands in a here-document or here-string fed to a shell.
fn here_text(node: Node<'_>, source: &Source<'_>, depth: usize, found: &mut Found) {
    let text = source.text;
    let body = match node.kind() {
        // The body bash reads (the text holds it blanked).
        "heredoc_redirect" if let Some(here) = source.heres.iter().find(|h| h.operator == node.start_byte()) => {
            Some(here.body.clone())
        }
        "heredoc_redirect" => {
            let mut cursor = node.walk();
            node.children(&mut cursor)
                .find(|n| n.kind() == "heredoc_body")
                .map(|n| text[n.byte_range()].to_owned())
        }
        "herestring_redirect" => node.named_child(0).map(|n| group_value(&[n], text)),
        _ => None,
    };
    if let Some(body) = body {
        found.nested(script(&body, depth + 1));
    }
}
