//! A wrapper's own options, read with getopt's rules, to find where the
//! command it runs starts (`sudo --user root rm`, `stdbuf --output L rm`,
//! `timeout -k1 5 rm`). Every wrapper here stops at its first operand (the
//! `+` of its getopt string), as the real programs do. Where a word could
//! be read two ways (an option this table does not know, which may take a
//! value), both readings are kept: a deny sees either command.

/// How one wrapper reads its options.
pub(super) struct Spec {
    /// Short options taking a value (`-u root`, `-uroot`).
    pub short_values: &'static str,
    /// Short options whose value may only be attached (`-i[R]` of xargs).
    pub short_attached: &'static str,
    /// Short options without a value.
    pub short_flags: &'static str,
    /// Long options taking a value (`--user root`, `--user=root`).
    pub long_values: &'static [&'static str],
    /// Long options without one (or with an optional `=value`).
    pub long_flags: &'static [&'static str],
    /// `-5` is an option (nice's old adjustment).
    pub numeric: bool,
    /// A lone `-` is an option (env's `-i`).
    pub dash: bool,
    /// `NAME=value` words may come before the command (env, sudo).
    pub assignments: bool,
    /// Operands before the command (timeout's duration, chroot's root).
    pub operands: usize,
    /// The option whose value is a command line to split (env's `-S`).
    pub split: Option<(char, &'static str)>,
}

impl Spec {
    pub const NONE: Spec = Spec {
        short_values: "",
        short_attached: "",
        short_flags: "",
        long_values: &[],
        long_flags: &["help", "version"],
        numeric: false,
        dash: false,
        assignments: false,
        operands: 0,
        split: None,
    };
}

/// Where a wrapper's command may start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Start {
    /// At this word.
    At(usize),
    /// The wrapper splits this text into its own arguments, followed by
    /// the words from this one on (`env -S 'rm -rf x' y`).
    Split(String, usize),
}

/// How many ambiguous words are read both ways before the rest is read
/// one way only.
const FORKS: usize = 4;

/// Where the command after the wrapper's options may start.
pub(super) fn starts(words: &[String], spec: &Spec) -> Vec<Start> {
    let mut out = Vec::new();
    read(words, spec, 0, FORKS, &mut out);
    out.dedup();
    out
}

fn read(words: &[String], spec: &Spec, mut i: usize, forks: usize, out: &mut Vec<Start>) {
    while let Some(word) = words.get(i) {
        if word == "--" {
            out.push(Start::At(i + 1 + spec.operands));
            return;
        }
        if word == "-" && spec.dash {
            i += 1;
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            match resolve(name, spec) {
                Some((full, takes)) => {
                    if let Some((_, split)) = spec.split
                        && full == split
                    {
                        match value.or_else(|| words.get(i + 1).map(String::as_str)) {
                            Some(text) => {
                                let rest = if value.is_some() { i + 1 } else { i + 2 };
                                out.push(Start::Split(text.to_owned(), rest));
                            }
                            None => out.push(Start::At(i + 1)),
                        }
                        return;
                    }
                    i += if takes && value.is_none() { 2 } else { 1 };
                }
                None => {
                    // Unknown or ambiguous: it may or may not take the next word.
                    if forks > 0 && value.is_none() {
                        read(words, spec, i + 2, forks - 1, out);
                    }
                    i += 1;
                }
            }
            continue;
        }
        if word.len() > 1 && word.starts_with('-') {
            match cluster(word, spec) {
                Cluster::Flags => i += 1,
                Cluster::Value => i += 2,
                Cluster::Split(Some(text)) => {
                    out.push(Start::Split(text, i + 1));
                    return;
                }
                Cluster::Split(None) => {
                    match words.get(i + 1) {
                        Some(text) => out.push(Start::Split(text.clone(), i + 2)),
                        None => out.push(Start::At(i + 1)),
                    }
                    return;
                }
                Cluster::Unknown => {
                    if forks > 0 {
                        read(words, spec, i + 2, forks - 1, out);
                    }
                    i += 1;
                }
            }
            continue;
        }
        if spec.assignments && is_assignment(word) {
            i += 1;
            continue;
        }
        break;
    }
    out.push(Start::At(i + spec.operands));
}

enum Cluster {
    /// Flags only, or an option with its value attached.
    Flags,
    /// Its last option takes the next word.
    Value,
    /// The split option, with its value attached or in the next word.
    Split(Option<String>),
    /// A letter the table does not know.
    Unknown,
}

fn cluster(word: &str, spec: &Spec) -> Cluster {
    let letters = &word[1..];
    if spec.numeric && letters.starts_with(|c: char| c.is_ascii_digit()) {
        return Cluster::Flags;
    }
    for (at, c) in letters.char_indices() {
        let attached = &letters[at + c.len_utf8()..];
        if spec.split.is_some_and(|(short, _)| short == c) {
            return Cluster::Split((!attached.is_empty()).then(|| attached.to_owned()));
        }
        if spec.short_values.contains(c) {
            return if attached.is_empty() {
                Cluster::Value
            } else {
                Cluster::Flags
            };
        }
        if spec.short_attached.contains(c) {
            return Cluster::Flags;
        }
        if !spec.short_flags.contains(c) {
            return Cluster::Unknown;
        }
    }
    Cluster::Flags
}

/// A long option's full name and whether it takes a value: the name
/// itself, or the one option it is an unambiguous prefix of (getopt_long).
fn resolve(name: &str, spec: &Spec) -> Option<(&'static str, bool)> {
    let all = || {
        spec.long_values
            .iter()
            .map(|n| (*n, true))
            .chain(spec.long_flags.iter().map(|n| (*n, false)))
    };
    if let Some(exact) = all().find(|(n, _)| *n == name) {
        return Some(exact);
    }
    if name.is_empty() {
        return None;
    }
    let mut matches = all().filter(|(n, _)| n.starts_with(name));
    match (matches.next(), matches.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// `NAME=value`, as `env` and `sudo` take before the command.
pub(super) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}
