//! The tree-sitter walk: plain segments for allows, every command for denies.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use tree_sitter::{Node, Parser, Tree};

use super::command::parts;
use super::input::{self, HereDoc, Joined};
use super::plain::plain;
use super::rough;
use super::unwrap::{self, Found};
use super::word::group_value;
use super::{Opaque, Script, Segment};

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
    // Shared, not copied: every rule of a policy reads the same script.
    static RECENT: RefCell<Vec<(String, Rc<Script>)>> = const { RefCell::new(Vec::new()) };
}

/// [`script`] at depth 0, from the recent reads when the text is there.
pub(super) fn cached(text: &str) -> Rc<Script> {
    let hit = RECENT.with(|recent| {
        recent
            .borrow()
            .iter()
            .find(|(t, _)| t == text)
            .map(|(_, s)| Rc::clone(s))
    });
    if let Some(script) = hit {
        return script;
    }
    let script = Rc::new(script(text, 0));
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        if recent.len() >= CACHED {
            recent.remove(0);
        }
        recent.push((text.to_owned(), Rc::clone(&script)));
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
    if depth > MAX_DEPTH {
        let mut script = Script::opaque("commands nested too deeply to read", Vec::new());
        script.beyond_depth = true;
        return script;
    }
    let joined = input::join(text);
    let read = &*joined.text;
    let Some(tree) = tree(read) else {
        return Script::opaque("the command could not be parsed", Vec::new());
    };
    let root = tree.root_node();
    let mut found = Found::default();
    find(root, read, &joined.heres, depth, &mut found);
    if let Some(unblanked) = &joined.unblanked
        && let Some(tree) = self::tree(unblanked)
    {
        // The grammar's own reading of the bodies too: a deny sees more,
        // never less.
        find(tree.root_node(), unblanked, &[], depth, &mut found);
    }
    let skipped = skipped(root, read);
    if root.has_error() || skipped.is_some() {
        for words in rough::commands(read) {
            unwrap::found(&words, depth, &mut found);
        }
    }
    if joined.uncertain
        && let Some(unjoined) = self::tree(text)
    {
        // Where the continuations cannot be placed for certain, a deny
        // sees what either reading runs.
        find(unjoined.root_node(), text, &[], depth, &mut found);
    }
    let segments = segments(&joined, root, skipped).map_err(|o| Opaque {
        span: joined.original(o.span),
        ..o
    });
    let segments = segments.map(|mut segments| {
        for segment in &mut segments {
            segment.span = joined.original(segment.span.clone());
        }
        segments
    });
    Script {
        segments,
        found: found.commands,
        beyond_depth: found.beyond_depth,
        reads: found.reads,
    }
}

/// The allow side of a parsed text: its plain segments (spans in the
/// joined text), or why it has none.
fn segments(joined: &Joined<'_>, root: Node<'_>, skipped: Option<Range<usize>>) -> Result<Vec<Segment>, Opaque> {
    // Bash keeps a carriage return or another control character inside a
    // word where a terminal hides it, and the grammar may not agree with
    // bash about them: such text is not read as plain.
    let read = &*joined.text;
    if let Some((at, c)) = read
        .char_indices()
        .find(|(_, c)| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Err(Opaque {
            why: format!("a control character ({})", c.escape_unicode()),
            span: at..at + c.len_utf8(),
        });
    }
    if let Some(at) = &joined.comment {
        return Err(Opaque {
            why: "a comment (#)".into(),
            span: at.clone(),
        });
    }
    if joined.uncertain {
        return Err(Opaque {
            why: "a line continuation (backslash-newline) where this reader cannot tell what bash joins".into(),
            span: 0..read.len(),
        });
    }
    if root.has_error() {
        let at = first_error(root).map_or(0..read.len(), |n| n.byte_range());
        return Err(Opaque {
            why: "text that does not parse as a shell command".into(),
            span: at,
        });
    }
    if let Some(span) = skipped {
        return Err(Opaque {
            why: "text the grammar skipped over (bash reads it)".into(),
            span,
        });
    }
    let mut segments = Vec::new();
    plain(root, read, &joined.heres, &mut segments)?;
    Ok(segments)
}

/// The first text outside every leaf of the tree that is not blank: the
/// grammar took it for a separator (`ls \ ` is `ls` to it, `ls ' '` to
/// bash).
fn skipped(root: Node<'_>, text: &str) -> Option<Range<usize>> {
    let mut at = 0;
    let mut cursor = root.walk();
    let gap = |from: usize, to: usize| {
        let between = text.get(from..to)?;
        between
            .find(|c: char| !matches!(c, ' ' | '\t' | '\n'))
            .map(|start| from + start..to)
    };
    loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            if node.start_byte() > at
                && let Some(span) = gap(at, node.start_byte())
            {
                return Some(span);
            }
            at = at.max(node.end_byte());
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return gap(at, text.len());
            }
        }
    }
}

fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).find_map(first_error)
}

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
    // A file a redirection opens for reading is read whatever the command
    // is (`cat < .env > out`): `@secret` sees it.
    for redirect in &parts.redirects {
        if matches!(redirect.operator, Some("<" | "<>")) && !redirect.target.is_empty() {
            found.reads.push(group_value(&redirect.target, text));
        }
    }
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
