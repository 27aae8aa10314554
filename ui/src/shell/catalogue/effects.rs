//! What reading a command's words gathers besides its paths: the notes
//! `tether explain` shows, and what the options given add up to.

use super::Note;
use super::table::Effect;

/// Where the words' readings go: nowhere when deciding a call (nothing is
/// formatted on the hot path), a list for `tether explain`.
pub(super) struct Notes(Option<Vec<Note>>);

impl Notes {
    pub(super) fn off() -> Self {
        Self(None)
    }

    pub(super) fn on() -> Self {
        Self(Some(Vec::new()))
    }

    pub(super) fn note(&mut self, word: &str, read_as: impl FnOnce() -> String) {
        if let Some(notes) = &mut self.0 {
            notes.push(Note {
                word: word.to_owned(),
                read_as: read_as(),
            });
        }
    }

    pub(super) fn into_vec(self) -> Vec<Note> {
        self.0.unwrap_or_default()
    }
}

/// What the effects of the options given add up to.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Effects {
    pub recurses: bool,
    pub follows_links: bool,
    pub sees_all: bool,
    pub sees_hidden: bool,
    pub gives_pattern: bool,
    pub operands_are_patterns: bool,
    pub filters_unread: bool,
}

impl Effects {
    pub(super) fn add(&mut self, effects: &[Effect]) {
        for effect in effects {
            match effect {
                Effect::Recurses => self.recurses = true,
                Effect::FollowsLinks => self.follows_links = true,
                Effect::SeesAll => self.sees_all = true,
                Effect::SeesHidden => self.sees_hidden = true,
                Effect::GivesPattern => self.gives_pattern = true,
                Effect::OperandsArePatterns => self.operands_are_patterns = true,
                Effect::FiltersUnread => self.filters_unread = true,
            }
        }
    }
}
