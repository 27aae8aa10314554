//! Named sets of commands a rule's `command` may hold besides patterns:
//! `@read-only` (the catalogue) and `@secret` (the one secret list).

use std::path::Path;

use super::dirs::Place;
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
            CommandSet::Secret => match catalogue::names_secret_in(segment, cwd, project) {
                Some(_) => Ok(()),
                None => Err("no word of it names a secret".into()),
            },
        }
    }

    /// Whether the set holds one segment of a plain script where it runs
    /// (`place`: where an earlier `cd` left it, `None` when no segment is
    /// a `cd`; see [`names_secret_at`]), for a deny or ask.
    pub(super) fn holds_placed(self, segment: &Segment, place: Option<&Place>, project: Option<&Path>) -> bool {
        match (self, place) {
            (CommandSet::Secret, _) => names_secret_at(segment, place, project).is_some(),
            (CommandSet::ReadOnly, None | Some(Place::Cd)) => self.covers_in(segment, project, project).is_ok(),
            (CommandSet::ReadOnly, Some(Place::In(dirs))) => dirs
                .iter()
                .any(|dir| self.covers_in(segment, Some(dir), project).is_ok()),
            (CommandSet::ReadOnly, Some(Place::Unknown(_))) => false,
        }
    }

    /// Whether the set holds a command found anywhere in a script (its
    /// words as written: any that could be a file-name pattern is one; a
    /// word no pattern can be made of, such as `[` or `[[:space:]]`, is
    /// one bash passes as written), judged from `cwd`.
    /// A found command that is one of the script's plain segments is
    /// judged as that segment where it runs, whose words know their
    /// quoting (`-name '*.rs'` holds no pattern): by
    /// [`CommandSet::holds_placed`], not here.
    pub(super) fn holds_for_found(self, words: &[String], plain: Option<&[Segment]>, cwd: Option<&Path>) -> bool {
        let segment = plain.and_then(|segments| {
            segments
                .iter()
                .find(|s| s.words.len() == words.len() && s.words.iter().zip(words).all(|(w, v)| w.value == *v))
        });
        if segment.is_some() {
            return false;
        }
        let pattern = |w: &String| w.contains(['*', '?', '[']) && globset::Glob::new(w).is_ok();
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

/// Why `@secret` holds one segment of a plain script where it runs
/// (`place`, as [`super::places`] gives it; `None`: where the agent works,
/// `project`), if it does: a word read from there names a secret (see
/// [`catalogue::names_secret_in`]). Where an earlier `cd` left it is not
/// known, any segment with a word or an input besides its program: from a
/// directory nobody knows, any name may be a secret.
pub fn names_secret_at(segment: &Segment, place: Option<&Place>, project: Option<&Path>) -> Option<&'static str> {
    match place {
        None | Some(Place::Cd) => catalogue::names_secret_in(segment, project, project),
        Some(Place::In(dirs)) => dirs
            .iter()
            .find_map(|dir| catalogue::names_secret_in(segment, Some(dir), project)),
        Some(Place::Unknown(_)) => (segment.words.len() > 1 || !segment.inputs.is_empty())
            .then_some("it runs where an earlier `cd` left it, which is not known: any name may be a secret there"),
    }
}
