//! zsh's reading of a command text, besides bash's. The agents' hooks do
//! not say which shell runs a command: Claude Code runs its Bash tool in
//! the user's shell when that is zsh (its snapshot of the user's config
//! first), Codex runs `zsh -lc` for a zsh user (the user's `.zshenv` and
//! `.zprofile` read first, with any option they set). So a text is covered
//! only when both readings are: a word zsh makes something of that no
//! allow can judge ([`Zsh::Unread`]: `=ls`, `'a''b'` with `RC_QUOTES`,
//! `{ab}` with `BRACE_CCL`) leaves the text opaque; a word zsh may expand
//! as a pattern where bash does not ([`Zsh::Extended`]) is judged by the
//! catalogue under each of zsh's options too.

use std::rc::Rc;

use super::unwrap::{self, Found};
use super::{Opaque, Script, Segment, Zsh};

/// `script`, read from `text` as bash reads it, as either bash or zsh may
/// run it.
pub(super) fn also(text: &str, script: Rc<Script>) -> Rc<Script> {
    let Ok(segments) = &script.segments else {
        return script;
    };
    // What zsh with BRACE_CCL runs (`HEAD@{1}` is `HEAD@1`, `--forc{e}`
    // is `--force`): deny and ask rules see it too.
    let mut braced = Found::default();
    for words in segments.iter().filter_map(Segment::brace_ccl_values) {
        unwrap::found(&words, 0, &mut braced);
    }
    let unread = segments.iter().find_map(|segment| {
        let mut words = segment.words.iter().chain(&segment.inputs);
        let why = words.find_map(|word| match &word.zsh {
            Zsh::Unread(why) => Some(*why),
            Zsh::BraceClass(_) => Some("text in braces, which zsh with BRACE_CCL expands into one word per character"),
            _ => None,
        });
        why.or_else(|| numeric_range(text.get(segment.span.clone()).unwrap_or(text)))
            .map(|why| (why, segment.span.clone()))
    });
    let unfollowed = segments
        .iter()
        .flat_map(|s| &s.words)
        .any(|w| matches!(&w.zsh, Zsh::BraceClass(words) if words.is_empty()));
    if unread.is_none() && braced.commands.is_empty() && !unfollowed {
        return script;
    }
    let mut read = Script::clone(&script);
    read.found.extend(braced.commands);
    read.beyond_depth |= unfollowed;
    if let Some((why, span)) = unread {
        read.segments = Err(Opaque {
            why: format!("{why} (the agent's shell may be zsh)"),
            span,
        });
    }
    Rc::new(read)
}

/// `<x-y>` (either number optional): zsh's numeric file-name pattern,
/// read by bash as redirections (`cat <1-2>&2` is `cat` reading the file
/// `1-2` to bash; to zsh, `cat 1 2` sent to the background, then the
/// program `2`). Quoted or not: the text is not read for quotes here.
fn numeric_range(text: &str) -> Option<&'static str> {
    let bytes = text.as_bytes();
    let found = bytes.iter().enumerate().any(|(at, b)| {
        *b == b'<' && {
            let rest = &bytes[at + 1..];
            let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
            let first = digits(rest);
            rest.get(first) == Some(&b'-') && {
                let after = &rest[first + 1..];
                after.get(digits(after)) == Some(&b'>')
            }
        }
    });
    found.then_some("`<x-y>`, which zsh reads as a pattern matching numbered file names, not as redirections")
}
