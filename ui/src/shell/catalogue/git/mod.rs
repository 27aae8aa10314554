//! git (2.39+): the subcommands that only read, each with its own option
//! parser's rules — parse-options (status, grep, branch, ls-files, blame,
//! remote) takes any unambiguous prefix of a long option and bundles short
//! ones; the revision and diff options of diff, log and show are written
//! whole. Revisions are read as paths (a revision names nothing on disk,
//! so it stays inside the working directory; `HEAD:.env` still names a
//! secret). What a repository's own configuration runs (`core.fsmonitor`,
//! a diff driver) is the repository's: these grammars refuse the options
//! that would name a program on the command line.

mod history;
mod index;
mod listing;
mod names;
mod reach;
mod remote;
mod repo;
mod revisions;
mod revname;
mod spawn;
mod words;

use super::table::{Operands, Program, Reads, Syntax, T, Takes, flag, refused};

const SUBCOMMANDS: &[Program] = &[
    listing::STATUS,
    revisions::DIFF,
    revisions::LOG,
    revisions::SHOW,
    listing::BLAME,
    listing::REV_PARSE,
    listing::BRANCH,
    listing::REMOTE,
    listing::LS_FILES,
    listing::GREP,
    names::TAG,
    names::DESCRIBE,
    names::REV_LIST,
    names::LS_TREE,
    names::MERGE_BASE,
    names::SHOW_REF,
];

/// git itself: the options before the subcommand, then a subcommand.
pub(super) const GIT: Program = Program {
    subcommands: SUBCOMMANDS,
    judge: Some(reach::judge),
    ..Program::new(
        "git",
        "git: only its read-only subcommands",
        // git.c compares its own options whole.
        Syntax::GIT_REVISIONS,
        &[
            flag("", "no-pager"),
            flag("", "no-optional-locks"),
            flag("", "literal-pathspecs"),
            flag("", "glob-pathspecs"),
            flag("", "noglob-pathspecs"),
            flag("", "icase-pathspecs"),
            flag("", "no-replace-objects"),
            flag("", "version"),
            refused("p", "paginate", Takes::Nothing, "runs a pager"),
            flag("P", ""),
            refused(
                "c",
                "",
                Takes::Value(T),
                "sets configuration, which can name programs to run",
            ),
            refused(
                "",
                "config-env",
                Takes::Value(T),
                "sets configuration, which can name programs to run",
            ),
            refused(
                "C",
                "",
                Takes::Value(T),
                "changes the directory its paths are read from",
            ),
            refused(
                "",
                "exec-path",
                Takes::Optional(T),
                "changes where git finds the programs it runs",
            ),
            refused("", "git-dir", Takes::Value(T), "reads another repository"),
            refused("", "work-tree", Takes::Value(T), "reads another working tree"),
            refused("", "namespace", Takes::Value(T), "changes the namespace"),
            refused("", "bare", Takes::Nothing, "reads the repository as bare"),
        ],
        Operands::NONE,
        Reads::Names,
    )
};

#[cfg(test)]
mod names_tests;
#[cfg(test)]
mod tests;
