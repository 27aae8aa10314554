//! A simple command's parts as bash reads them, from the grammar's nodes.
//!
//! The grammar's tree is not bash's word list in two ways this module
//! mends: it hangs the words after a redirection on the redirection
//! (`git 2>&1 push --force` has `push` and `--force` as extra destinations
//! of `2>&1`, on the statement around the command), and it may split one
//! word into byte-adjacent nodes (`"a"\]` is a string then a word). Bash
//! reads one word wherever no blank separates text, and a redirection
//! takes exactly one word as its target.

use tree_sitter::Node;

/// A simple command's words, redirections and everything else.
pub(super) struct Parts<'t> {
    /// Each word (the program first): its byte-adjacent nodes.
    pub words: Vec<Vec<Node<'t>>>,
    /// Each file redirection.
    pub redirects: Vec<Redirect<'t>>,
    /// Assignments before the command, here-documents, here-strings,
    /// comments and any node this module does not model.
    pub other: Vec<Node<'t>>,
    /// The words that start a new line: the grammar glues a line starting
    /// with an escaped word onto the command before it (`ls⏎\rm x` is one
    /// command to it, two to bash).
    pub line_starts: Vec<usize>,
}

/// One file redirection (`2>&1`, `>/dev/null`, `< in`).
pub(super) struct Redirect<'t> {
    pub node: Node<'t>,
    /// The operator's kind (`>`, `>&`, `<&-` …), if the grammar gave one.
    pub operator: Option<&'static str>,
    /// The descriptor written before the operator (`2` in `2>&1`), if any.
    pub fd: Option<Node<'t>>,
    /// The nodes of its target word (empty for `>&-`).
    pub target: Vec<Node<'t>>,
}

/// The parts of `command`, with the redirections `outer` that the grammar
/// hung on the statement around it.
pub(super) fn parts<'t>(command: Node<'t>, outer: &[Node<'t>], text: &str) -> Parts<'t> {
    let mut items = Vec::new();
    let mut redirects = Vec::new();
    let mut other = Vec::new();
    let mut cursor = command.walk();
    let children: Vec<Node<'t>> = command.children(&mut cursor).collect();
    for child in children.into_iter().chain(outer.iter().copied()) {
        match child.kind() {
            "command_name" => items.push(child.named_child(0).unwrap_or(child)),
            "file_redirect" => redirects.push(redirect(child, &mut items, text)),
            // A token the grammar keeps apart (`==` in `ls == x`) is a word
            // to bash; the allow side reads only the ones it knows.
            "variable_assignment" | "heredoc_redirect" | "herestring_redirect" | "comment" | "subscript" => {
                other.push(child)
            }
            _ => items.push(child),
        }
    }
    items.sort_by_key(Node::start_byte);
    let mut words = adjacent(items, text);
    // The grammar may read a descriptor as a word of its own (`wc 0< f`
    // is `wc`, `0`, `< f` to it): bash reads digits touching the operator
    // as the descriptor.
    for redirect in redirects.iter_mut().filter(|r| r.fd.is_none()) {
        let at = redirect.node.start_byte();
        if let Some(k) = words.iter().position(|w| {
            matches!(w.as_slice(), [n] if n.end_byte() == at
                && !text[n.byte_range()].is_empty()
                && text[n.byte_range()].bytes().all(|b| b.is_ascii_digit()))
        }) {
            redirect.fd = words.remove(k).pop();
        }
    }
    let line_starts = (1..words.len())
        .filter(|&i| {
            let gap = words[i - 1].last().map_or(0, Node::end_byte)..words[i].first().map_or(0, Node::start_byte);
            // The break may be in the gap or at the start of the word's node.
            let lead = words[i].first().map_or("", |n| &text[n.byte_range()]);
            let lead = &lead[..lead.len() - lead.trim_start().len()];
            text.get(gap).is_some_and(|gap| gap.contains('\n')) || lead.contains('\n')
        })
        .collect();
    Parts {
        words,
        redirects,
        other,
        line_starts,
    }
}

/// A redirection: its target, its extra destinations (words of the command)
/// pushed onto `items`.
pub(super) fn redirect<'t>(node: Node<'t>, items: &mut Vec<Node<'t>>, text: &str) -> Redirect<'t> {
    let mut operator = None;
    let mut fd = None;
    let mut destinations = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match (child.is_named(), child.kind()) {
            (true, "file_descriptor") => fd = Some(child),
            (true, _) => destinations.push(child),
            (false, op) if operator.is_none() => operator = Some(op),
            (false, _) => {}
        }
    }
    let mut groups = adjacent(destinations, text).into_iter();
    // `>&-` and `<&-` close a descriptor: they take no word.
    let closes = matches!(operator, Some(">&-" | "<&-"));
    let target = if closes {
        Vec::new()
    } else {
        groups.next().unwrap_or_default()
    };
    items.extend(groups.flatten());
    Redirect {
        node,
        operator,
        fd,
        target,
    }
}

/// Nodes grouped into words: a node touching the one before it continues
/// its word.
pub(super) fn adjacent<'t>(nodes: Vec<Node<'t>>, text: &str) -> Vec<Vec<Node<'t>>> {
    let mut words: Vec<Vec<Node<'t>>> = Vec::new();
    for node in nodes {
        // A node may start with the blank before it (`ls⏎\rm`).
        let blank = text[node.byte_range()].starts_with(char::is_whitespace);
        match words.last_mut() {
            Some(word) if !blank && word.last().is_some_and(|last| last.end_byte() == node.start_byte()) => {
                word.push(node)
            }
            _ => words.push(vec![node]),
        }
    }
    words
}
