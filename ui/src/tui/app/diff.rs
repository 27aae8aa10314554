//! Diffs for the review of a held MCP tool, over words (a description) or
//! lines (a schema).

use std::hash::Hash;

use similar::DiffTag;

/// Whether a piece of text is in both definitions, only the old, or only the new.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Same,
    Removed,
    Added,
}

/// One line of the review: a section heading, or pieces of text each
/// marked with where it comes from. Pieces are raw (the view escapes them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    Heading { title: &'static str, unchanged: bool },
    Text(Vec<(Change, String)>),
}

impl DiffLine {
    pub fn heading(title: &'static str, unchanged: bool) -> Self {
        DiffLine::Heading { title, unchanged }
    }

    /// The line as plain text, as `git diff --word-diff=plain` would write
    /// it: `[-removed-]`, `{+added+}`; a whole-line change starts `- `/`+ `.
    pub fn plain(&self) -> String {
        match self {
            DiffLine::Heading { title, unchanged: true } => format!("{title} (unchanged)"),
            DiffLine::Heading {
                title,
                unchanged: false,
            } => format!("{title} (changed)"),
            DiffLine::Text(pieces) => match pieces.as_slice() {
                [(Change::Removed, text)] => format!("- {text}"),
                [(Change::Added, text)] => format!("+ {text}"),
                _ => {
                    let mut line = "  ".to_owned();
                    for (change, text) in pieces {
                        match change {
                            Change::Same => line.push_str(text),
                            Change::Removed => line.push_str(&format!("[-{text}-]")),
                            Change::Added => line.push_str(&format!("{{+{text}+}}")),
                        }
                    }
                    line
                }
            },
        }
    }
}

/// Past this many cells the diff is not searched for: everything old is
/// shown removed and everything new added (a server's 100 kB description
/// must not freeze the screen).
const MAX_CELLS: usize = 4_000_000;

/// The edit script from `old` to `new` (Myers' diff, from `similar`), with
/// the removed elements of each run of changes before the added ones, as
/// diffs are read.
pub fn diff<'a, T: Eq + Hash + Ord>(old: &'a [T], new: &'a [T]) -> Vec<(Change, &'a T)> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (removed, added) = (old.len() - prefix - suffix, new.len() - prefix - suffix);
    if removed.saturating_mul(added) > MAX_CELLS {
        let same = |part: &'a [T]| part.iter().map(|t| (Change::Same, t));
        return same(&old[..prefix])
            .chain(old[prefix..old.len() - suffix].iter().map(|t| (Change::Removed, t)))
            .chain(new[prefix..new.len() - suffix].iter().map(|t| (Change::Added, t)))
            .chain(same(&old[old.len() - suffix..]))
            .collect();
    }
    let mut script = Vec::with_capacity(old.len().max(new.len()));
    let mut run: (Vec<&T>, Vec<&T>) = (Vec::new(), Vec::new());
    let flush = |script: &mut Vec<(Change, &'a T)>, run: &mut (Vec<&'a T>, Vec<&'a T>)| {
        script.extend(run.0.drain(..).map(|t| (Change::Removed, t)));
        script.extend(run.1.drain(..).map(|t| (Change::Added, t)));
    };
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, old, new) {
        let (tag, in_old, in_new) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {
                flush(&mut script, &mut run);
                script.extend(old[in_old].iter().map(|t| (Change::Same, t)));
            }
            DiffTag::Delete => run.0.extend(&old[in_old]),
            DiffTag::Insert => run.1.extend(&new[in_new]),
            DiffTag::Replace => {
                run.0.extend(&old[in_old]);
                run.1.extend(&new[in_new]);
            }
        }
    }
    flush(&mut script, &mut run);
    script
}

/// Words, runs of white space and line breaks: what a description's diff
/// is made of.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let kind = |c: char| match c {
        '\n' => 0,
        c if c.is_whitespace() => 1,
        _ => 2,
    };
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|(_, n)| *n);
        if c == '\n' || next.is_none_or(|n| kind(n) != kind(c) || n == '\n') {
            out.push(&text[start..at + c.len_utf8()]);
            start = at + c.len_utf8();
        }
    }
    out
}

/// Two texts compared word by word, broken into lines at their line breaks.
/// In each run of changes the old words come first, then the new ones, and
/// a space between two changes belongs to the run, so that a rewritten
/// sentence reads as one `[-old-]{+new+}`, not word by word interleaved.
pub fn word_diff(old: &str, new: &str) -> Vec<DiffLine> {
    let (old, new) = (tokens(old), tokens(new));
    let mut script = diff(&old, &new);
    let changed = |c: &(Change, &&str)| c.0 != Change::Same;
    let mut spaces = Vec::new();
    for i in 1..script.len().saturating_sub(1) {
        let (change, token) = script[i];
        let blank = token.chars().all(|c| c.is_whitespace() && c != '\n');
        if change == Change::Same && blank && changed(&script[i - 1]) && changed(&script[i + 1]) {
            spaces.push(i);
        }
    }
    for &i in spaces.iter().rev() {
        let token = script[i].1;
        script[i] = (Change::Removed, token);
        script.insert(i + 1, (Change::Added, token));
    }
    let mut lines = Vec::new();
    let mut line: Vec<(Change, String)> = Vec::new();
    let (mut removed, mut added) = (String::new(), String::new());
    let flush = |line: &mut Vec<(Change, String)>, removed: &mut String, added: &mut String| {
        for (change, text) in [(Change::Removed, removed), (Change::Added, added)] {
            if !text.is_empty() {
                line.push((change, std::mem::take(text)));
            }
        }
    };
    for (change, token) in script {
        if *token == "\n" {
            flush(&mut line, &mut removed, &mut added);
            lines.push(DiffLine::Text(std::mem::take(&mut line)));
            continue;
        }
        match change {
            Change::Removed => removed.push_str(token),
            Change::Added => added.push_str(token),
            Change::Same => {
                flush(&mut line, &mut removed, &mut added);
                match line.last_mut() {
                    Some((Change::Same, text)) => text.push_str(token),
                    _ => line.push((Change::Same, (*token).to_owned())),
                }
            }
        }
    }
    flush(&mut line, &mut removed, &mut added);
    if !line.is_empty() || lines.is_empty() {
        lines.push(DiffLine::Text(line));
    }
    lines
}

/// Two texts compared line by line.
pub fn line_diff(old: &str, new: &str) -> Vec<DiffLine> {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    diff(&old, &new)
        .into_iter()
        .map(|(change, line)| DiffLine::Text(vec![(change, (*line).to_owned())]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[DiffLine]) -> Vec<String> {
        lines.iter().map(DiffLine::plain).collect()
    }

    #[test]
    fn line_breaks_in_a_description_break_the_diff_into_lines() {
        let lines = word_diff("one\ntwo three\nfour", "one\ntwo 3\nfour\nfive");
        assert_eq!(plain(&lines), ["  one", "  two [-three-]{+3+}", "  four", "+ five"]);
    }

    #[test]
    fn hostile_characters_stay_in_the_pieces_for_the_view_to_escape() {
        let lines = word_diff("safe", "safe \u{202e}txt.exe");
        let DiffLine::Text(pieces) = &lines[0] else { panic!() };
        assert_eq!(pieces[1], (Change::Added, " \u{202e}txt.exe".to_owned()));
    }

    #[test]
    fn the_edit_script_keeps_every_element_once_in_order() {
        let old = [1, 2, 3, 4, 5, 6];
        let new = [0, 2, 3, 7, 5, 6, 8];
        let script = diff(&old, &new);
        let kept: Vec<i32> = script
            .iter()
            .filter(|(c, _)| *c != Change::Added)
            .map(|(_, v)| **v)
            .collect();
        let made: Vec<i32> = script
            .iter()
            .filter(|(c, _)| *c != Change::Removed)
            .map(|(_, v)| **v)
            .collect();
        assert_eq!(kept, old);
        assert_eq!(made, new);
        assert_eq!(
            script.iter().filter(|(c, _)| *c == Change::Same).count(),
            4,
            "2 3 5 6 are common"
        );
    }

    #[test]
    fn a_huge_change_is_shown_whole_instead_of_searched() {
        let old: Vec<u32> = (0..3000).collect();
        let new: Vec<u32> = (5000..8000).collect();
        let script = diff(&old, &new);
        assert_eq!(script.len(), 6000);
        assert!(script[..3000].iter().all(|(c, _)| *c == Change::Removed));
    }
}
