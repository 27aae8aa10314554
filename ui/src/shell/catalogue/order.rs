//! The words bash passes for a command's file-name patterns, and why the
//! order of a pattern's matches must not matter: bash sorts them by the
//! user's locale, which the catalogue cannot know.

use std::ops::Range;

use super::Word;
use super::grammar;
use super::table::Kind;

/// Where one file-name pattern's matches stand in an argv.
pub(super) struct Block<'w> {
    /// The pattern as written.
    pub word: &'w str,
    pub at: Range<usize>,
}

/// The words as bash passes them: each pattern replaced by its matches; one
/// that matches nothing passed as written, or (`nullglob`) dropped. With
/// the places of the patterns that matched more than one name.
pub(super) fn argv<'w>(
    words: &'w [Word],
    matches: &'w [Option<Vec<String>>],
    nullglob: bool,
) -> (Vec<&'w str>, Vec<Block<'w>>) {
    let mut argv = Vec::with_capacity(words.len());
    let mut blocks = Vec::new();
    for (word, matched) in words.iter().zip(matches) {
        match matched {
            Some(found) if !found.is_empty() || nullglob => {
                if found.len() > 1 {
                    blocks.push(Block {
                        word: &word.value,
                        at: argv.len()..argv.len() + found.len(),
                    });
                }
                argv.extend(found.iter().map(String::as_str));
            }
            _ => argv.push(word.value.as_str()),
        }
    }
    (argv, blocks)
}

fn role_name((kind, operand): (Kind, bool)) -> String {
    let kind = match kind {
        Kind::Path => "an input path".into(),
        Kind::Pattern => "a pattern".into(),
        Kind::Checked(check) => format!("a {}", check.name),
        _ => "text".into(),
    };
    if operand {
        format!("{kind} (an operand)")
    } else {
        format!("{kind} (an option's value)")
    }
}

/// A pattern's matches are passed in the order of the user's locale (bash
/// sorts them with `strcoll`; `z` before `Zlink` in `en_US.UTF-8`, after it
/// in `C`), which the catalogue cannot know. So which match lands in which
/// place must not matter: every match must be read as an operand, or every
/// one as an option's value, all of one same kind (all input paths, all
/// patterns …: a recursive read walks an operand path but only reads an
/// option's, `grep -r -f *`), each judged as that; any other order then puts each match in a place of that kind. A
/// match read as an option, a subcommand or a separator, or one that would
/// be read so wherever it stood (`-x`, find's `!` `(`), is refused.
pub(super) fn same_role(parsed: &grammar::Parsed<'_>, matches: &[&str], word: &str) -> Result<(), String> {
    let order = |m: &str| {
        format!(
            "`{word}` matches {} names, which bash passes in the order of the user's locale: `{m}`",
            matches.len()
        )
    };
    let role = |m: &str| {
        parsed
            .roles
            .iter()
            .find(|(value, ..)| std::ptr::eq(*value, m))
            .map(|(_, kind, operand)| (*kind, *operand))
    };
    let mut first: Option<(&str, (Kind, bool))> = None;
    for m in matches {
        if m.starts_with(['-', '+']) || matches!(*m, "!" | "(" | ")" | ",") {
            return Err(format!("{} could be read as an option or an operator", order(m)));
        }
        let Some(kind) = role(m) else {
            return Err(format!(
                "{} is read as no operand here, and another order would read it as one",
                order(m)
            ));
        };
        match first {
            None => first = Some((m, kind)),
            Some((_, seen)) if seen == kind => {}
            Some((earlier, seen)) => {
                return Err(format!(
                    "{} is read as {} and `{earlier}` as {}; another order would swap them",
                    order(m),
                    role_name(kind),
                    role_name(seen)
                ));
            }
        }
    }
    Ok(())
}
