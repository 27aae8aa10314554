//! A rule's `command` condition and how it matches a script: every
//! segment to allow (judged where an earlier `cd` left it), any command
//! found to deny or ask.

use std::path::Path;

use super::dirs::{self, Place};
use super::pattern::Pattern;
use super::sets::CommandSet;
use super::{Script, Segment, catalogue};
use crate::paths;

/// How a rule reads a script: an allow must cover all of it, a deny or an
/// ask needs only one command anywhere in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polarity {
    /// Every segment of a plain script must match (pre-execute `allow`,
    /// post-execute `accept`).
    Every,
    /// Any command found anywhere matches (`deny`, `ask`, a guard's `veto`
    /// and every other action).
    Any,
}

/// A rule's `command` condition: its patterns, the argument words that put
/// a command outside it (`command_except`), and the directories every path
/// argument must stay in (`command_paths_within`).
#[derive(Clone, Debug)]
pub struct CommandMatch {
    pub patterns: Vec<Pattern>,
    /// Named sets of commands (`@read-only`, `@secret`).
    pub sets: Vec<CommandSet>,
    pub except: Vec<Pattern>,
    pub within: Vec<String>,
    pub polarity: Polarity,
}

impl CommandMatch {
    /// Why the script does not meet the condition, or `None` when it does.
    /// `None` for `script` means the call holds no command where the tool
    /// keeps it.
    pub fn mismatch(&self, script: Option<&Script>, cwd: Option<&Path>) -> Option<String> {
        let Some(script) = script else {
            return Some("the call holds no shell command".into());
        };
        match self.polarity {
            Polarity::Every => {
                let segments = match &script.segments {
                    Ok(segments) => segments,
                    Err(opaque) => return Some(format!("the command is not plain: it holds {}", opaque.why)),
                };
                if segments.is_empty() {
                    return Some("the command is empty".into());
                }
                match dirs::places(segments, cwd) {
                    None => segments.iter().find_map(|s| self.segment_mismatch(s, cwd)),
                    Some(places) => segments
                        .iter()
                        .zip(&places)
                        .find_map(|(s, place)| self.placed_mismatch(s, place, cwd)),
                }
            }
            Polarity::Any => (!self.any_hit(script, cwd)).then(|| {
                format!(
                    "no command in it matches {}",
                    self.patterns
                        .iter()
                        .map(|p| format!("{:?}", p.text()))
                        .chain(self.sets.iter().map(|s| format!("{:?}", s.name())))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
        }
    }

    /// Whether the script meets the condition: [`CommandMatch::mismatch`]
    /// is `None`, without putting why not in words (asked of every rule at
    /// every call; most deny and ask rules miss most commands).
    pub fn holds(&self, script: Option<&Script>, cwd: Option<&Path>) -> bool {
        let Some(script) = script else {
            return false;
        };
        match self.polarity {
            Polarity::Every => match &script.segments {
                Ok(segments) => match dirs::places(segments, cwd) {
                    None => !segments.is_empty() && segments.iter().all(|s| self.segment_holds(s, cwd, cwd)),
                    Some(places) => segments
                        .iter()
                        .zip(&places)
                        .all(|(s, place)| self.placed_mismatch(s, place, cwd).is_none()),
                },
                Err(_) => false,
            },
            Polarity::Any => self.any_hit(script, cwd),
        }
    }

    /// Whether any command found in the script matches. Text nested past
    /// the depth limit was not read: it may run anything, so every deny and
    /// ask rule matches it.
    fn any_hit(&self, script: &Script, cwd: Option<&Path>) -> bool {
        script.beyond_depth
            || self.sets.contains(&CommandSet::Secret) && script.reads.iter().any(|f| crate::secrets::why(f).is_some())
            || script
                .segments
                .as_ref()
                .is_ok_and(|segments| self.placed_hit(segments, cwd))
            || script.found.iter().any(|words| {
                let unknown = words.first().is_some_and(|p| catalogue::program(p).is_none());
                (self
                    .patterns
                    .iter()
                    .any(|p| p.matches_found(words) || unknown && p.matches_behind(words))
                    || self
                        .sets
                        .iter()
                        .any(|set| set.holds_for_found(words, script.segments.as_deref().ok(), cwd)))
                    && !self.excepted(words)
                    && self.paths_within(words, cwd)
            })
    }

    /// Whether a set holds a segment of a plain script judged where it
    /// runs (after a `cd`: `cd .git && cat config` reads `.git/config`),
    /// its standard input's file too, which the commands found do not
    /// show.
    fn placed_hit(&self, segments: &[Segment], cwd: Option<&Path>) -> bool {
        if self.sets.is_empty() {
            return false;
        }
        let places = dirs::places(segments, cwd);
        segments.iter().enumerate().any(|(k, segment)| {
            let place = places.as_ref().and_then(|p| p.get(k));
            self.sets.iter().any(|set| set.holds_placed(segment, place, cwd)) && {
                let values = segment.values();
                !self.excepted(&values) && self.paths_within(&values, cwd)
            }
        })
    }

    /// Why one segment is not covered where an earlier `cd` may have left
    /// it, the project still `project` (see [`dirs`]).
    fn placed_mismatch(&self, segment: &Segment, place: &Place, project: Option<&Path>) -> Option<String> {
        match place {
            // A `cd` only changes the directory: what runs after it is
            // judged from there.
            Place::Cd if self.sets.contains(&CommandSet::ReadOnly) => None,
            Place::Cd => self.segment_mismatch(segment, project),
            // Only a rule that judges paths cares where a command runs.
            Place::Unknown(_) if self.sets.is_empty() && self.within.is_empty() => {
                self.segment_mismatch(segment, project)
            }
            Place::Unknown(why) => Some(format!("`{}` runs {why}", super::join(&segment.values()))),
            Place::In(dirs) => dirs.iter().find_map(|dir| {
                self.segment_mismatch_at(segment, Some(dir), project)
                    .map(|why| format!("{why} (run in {})", dir.display()))
            }),
        }
    }

    /// Whether one segment is covered: [`CommandMatch::segment_mismatch`]
    /// is `None`, without words; run in `cwd`, its paths kept inside
    /// `project`.
    fn segment_holds(&self, segment: &Segment, cwd: Option<&Path>, project: Option<&Path>) -> bool {
        let covered = !segment.here
            && segment.inputs.is_empty()
            && self.patterns.iter().any(|p| p.matches_segment(&segment.words))
            || self.sets.iter().any(|set| set.covers_in(segment, cwd, project).is_ok());
        if !covered {
            return false;
        }
        if self.except.is_empty() && self.within.is_empty() {
            return true;
        }
        // zsh with BRACE_CCL may pass other words (`x@{1}` is `x@1`).
        std::iter::once(segment.values())
            .chain(segment.brace_ccl_values())
            .all(|values| self.excepted_word(&values).is_none() && self.paths_within_from(&values, cwd, project))
    }

    /// Why one segment is not covered, naming it.
    pub fn segment_mismatch(&self, segment: &Segment, cwd: Option<&Path>) -> Option<String> {
        self.segment_mismatch_at(segment, cwd, cwd)
    }

    /// [`CommandMatch::segment_mismatch`] run in `cwd`, its paths kept
    /// inside `project`.
    fn segment_mismatch_at(&self, segment: &Segment, cwd: Option<&Path>, project: Option<&Path>) -> Option<String> {
        // Worded only when the segment is not covered: a covered one (most
        // segments, on every call) costs no formatting.
        let shown = || super::join(&segment.values());
        // Here-document data and a file redirected to standard input are
        // read by the program as it likes (a shell runs them): only the
        // catalogue, which knows each program and judges the file, covers
        // them.
        let by_pattern = !segment.here
            && segment.inputs.is_empty()
            && self.patterns.iter().any(|p| p.matches_segment(&segment.words));
        if !by_pattern {
            let mut refused = None;
            let by_set = self.sets.iter().any(|set| match set.covers_in(segment, cwd, project) {
                Ok(()) => true,
                Err(why) => {
                    refused.get_or_insert(why);
                    false
                }
            });
            if !by_set {
                let shown = shown();
                return Some(match refused {
                    None => format!("`{shown}` matches none of its patterns"),
                    Some(why) if self.patterns.is_empty() => format!("`{shown}`: {why}"),
                    Some(why) => format!("`{shown}` matches none of its patterns, and {why}"),
                });
            }
        }
        if self.except.is_empty() && self.within.is_empty() {
            return None;
        }
        // zsh with BRACE_CCL may pass other words (`x@{1}` is `x@1`).
        for values in std::iter::once(segment.values()).chain(segment.brace_ccl_values()) {
            if let Some(word) = self.excepted_word(&values) {
                return Some(format!("`{}` holds {word:?}, which the rule excepts", shown()));
            }
            if !self.paths_within_from(&values, cwd, project) {
                return Some(format!("`{}` names a path outside {}", shown(), self.within.join(", ")));
            }
        }
        None
    }

    fn excepted(&self, words: &[String]) -> bool {
        self.excepted_word(words).is_some()
    }

    fn excepted_word<'w>(&self, words: &'w [String]) -> Option<&'w str> {
        words
            .iter()
            .skip(1)
            .find(|w| self.except.iter().any(|e| e.matches_found(std::slice::from_ref(*w))))
            .map(String::as_str)
    }

    fn paths_within(&self, words: &[String], cwd: Option<&Path>) -> bool {
        self.paths_within_from(words, cwd, cwd)
    }

    /// Whether every path a word may name, resolved from `cwd`, is inside
    /// the rule's directories (`"cwd"` being `project`).
    fn paths_within_from(&self, words: &[String], cwd: Option<&Path>, project: Option<&Path>) -> bool {
        if self.within.is_empty() {
            return true;
        }
        let roots = paths::resolve_roots(&self.within, project);
        words
            .iter()
            .skip(1)
            .filter_map(|w| path_candidates(w))
            .all(|p| paths::within_resolved(p, &roots, cwd))
    }
}

/// The parts of an argument word that may name a file: the word itself, or
/// for an option, its value (`--file=/etc/x`, `-f/etc/x`).
fn path_candidates(word: &str) -> Option<&str> {
    if let Some(option) = word.strip_prefix('-') {
        if let Some((_, value)) = option.split_once('=') {
            return Some(value);
        }
        return option.find(['/', '~']).map(|at| &option[at..]);
    }
    Some(word)
}
