//! The catalogue as docs/policy.md lists it, made from the same tables the
//! matcher reads, so the list users read is the list the code enforces.

use std::fmt::Write;

use super::table::{Filter, Kind, Opt, Program, Reads, Role, Takes, Walk};

/// The markdown list of every program, its options and operands.
pub fn markdown() -> String {
    let mut out = String::new();
    for program in super::programs() {
        if program.subcommands.is_empty() {
            entry(&mut out, program.name, program);
        } else {
            for sub in program.subcommands {
                entry(&mut out, &format!("{} {}", program.name, sub.name), sub);
            }
            let own: Vec<String> = program
                .options
                .iter()
                .filter(|o| safe(o))
                .map(|o| shown(program, o))
                .collect();
            let _ = writeln!(
                out,
                "- before any of them, `{}` itself takes {}; refused: {}.",
                program.name,
                own.join(", "),
                refused(program).join(", ")
            );
        }
    }
    out
}

pub(super) fn entry(out: &mut String, name: &str, program: &Program) {
    let operands = operands(program);
    let reads = match (program.reads, program.recurses, program.walk) {
        (Reads::Names, true, _) => " Descends into directories, listing names only.",
        (Reads::Contents, true, Walk::Ignoring) => {
            " Descends into directories as ripgrep does (no hidden or ignored files): covered only when nothing it reaches is a secret."
        }
        (Reads::Contents, true, _) => " Descends into directories: covered only when nothing it reaches is a secret.",
        _ => "",
    };
    let options: Vec<String> = program
        .options
        .iter()
        .filter(|o| safe(o))
        .map(|o| shown(program, o))
        .collect();
    let _ = write!(out, "- **`{name}`** — {}.{reads} Operands: {operands}.", program.about);
    if !program.requires.is_empty() {
        let _ = write!(
            out,
            " Needs {}.",
            program
                .requires
                .iter()
                .map(|r| format!("`-{r}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        );
    }
    if !options.is_empty() {
        let _ = write!(out, " Options: {}.", options.join(", "));
    }
    let refused = refused(program);
    if !refused.is_empty() {
        let _ = write!(out, " Refused: {}.", refused.join(", "));
    }
    out.push('\n');
}

fn safe(opt: &Opt) -> bool {
    !matches!(opt.role, Role::Refused(_))
}

fn refused(program: &Program) -> Vec<String> {
    program
        .options
        .iter()
        .filter_map(|o| match o.role {
            Role::Refused(why) => Some(format!("{} ({why})", shown(program, o))),
            _ => None,
        })
        .collect()
}

fn shown(program: &Program, opt: &Opt) -> String {
    let value = match opt.takes {
        Takes::Nothing => String::new(),
        Takes::Value(kind) => format!(" {}", kind_name(kind)),
        Takes::Optional(kind) => format!("[={}]", kind_name(kind)),
    };
    format!("`{}{value}`", opt.shown(program.syntax))
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Path => "PATH",
        Kind::Meta => "PATH (metadata only)",
        Kind::Pattern => "PATTERN",
        Kind::Choice(_) => "WORD",
        Kind::Prefixed(_) | Kind::Text | Kind::TextBut(..) => "TEXT",
        Kind::Filter(Filter::Type | Filter::TypeNot | Filter::TypeClear) => "TYPE",
        Kind::Filter(Filter::TypeAdd) => "TYPE:GLOB",
        Kind::Filter(Filter::Glob | Filter::IGlob) => "GLOB",
        Kind::Filter(Filter::GrepInclude | Filter::GrepExclude | Filter::GrepExcludeDir) => "GLOB",
        Kind::Checked(check) => check.name,
    }
}

fn operands(program: &Program) -> String {
    if program.syntax.none && program.operands.rest == Some(Kind::Text) {
        return "any words (text)".into();
    }
    let mut parts: Vec<String> = program.operands.leading.iter().map(|k| operand(*k, false)).collect();
    match program.operands.rest {
        Some(kind) => parts.push(format!("any number of {}", operand(kind, true))),
        None if parts.is_empty() => return "none".into(),
        None => {}
    }
    parts.join(", then ")
}

fn operand(kind: Kind, many: bool) -> String {
    let (one, more) = match kind {
        Kind::Path => ("an input path", "input paths"),
        Kind::Meta => ("a path (its metadata only)", "paths (their metadata only)"),
        Kind::Pattern => ("a pattern", "patterns"),
        Kind::Choice(_) | Kind::Text | Kind::Filter(_) => ("a word", "words"),
        Kind::Prefixed(prefix) => return format!("`{prefix}TEXT`"),
        Kind::Checked(check) => return format!("a {} (checked)", check.name),
        Kind::TextBut(refused, why) => {
            let refused: Vec<String> = refused.iter().map(|w| format!("`{w}`")).collect();
            let words = if many { "words" } else { "a word" };
            return format!("{words} but {} (it {why})", refused.join(", "));
        }
    };
    if many { more } else { one }.to_owned()
}
