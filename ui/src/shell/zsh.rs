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

use super::{Opaque, Script, Zsh};

/// `script` (read as bash reads it) as either bash or zsh may run it.
pub(super) fn also(script: Rc<Script>) -> Rc<Script> {
    let Ok(segments) = &script.segments else {
        return script;
    };
    let unread = segments.iter().find_map(|segment| {
        segment.words.iter().find_map(|word| match &word.zsh {
            Zsh::Unread(why) => Some((*why, segment.span.clone())),
            _ => None,
        })
    });
    let Some((why, span)) = unread else {
        return script;
    };
    let mut read = Script::clone(&script);
    read.segments = Err(Opaque {
        why: format!("{why} (the agent's shell may be zsh)"),
        span,
    });
    Rc::new(read)
}
