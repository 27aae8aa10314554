//! Named sets of commands a rule's `command` may hold besides patterns:
//! `@read-only` (the catalogue) and `@secret` (the one secret list).

use std::path::Path;

use super::{Segment, Word, catalogue};

/// A named set of commands a rule's `command` may hold besides patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandSet {
    /// `@read-only`: every word read by the catalogue's grammar.
    ReadOnly,
    /// `@secret`: a word that names a secret (the one list).
    Secret,
}

impl CommandSet {
    /// Every set, as a policy writes it.
    pub const ALL: [CommandSet; 2] = [CommandSet::ReadOnly, CommandSet::Secret];

    /// The name a policy writes.
    pub fn name(self) -> &'static str {
        match self {
            CommandSet::ReadOnly => "@read-only",
            CommandSet::Secret => "@secret",
        }
    }

    /// The set a policy's word names.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether the set holds one plain command, or why not.
    pub fn covers(self, segment: &Segment, cwd: Option<&Path>) -> Result<(), String> {
        self.covers_in(segment, cwd, cwd)
    }

    /// [`CommandSet::covers`] for a segment run in `cwd` (where an earlier
    /// `cd` left it) whose paths must stay inside `project`.
    pub fn covers_in(self, segment: &Segment, cwd: Option<&Path>, project: Option<&Path>) -> Result<(), String> {
        match self {
            CommandSet::ReadOnly => catalogue::covers_in(segment, cwd, project),
            CommandSet::Secret => match catalogue::names_secret(segment, cwd) {
                Some(_) => Ok(()),
                None => Err("no word of it names a secret".into()),
            },
        }
    }

    /// Whether the set holds a plain script for what its segments read
    /// besides their words: `@secret` a segment whose standard input is
    /// redirected from a secret (`cat < .env`), which the commands found
    /// for deny and ask rules do not show.
    pub(super) fn holds_for_inputs(self, segments: &[Segment]) -> bool {
        self == CommandSet::Secret
            && segments
                .iter()
                .flat_map(|s| &s.inputs)
                .any(|w| crate::secrets::why(&w.value).is_some())
    }

    /// Whether the set holds a command found anywhere in a script (its
    /// words as written: any that could be a file-name pattern is one; a
    /// word no pattern can be made of, such as `[` or `[[:space:]]`, is
    /// one bash passes as written).
    /// A found command that is one of the script's plain segments is
    /// judged as that segment, whose words know their quoting (`-name
    /// '*.rs'` holds no pattern).
    pub(super) fn holds_for_found(self, words: &[String], plain: Option<&[Segment]>, cwd: Option<&Path>) -> bool {
        let segment = plain.and_then(|segments| {
            segments
                .iter()
                .find(|s| s.words.len() == words.len() && s.words.iter().zip(words).all(|(w, v)| w.value == *v))
        });
        if let Some(segment) = segment {
            return self.covers(segment, cwd).is_ok();
        }
        let pattern = |w: &String| w.contains(['*', '?', '[']) && globset::Glob::new(w).is_ok();
        match self {
            CommandSet::Secret => catalogue::names_secret_in(
                words.iter().map(|w| (w.as_str(), pattern(w).then_some(w.as_str()))),
                cwd,
            )
            .is_some(),
            CommandSet::ReadOnly => {
                let words = words
                    .iter()
                    .map(|w| {
                        let glob = pattern(w);
                        Word {
                            value: w.clone(),
                            glob,
                            pattern: glob.then(|| w.clone()),
                            zsh: super::Zsh::Same,
                        }
                    })
                    .collect();
                let segment = Segment::of(words, 0..0);
                self.covers(&segment, cwd).is_ok()
            }
        }
    }
}
