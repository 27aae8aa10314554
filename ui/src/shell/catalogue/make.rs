//! The short constructors and shorthands the family files write their
//! tables with.

use super::table::{Effect, Kind, Opt, Role, Takes};

const fn letter(short: &str) -> Option<char> {
    match short.as_bytes() {
        [b] => Some(*b as char),
        _ => None,
    }
}

/// A flag: short letter (`""` for none) and long name (`""` for none).
pub const fn flag(short: &str, long: &'static str) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes: Takes::Nothing,
        role: Role::Safe,
    }
}

/// An option taking a value of `kind`.
pub const fn value(short: &str, long: &'static str, kind: Kind) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes: Takes::Value(kind),
        role: Role::Safe,
    }
}

/// An option taking a value only when attached (`--color[=WHEN]`).
pub const fn optional(short: &str, long: &'static str, kind: Kind) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes: Takes::Optional(kind),
        role: Role::Safe,
    }
}

/// A flag with effects.
pub const fn effect(short: &str, long: &'static str, effects: &'static [Effect]) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes: Takes::Nothing,
        role: Role::Effect(effects),
    }
}

/// An option the program accepts that an allow never covers, taking
/// `takes`, with the reason.
pub const fn refused(short: &str, long: &'static str, takes: Takes, why: &'static str) -> Opt {
    Opt {
        short: letter(short),
        long,
        takes,
        role: Role::Refused(why),
    }
}

/// Shorthands for the tables.
pub const T: Kind = Kind::Text;
pub const P: Kind = Kind::Path;
pub const PAT: Kind = Kind::Pattern;
/// `--help` and `--version`, which every GNU program accepts.
pub const HELP: Opt = flag("", "help");
pub const VERSION: Opt = flag("", "version");
pub const WRITES: &str = "writes a file";
pub const RUNS: &str = "runs another program";
pub const READS_LISTED: &str = "reads files named in another file, which this command does not show";
