//! jq (1.6 and 1.7): prints what a filter makes of JSON files. The filter
//! is a program, read whole here: every name it calls must be one of jq's
//! pure builtins — `env` and `$ENV` print the agent's environment (its API
//! keys), `import`/`include` read modules from anywhere, `def` could
//! rebind a name, a comment hides text — and anything this reader does not
//! know is not covered. jq's options are its own parser's (main.c): long
//! names whole, short ones bundled, anywhere on the line; those that read
//! a file given as a value (`--rawfile`, `--slurpfile`, `--argfile`, `-f`,
//! `-L`, `--run-tests`) or take two values are refused. A `~/.jq` file is
//! loaded into every filter (its definitions can shadow any builtin), so
//! where one exists nothing is covered.

use std::path::Path;

use super::table::{Check, HELP, Kind, Operands, Program, Reads, Syntax, T, Takes, VERSION, flag, refused, value};

mod builtins;
mod filter;

const FILTER: Kind = Kind::Checked(Check {
    name: "FILTER",
    check: filter::filter,
});

const TWO_VALUES: &str = "takes two values (a name, then a value or a file)";

pub(super) const JQ: Program = Program {
    judge: Some(no_home_library),
    ..Program::new(
        "jq",
        "prints what a filter makes of JSON files (only jq's pure builtins: no `env`/`$ENV`, modules, `def` or comments)",
        Syntax::EXACT,
        &[
            flag("s", "slurp"),
            flag("r", "raw-output"),
            flag("", "raw-output0"),
            flag("j", "join-output"),
            flag("a", "ascii-output"),
            flag("c", "compact-output"),
            flag("C", "color-output"),
            flag("M", "monochrome-output"),
            flag("S", "sort-keys"),
            flag("R", "raw-input"),
            flag("n", "null-input"),
            flag("e", "exit-status"),
            flag("", "tab"),
            value("", "indent", T),
            flag("", "seq"),
            flag("", "stream"),
            flag("", "stream-errors"),
            flag("", "unbuffered"),
            flag("h", ""),
            HELP,
            flag("V", ""),
            VERSION,
            refused("f", "from-file", Takes::Nothing, "reads its filter from a file"),
            refused("L", "", Takes::Value(T), "reads modules from a directory"),
            refused("", "library-path", Takes::Value(T), "reads modules from a directory"),
            refused("", "arg", Takes::Value(T), TWO_VALUES),
            refused("", "argjson", Takes::Value(T), TWO_VALUES),
            refused("", "slurpfile", Takes::Value(T), TWO_VALUES),
            refused("", "rawfile", Takes::Value(T), TWO_VALUES),
            refused("", "argfile", Takes::Value(T), TWO_VALUES),
            refused("", "args", Takes::Nothing, "reads the operands after it as arguments"),
            refused(
                "",
                "jsonargs",
                Takes::Nothing,
                "reads the operands after it as arguments",
            ),
            refused("", "run-tests", Takes::Nothing, "runs the tests a file holds"),
            refused("", "debug-dump-disasm", Takes::Nothing, "prints jq's internals"),
            refused("", "debug-trace", Takes::Nothing, "prints jq's internals"),
            refused("", "build-configuration", Takes::Nothing, "prints jq's build"),
        ],
        Operands {
            leading: &[FILTER],
            rest: Some(Kind::Path),
        },
        Reads::Contents,
    )
};

/// jq loads `~/.jq`, when it is a file, into every filter.
fn no_home_library(_argv: &[String], _cwd: Option<&Path>) -> Result<(), String> {
    let Some(home) = std::env::var_os("HOME") else {
        return Ok(());
    };
    let library = Path::new(&home).join(".jq");
    if library.is_file() {
        return Err(format!(
            "{} exists: jq loads its definitions into every filter, and they can rebind any builtin",
            library.display()
        ));
    }
    Ok(())
}
