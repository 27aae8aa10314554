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

/// What a pattern's matches must be judged as besides the role each has
/// in the order judged ([`same_role`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Elsewhere<'w> {
    /// Matches read here as patterns that another order reads as input
    /// paths.
    pub paths: Vec<&'w str>,
    /// Matches not walked here that another order makes a recursive read's
    /// start (an operand path).
    pub starts: Vec<&'w str>,
}

/// A pattern's matches are passed in the order of the user's locale (bash
/// and zsh sort them with `strcoll`; `z` before `Zlink` in `en_US.UTF-8`,
/// after it in `C`), which the catalogue cannot know. So which match lands
/// in which place must not matter.
///
/// Where every match is read in the same role (all operands or all
/// option values, all of one kind), any other order puts each match in a
/// place of that same kind, judged as that. Where the roles are mixed, as
/// unquoted `grep ^fn src/main.rs` is under zsh's `EXTENDED_GLOB` (`^fn`
/// is every other name of the directory: the first is grep's pattern, the
/// rest its files), the command is still safe in every order when every
/// match is safe in every place it could land in, which holds when:
/// - the places are patterns and input paths only (operands or option
///   values: `grep -e ^x`, `grep -f ^x`), since any text is an acceptable
///   pattern, and every match is judged as an input path exactly as one is
///   (inside the project, links resolved, no secret) when any place reads
///   a path ([`Elsewhere::paths`]);
/// - where a place is an operand path, every match is also walked as a
///   recursive read's start when the read recurses: `grep -r` and `rg`
///   walk an operand, and only read an option's value (`grep -r -f ^x
///   src`: another order walks the match `-f` read) ([`Elsewhere::starts`]);
/// - which place a word takes does not depend on the word: no match could
///   be read as an option or an operator (`-x`, `+x`, `--`, find's `!`
///   `(`, refused wherever it stands), and the program has no judge of
///   its own, which reads words beyond their places (git takes an operand
///   naming a file as a path and any other as a revision: mixed places
///   stay refused there);
/// - the places a block spans are taken by its matches alone: each is an
///   operand or an option's value already (a subcommand's name or an
///   option's place is refused).
///
/// Bash's own readings never mix here (bash passes `^fn` as written);
/// the words after and before the block keep their places in every order.
pub(super) fn same_role<'w>(
    parsed: &grammar::Parsed<'w>,
    matches: &[&'w str],
    word: &str,
    own_judge: bool,
) -> Result<Elsewhere<'w>, String> {
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
    let mut roles: Vec<(&'w str, (Kind, bool))> = Vec::with_capacity(matches.len());
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
        roles.push((m, kind));
    }
    let Some(&(first, seen)) = roles.first() else {
        return Ok(Elsewhere::default());
    };
    let Some(&(other, kind)) = roles.iter().find(|(_, kind)| *kind != seen) else {
        return Ok(Elsewhere::default());
    };
    let either = |(kind, _): (Kind, bool)| matches!(kind, Kind::Pattern | Kind::Path);
    if own_judge || !roles.iter().all(|(_, kind)| either(*kind)) {
        return Err(format!(
            "{} is read as {} and `{first}` as {}; another order would swap them",
            order(other),
            role_name(kind),
            role_name(seen)
        ));
    }
    let reads = roles.iter().any(|(_, (kind, _))| *kind == Kind::Path);
    let walks = roles.iter().any(|(_, role)| *role == (Kind::Path, true));
    Ok(Elsewhere {
        paths: roles
            .iter()
            .filter(|(_, (kind, _))| reads && *kind != Kind::Path)
            .map(|(m, _)| *m)
            .collect(),
        starts: roles
            .iter()
            .filter(|(_, role)| walks && *role != (Kind::Path, true))
            .map(|(m, _)| *m)
            .collect(),
    })
}
