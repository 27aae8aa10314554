//! Which implementation of a program `PATH` finds. The grammars are GNU's
//! (coreutils, grep, sed, findutils, diffutils) and util-linux's; macOS
//! ships FreeBSD's tools under the same names, where `sed -l` is a flag
//! (GNU's takes a value) and options end at the first operand, and busybox
//! or uutils read options their own way too. So a program whose grammar
//! is GNU's is covered only where the one `PATH` finds says it is GNU's:
//! asked once per console process, `NAME --version` run with nothing of
//! the console's environment but `PATH`, from `/`, no input, for at most
//! two seconds. The console's environment is the user's, which the
//! agent's shell inherits.
//!
//! On macOS a name is read with macOS's own grammar (`bsd/`) only on
//! positive evidence: the program `PATH` finds is `/bin/NAME` or
//! `/usr/bin/NAME` (system paths that System Integrity Protection keeps
//! anyone from replacing), and it answers `--version` exactly as Apple's
//! does. A BSD-looking program anywhere else, busybox and uutils stay not
//! covered. [`decide`] is a pure function of what was seen, so tests on
//! any system can drive it.

mod probe;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

pub(crate) use probe::Answer;
use probe::version;

use super::super::bsd::{self, Parser, Probe};
use super::super::table::Program;

/// Whose option parser a catalogued program's grammar describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A bash builtin: bash reads its options, and stops at the first
    /// operand (`command rm x -v` runs `rm x -v`).
    Builtin,
    /// A program of a GNU package (`ls (GNU coreutils) 9.1`).
    Gnu(&'static str),
    /// A util-linux program (`column from util-linux 2.38.1`).
    UtilLinux,
    /// One implementation everywhere, reading options with the C
    /// library's `getopt_long` or `argp` (file, man): options follow
    /// operands unless `POSIXLY_CORRECT` is set.
    Getopt,
    /// One implementation everywhere, with a parser of its own that
    /// `POSIXLY_CORRECT` does not change (git, ripgrep, fd, tree, jq), or
    /// whose every word is a name either way (which, whereis).
    Own,
    /// macOS's own program (`bsd/`), read by Apple Libc's parser.
    Bsd(Parser),
}

/// The system the console runs on, as far as the choice of grammar goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Os {
    MacOs,
    Other,
}

impl Os {
    fn current() -> Self {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else {
            Os::Other
        }
    }
}

/// Which grammar reads a catalogued name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Userland {
    /// The catalogue's own (GNU's, util-linux's, or the one
    /// implementation there is).
    Catalogued,
    /// macOS's own program, read with its grammar in `bsd/`.
    MacOs,
}

/// The origin of a catalogued program's grammar; `None` for a name the
/// table does not know, which is then not covered.
pub(crate) fn origin(name: &str) -> Option<Origin> {
    Some(match name {
        "echo" | "printf" | "pwd" | "true" | "false" | "test" | "[" | "type" | "command" | "hash" => Origin::Builtin,
        "ls" | "cat" | "head" | "tail" | "wc" | "sort" | "uniq" | "cut" | "nl" | "stat" | "du" | "df" | "basename"
        | "dirname" | "realpath" | "tr" | "tac" | "paste" | "comm" | "fold" | "base64" | "od" | "md5sum"
        | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "readlink" | "nproc" | "seq" | "date"
        | "whoami" | "id" | "uname" => Origin::Gnu("coreutils"),
        "grep" => Origin::Gnu("grep"),
        "sed" => Origin::Gnu("sed"),
        "find" => Origin::Gnu("findutils"),
        "diff" | "cmp" => Origin::Gnu("diffutils"),
        "column" | "rev" => Origin::UtilLinux,
        "file" | "man" => Origin::Getopt,
        "git" | "rg" | "fd" | "tree" | "jq" | "which" | "whereis" => Origin::Own,
        _ => return None,
    })
}

/// Whether `name`'s options end at its first operand: always for a bash
/// builtin, and for a program reading them with `getopt_long` when
/// `POSIXLY_CORRECT` is in the environment (glibc then stops permuting).
pub(crate) fn ends_at_operand(origin: Option<Origin>, posixly_correct: bool) -> bool {
    match origin {
        Some(Origin::Builtin) => true,
        Some(Origin::Gnu(_) | Origin::UtilLinux | Origin::Getopt) => posixly_correct,
        Some(Origin::Bsd(Parser::Getopt | Parser::InOrder)) => true,
        Some(Origin::Bsd(Parser::Permuting)) => posixly_correct,
        Some(Origin::Own) | None => false,
    }
}

/// The origin of the grammar `program` is: macOS's own parser for an
/// entry of `bsd/`, else the one its name has.
pub(crate) fn origin_of(program: &Program) -> Option<Origin> {
    bsd::of(program)
        .map(|b| Origin::Bsd(b.parser))
        .or_else(|| origin(program.name))
}

/// macOS's grammar for `name`, where the program `PATH` finds is macOS's
/// own (asked once per name and console process, as [`implementation`]);
/// `None` anywhere else, where the catalogue's grammar is the one.
pub(crate) fn macos_program(name: &str) -> Option<&'static Program> {
    let bsd = bsd::find(name)?;
    if !injected() && Os::current() != Os::MacOs {
        return None;
    }
    matches!(chosen(name), Ok(Userland::MacOs)).then_some(&bsd.program)
}

/// Whether `POSIXLY_CORRECT` is set in the console's environment (any
/// value, empty too, as glibc reads it).
pub(crate) fn posixly_correct() -> bool {
    static SET: LazyLock<bool> = LazyLock::new(|| std::env::var_os("POSIXLY_CORRECT").is_some());
    *SET
}

/// Why the `name` `PATH` finds may not be the implementation its grammar
/// describes, if so (asked once per name and console process).
pub(super) fn implementation(name: &str) -> Result<(), String> {
    chosen(name).map(|_| ())
}

/// Which grammar reads `name`, or why none does.
fn chosen(name: &str) -> Result<Userland, String> {
    let origin = origin(name).ok_or_else(|| {
        format!("the catalogue does not know whose options `{name}` reads, so which implementation runs is not known")
    })?;
    if !matches!(origin, Origin::Gnu(_) | Origin::UtilLinux) {
        return Ok(Userland::Catalogued);
    }
    #[cfg(test)]
    if let Some(seen) = AS_IF.get() {
        let (os, found, answer) = seen(name);
        return decide(name, origin, os, found.as_deref(), &answer);
    }
    static PROBED: LazyLock<Mutex<HashMap<String, Result<Userland, String>>>> = LazyLock::new(Default::default);
    let mut probed = PROBED.lock().map_err(|_| "the probe's cache is poisoned".to_owned())?;
    if let Some(known) = probed.get(name) {
        return known.clone();
    }
    let os = Os::current();
    let found = match os {
        Os::MacOs => found(name, std::env::var_os("PATH").as_deref()),
        Os::Other => None,
    };
    let chosen = decide(name, origin, os, found.as_deref(), &version(name, found.as_deref()));
    probed.insert(name.to_owned(), chosen.clone());
    chosen
}

/// Which grammar reads `name`, from what was seen: the system, the file
/// `PATH` finds and its answer to `--version`. GNU's (or util-linux's)
/// answer anywhere is the catalogue's grammar; macOS's own program only
/// on macOS, at `/bin/NAME` or `/usr/bin/NAME`, answering exactly as
/// Apple's does; anything else is not covered.
pub(crate) fn decide(
    name: &str,
    origin: Origin,
    os: Os,
    found: Option<&Path>,
    answer: &Answer,
) -> Result<Userland, String> {
    let gnu = verdict(name, origin, &answer.gnu_line(name));
    let Err(why) = gnu else {
        return Ok(Userland::Catalogued);
    };
    if os != Os::MacOs {
        return Err(why);
    }
    let Some(bsd) = bsd::find(name) else {
        return Err(format!("{why}; the catalogue has no grammar for macOS's `{name}`"));
    };
    let system = ["/bin", "/usr/bin"].map(|dir| Path::new(dir).join(name));
    match found {
        Some(path) if system.iter().any(|s| s == path) => {}
        Some(path) => {
            return Err(format!(
                "{why}; nor is it macOS's own, which is {} (PATH finds {})",
                system
                    .iter()
                    .map(|s| s.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
                path.display()
            ));
        }
        None => return Err(format!("{why}; PATH finds no file `{name}`")),
    }
    if !answer.is(bsd.probe) {
        return Err(format!(
            "{why}; nor does it answer `--version` as macOS's own does ({})",
            match bsd.probe {
                Probe::Refuses(line) => format!("`{line}`, failing"),
                Probe::Prints(line) => format!("`{line}…`"),
            }
        ));
    }
    Ok(Userland::MacOs)
}

/// The file `PATH` runs for `name`: the first executable file of that
/// name, as bash looks it up.
fn found(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .map(|dir| dir.join(name))
        .find(|file| std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// For tests: what a thread pretends to have seen of a name — the system,
/// the file `PATH` finds and its answer to `--version`.
#[cfg(test)]
pub(crate) type Seen = fn(&str) -> (Os, Option<PathBuf>, Answer);

#[cfg(test)]
thread_local! {
    /// What this test thread pretends to have seen of each name (see
    /// `as_if`).
    static AS_IF: std::cell::Cell<Option<Seen>> = const { std::cell::Cell::new(None) };
}

/// For tests: judge on this thread as if the system, the file `PATH`
/// finds and its answer to `--version` were what `seen` says, until the
/// guard is dropped.
#[cfg(test)]
pub(crate) fn as_if(seen: Seen) -> AsIf {
    AS_IF.set(Some(seen));
    AsIf
}

/// Ends [`as_if`] when dropped.
#[cfg(test)]
pub(crate) struct AsIf;

#[cfg(test)]
impl Drop for AsIf {
    fn drop(&mut self) {
        AS_IF.set(None);
    }
}

fn injected() -> bool {
    #[cfg(test)]
    if AS_IF.get().is_some() {
        return true;
    }
    false
}

/// What the first line of `--version` (or why there is none) says of the
/// implementation, for a program whose grammar is `origin`'s.
pub(crate) fn verdict(name: &str, origin: Origin, answer: &Result<String, String>) -> Result<(), String> {
    let (expected, shown) = match origin {
        Origin::Gnu(package) => (format!("{name} (GNU {package}) "), format!("GNU {package}'s")),
        Origin::UtilLinux => (format!("{name} from util-linux "), "util-linux's".to_owned()),
        Origin::Builtin | Origin::Getopt | Origin::Own | Origin::Bsd(_) => return Ok(()),
    };
    let said = match answer {
        Ok(line) if line.starts_with(&expected) => return Ok(()),
        Ok(line) => format!("it answers `--version` with `{line}`"),
        Err(why) => why.clone(),
    };
    Err(format!(
        "the `{name}` PATH finds is not {shown} ({said}): its options mean other things than the catalogue's grammar, which is {shown}, says (BSD and macOS, busybox and uutils read them their own way)"
    ))
}
