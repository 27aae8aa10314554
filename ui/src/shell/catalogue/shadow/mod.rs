//! Another program under a catalogued name: bash runs a function before a
//! builtin or a file on `PATH`, and imports the functions its environment
//! exports (`BASH_FUNC_cat%%=() { … }`); and it looks a name up in each
//! `PATH` directory in turn, so a relative entry (`.`, an empty one) or a
//! directory inside the project finds a file an agent could have put
//! there (`./cat`). The console's environment is the user's, which the
//! agent's shell inherits too; what the shell's own startup files define
//! is not seen (docs/policy.md says so). A name found is the program its
//! grammar describes only where `PATH` finds that implementation (GNU's,
//! or macOS's own where `../bsd/` has its grammar: `userland/`); `man`
//! finds its pages through `PATH` too (`manpath.rs`).
//!
//! The environment is read once per process ([`Environment`]): the
//! console never changes its own, and every judged command needs it.

mod manpath;
pub(super) mod userland;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use super::table::Program;

/// What of the console's environment decides which program a name runs.
struct Environment {
    /// Each name an exported function is defined under, with the variable
    /// that exports it.
    functions: HashMap<OsString, OsString>,
    /// `PATH`'s directories in order; `None` without a `PATH`.
    path: Option<Vec<PathBuf>>,
}

impl Environment {
    fn read(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let mut functions = HashMap::new();
        let mut path = None;
        for (key, value) in vars {
            if key == "PATH" {
                path = Some(std::env::split_paths(&value).collect());
            } else if let Some(name) = exported_function(&key) {
                functions.insert(name, key);
            }
        }
        Self { functions, path }
    }

    fn current() -> &'static Self {
        static ENVIRONMENT: LazyLock<Environment> = LazyLock::new(|| Environment::read(std::env::vars_os()));
        &ENVIRONMENT
    }
}

/// The function name a variable exports, if it is bash's form for one:
/// `BASH_FUNC_NAME%%` (bash 4.3's patched form) or `BASH_FUNC_NAME()`
/// (the form before it).
fn exported_function(key: &std::ffi::OsStr) -> Option<OsString> {
    let bytes = key.as_encoded_bytes();
    let name = bytes.strip_prefix(b"BASH_FUNC_")?;
    let name = name.strip_suffix(b"%%").or_else(|| name.strip_suffix(b"()"))?;
    Some(String::from_utf8_lossy(name).into_owned().into())
}

/// Why the program a command names may not be the catalogued one, if so.
pub(super) fn shadowed(name: &str, cwd: Option<&Path>) -> Result<(), String> {
    shadowed_in(Environment::current(), name, cwd)
}

fn shadowed_in(environment: &Environment, name: &str, cwd: Option<&Path>) -> Result<(), String> {
    if let Some(exported) = environment.functions.get(std::ffi::OsStr::new(name)) {
        return Err(format!(
            "the environment exports a function `{name}` ({}), which bash runs in the program's place",
            exported.to_string_lossy()
        ));
    }
    let Some(path) = &environment.path else {
        return userland::implementation(name);
    };
    for entry in path {
        if entry.as_os_str().is_empty() || entry.is_relative() {
            return Err(format!(
                "PATH holds the relative directory `{}`: a file `{name}` in the working directory would run in the program's place",
                entry.display()
            ));
        }
        // Looked at on every command: a file may appear there at any time.
        if let Some(cwd) = cwd
            && entry.starts_with(cwd)
            && std::fs::symlink_metadata(entry.join(name)).is_ok()
        {
            return Err(format!(
                "PATH finds `{name}` in {}, inside the working directory, where anything may have put it",
                entry.display()
            ));
        }
    }
    userland::implementation(name)
}

/// Whether `program`'s options end at its first operand, every later word
/// an operand: a bash builtin's (`command rm x -v` runs `rm x -v`), and a
/// GNU program's when `POSIXLY_CORRECT` is in the console's environment,
/// and macOS's own as its parser reads them (`bsd/`).
pub(super) fn options_end_at_operand(program: &'static Program) -> bool {
    if program.syntax.none || !userland::ends_at_operand(userland::origin_of(program), userland::posixly_correct()) {
        return false;
    }
    // Only the catalogue's own entry: git's `grep` subcommand is git's.
    super::program(program.name).is_some_and(|p| std::ptr::eq(p, program))
}

#[cfg(test)]
mod tests;
