//! git's arguments read again with the same tables, for the judge of what
//! they reach ([`super::reach`]): which options were given (by name, with
//! their values) and which words are operands. The grammar has already
//! accounted for every word; a word this reading cannot place is an error,
//! so the command is not covered.

use super::super::table::{Opt, Program, Takes};

/// A git command's words, placed.
pub(super) struct Words<'w> {
    /// The subcommand (`log`).
    pub sub: &'static Program,
    /// Each option given, with its value.
    pub options: Vec<(&'static Opt, Option<&'w str>)>,
    /// The operands before `--`: revisions or paths, as git decides.
    pub operands: Vec<&'w str>,
    /// The operands after `--`: paths.
    pub paths: Vec<&'w str>,
}

impl Words<'_> {
    /// Whether an option was given, named by its long name or its letter.
    pub fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(o, _)| named(o, name))
    }

    /// The values given to an option.
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |(o, _)| named(o, name))
            .filter_map(|(_, v)| *v)
    }
}

fn named(opt: &Opt, name: &str) -> bool {
    (!opt.long.is_empty() && opt.long == name) || (name.chars().count() == 1 && opt.short == name.chars().next())
}

/// Reads `argv` (the words after `git`) as `git` and its subcommand read
/// them.
pub(super) fn read<'w>(git: &'static Program, argv: &'w [String]) -> Result<Words<'w>, String> {
    // Every option git itself takes that the grammar covers is a flag.
    let at = argv.iter().position(|w| !w.starts_with('-')).ok_or("no subcommand")?;
    let name = &argv[at];
    let sub = git
        .subcommands
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("`git {name}` is not catalogued"))?;
    let mut words = Words {
        sub,
        options: Vec::new(),
        operands: Vec::new(),
        paths: Vec::new(),
    };
    let mut rest = argv[at + 1..].iter();
    while let Some(word) = rest.next() {
        if word == "--" {
            words.paths.extend(rest.by_ref().map(String::as_str));
            break;
        }
        if word == "-" || !word.starts_with('-') {
            words.operands.push(word);
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let opt = long_option(sub, name).ok_or_else(|| unplaced(word))?;
            let value = match (opt.takes, attached) {
                (Takes::Value(_), None) => Some(rest.next().ok_or_else(|| unplaced(word))?.as_str()),
                _ => attached,
            };
            words.options.push((opt, value));
            continue;
        }
        if sub.syntax.counts && word[1..].bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let letters = &word[1..];
        for (offset, letter) in letters.char_indices() {
            let opt = sub
                .options
                .iter()
                .find(|o| o.short == Some(letter))
                .ok_or_else(|| unplaced(word))?;
            let tail = &letters[offset + letter.len_utf8()..];
            match opt.takes {
                Takes::Nothing => words.options.push((opt, None)),
                Takes::Optional(_) | Takes::Value(_) if !tail.is_empty() => {
                    words.options.push((opt, Some(tail)));
                    break;
                }
                Takes::Optional(_) => words.options.push((opt, None)),
                Takes::Value(_) => {
                    let value = rest.next().ok_or_else(|| unplaced(word))?;
                    words.options.push((opt, Some(value)));
                }
            }
        }
    }
    Ok(words)
}

/// A long option by its name or, where the subcommand takes them, by an
/// unambiguous prefix.
fn long_option(sub: &'static Program, name: &str) -> Option<&'static Opt> {
    let named = sub.options.iter().filter(|o| !o.long.is_empty());
    if let Some(exact) = named.clone().find(|o| o.long == name) {
        return Some(exact);
    }
    if !sub.syntax.prefixes || name.is_empty() {
        return None;
    }
    let mut found = named.filter(|o| o.long.starts_with(name));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

fn unplaced(word: &str) -> String {
    format!("`{word}` cannot be placed among git's options")
}
