//! git's revision and diff options, shared by diff, log and show, and
//! those three subcommands: what they print is judged against the
//! repository by [`super::reach`].

use super::super::table::{
    Kind, Operands, PAT, Program, RUNS, Reads, Syntax, T, Takes, WRITES, flag, optional, refused, value,
};

const N: Kind = Kind::Text;

/// Options of log and show that add commits to those the operands name
/// (every ref, the reflogs) or walk from them: `git show --all HEAD:x`
/// prints every branch's patch besides the file.
pub(super) const ADDS_COMMITS: &[&str] = &["all", "branches", "tags", "remotes", "glob", "reflog", "do-walk"];
const WHEN: Kind = Kind::Choice(&["always", "never", "auto", "true", "false"]);

/// The revision and diff options diff, log and show share.
macro_rules! revision_options {
    ($($extra:expr),* $(,)?) => {
        &[
            $($extra,)*
            flag("p", "patch"),
            flag("u", ""),
            flag("s", "no-patch"),
            optional("U", "unified", N),
            flag("", "raw"),
            flag("", "patch-with-raw"),
            flag("", "patch-with-stat"),
            optional("", "stat", T),
            flag("", "compact-summary"),
            flag("", "numstat"),
            flag("", "shortstat"),
            optional("X", "dirstat", T),
            flag("", "summary"),
            flag("", "name-only"),
            flag("", "name-status"),
            // `=diff` prints a submodule's own history, which is not judged.
            optional("", "submodule", Kind::Choice(&["short", "log"])),
            optional("", "color", WHEN),
            flag("", "no-color"),
            optional("", "color-moved", T),
            optional("", "word-diff", T),
            value("", "word-diff-regex", PAT),
            optional("", "color-words", T),
            flag("", "no-renames"),
            flag("", "check"),
            flag("", "full-index"),
            flag("", "binary"),
            optional("", "abbrev", N),
            optional("B", "break-rewrites", N),
            optional("M", "find-renames", N),
            optional("C", "find-copies", N),
            flag("", "find-copies-harder"),
            flag("D", "irreversible-delete"),
            value("l", "", N),
            value("", "diff-filter", T),
            value("S", "", T),
            value("G", "", PAT),
            flag("", "pickaxe-all"),
            flag("", "pickaxe-regex"),
            flag("R", ""),
            optional("", "relative", T),
            flag("", "no-relative"),
            flag("a", "text"),
            flag("", "ignore-cr-at-eol"),
            flag("", "ignore-space-at-eol"),
            flag("b", "ignore-space-change"),
            flag("w", "ignore-all-space"),
            flag("", "ignore-blank-lines"),
            value("I", "ignore-matching-lines", PAT),
            value("", "inter-hunk-context", N),
            flag("W", "function-context"),
            flag("", "exit-code"),
            flag("", "quiet"),
            flag("", "no-ext-diff"),
            flag("", "no-textconv"),
            optional("", "ignore-submodules", T),
            value("", "src-prefix", T),
            value("", "dst-prefix", T),
            flag("", "no-prefix"),
            flag("", "default-prefix"),
            flag("", "minimal"),
            flag("", "patience"),
            flag("", "histogram"),
            value("", "diff-algorithm", T),
            value("", "anchored", T),
            refused("", "output", Takes::Value(T), WRITES),
            refused("", "ext-diff", Takes::Nothing, RUNS),
            refused("", "textconv", Takes::Nothing, RUNS),
            refused("O", "", Takes::Value(T), "reads an order file it names"),
            flag("z", ""),
        ]
    };
}

/// Options of log and show that choose and print commits.
macro_rules! log_options {
    ($($extra:expr),* $(,)?) => {
        revision_options![
            $($extra,)*
            value("n", "max-count", N),
            value("", "skip", N),
            value("", "since", T),
            value("", "after", T),
            value("", "until", T),
            value("", "before", T),
            value("", "since-as-filter", T),
            value("", "author", PAT),
            value("", "committer", PAT),
            value("", "grep", PAT),
            flag("", "all-match"),
            flag("", "invert-grep"),
            flag("i", "regexp-ignore-case"),
            flag("E", "extended-regexp"),
            flag("F", "fixed-strings"),
            flag("P", "perl-regexp"),
            flag("", "merges"),
            flag("", "no-merges"),
            value("", "min-parents", N),
            value("", "max-parents", N),
            flag("", "first-parent"),
            flag("", "all"),
            optional("", "branches", PAT),
            optional("", "tags", PAT),
            optional("", "remotes", PAT),
            value("", "glob", PAT),
            value("", "exclude", PAT),
            flag("", "reflog"),
            flag("", "left-right"),
            flag("", "cherry-pick"),
            flag("", "cherry-mark"),
            flag("", "cherry"),
            flag("", "ancestry-path"),
            flag("", "simplify-by-decoration"),
            flag("", "full-history"),
            flag("", "dense"),
            flag("", "sparse"),
            flag("", "boundary"),
            flag("", "date-order"),
            flag("", "author-date-order"),
            flag("", "topo-order"),
            flag("", "reverse"),
            flag("", "no-walk"),
            flag("", "do-walk"),
            optional("", "pretty", T),
            value("", "format", T),
            flag("", "abbrev-commit"),
            flag("", "no-abbrev-commit"),
            flag("", "oneline"),
            value("", "encoding", T),
            optional("", "expand-tabs", N),
            flag("", "no-expand-tabs"),
            optional("", "notes", T),
            flag("", "no-notes"),
            refused("", "show-signature", Takes::Nothing, "verifies signatures, which runs gpg"),
            flag("", "relative-date"),
            value("", "date", T),
            flag("", "parents"),
            flag("", "children"),
            flag("", "graph"),
            flag("", "show-linear-break"),
            flag("c", ""),
            flag("", "cc"),
            flag("", "dd"),
            flag("m", ""),
            optional("", "diff-merges", T),
            flag("", "no-diff-merges"),
            flag("", "combined-all-paths"),
            flag("t", ""),
            optional("", "decorate", T),
            flag("", "no-decorate"),
            value("", "decorate-refs", PAT),
            value("", "decorate-refs-exclude", PAT),
            flag("", "source"),
            flag("", "use-mailmap"),
            flag("", "mailmap"),
            flag("", "no-mailmap"),
            flag("", "full-diff"),
            flag("", "log-size"),
            value("L", "", T),
            flag("", "follow"),
            flag("", "no-follow"),
        ]
    };
}

pub(super) const DIFF: Program = Program::new(
    "diff",
    "shows changes (a patch only where no secret path the index or the history holds is reachable)",
    Syntax::GIT_REVISIONS,
    revision_options![
        flag("", "cached"),
        flag("", "staged"),
        flag("", "merge-base"),
        refused("", "no-index", Takes::Nothing, "compares files anywhere on disk"),
    ],
    Operands::PATHS,
    Reads::Contents,
);

pub(super) const LOG: Program = Program::new(
    "log",
    "shows commits (with patches only where the history holds no secret path they reach)",
    Syntax::GIT_REVISIONS,
    log_options![],
    Operands::PATHS,
    Reads::Contents,
);

pub(super) const SHOW: Program = Program::new(
    "show",
    "shows commits and objects (only where the history holds no secret path they reach; an id only of a commit a ref reaches)",
    Syntax::GIT_REVISIONS,
    log_options![],
    Operands::PATHS,
    Reads::Contents,
);
