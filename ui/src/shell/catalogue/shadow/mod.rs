//! Another program under a catalogued name: bash runs a function before a
//! builtin or a file on `PATH`, and imports the functions its environment
//! exports (`BASH_FUNC_cat%%=() { … }`); and it looks a name up in each
//! `PATH` directory in turn, so a relative entry (`.`, an empty one) or a
//! directory inside the project finds a file an agent could have put
//! there (`./cat`). The console's environment is the user's, which the
//! agent's shell inherits too; what the shell's own startup files define
//! is not seen (docs/policy.md says so). A name found is the program its
//! grammar describes only where `PATH` finds that implementation (GNU
//! sed, not BSD's: `userland.rs`); `man` finds its pages through `PATH`
//! too (`manpath.rs`).

mod manpath;
pub(super) mod userland;

use std::path::Path;

use super::table::Program;

/// Why the program a command names may not be the catalogued one, if so.
pub(super) fn shadowed(name: &str, cwd: Option<&Path>) -> Result<(), String> {
    // bash 4.3's patched form and the form before it.
    for exported in [format!("BASH_FUNC_{name}%%"), format!("BASH_FUNC_{name}()")] {
        if std::env::var_os(&exported).is_some() {
            return Err(format!(
                "the environment exports a function `{name}` ({exported}), which bash runs in the program's place"
            ));
        }
    }
    let Some(path) = std::env::var_os("PATH") else {
        return userland::implementation(name);
    };
    for entry in std::env::split_paths(&path) {
        if entry.as_os_str().is_empty() || entry.is_relative() {
            return Err(format!(
                "PATH holds the relative directory `{}`: a file `{name}` in the working directory would run in the program's place",
                entry.display()
            ));
        }
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
