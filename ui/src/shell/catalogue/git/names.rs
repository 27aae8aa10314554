//! git's subcommands that print names and ids, never what a file holds:
//! tag listing, describe, rev-list, ls-tree, merge-base, show-ref. Each
//! takes only its listing options; any option that writes (`git tag NAME`
//! creates a tag), verifies a signature (gpg) or prints a commit's message
//! with a format is refused or not listed.

use super::super::table::Effect::OperandsArePatterns;
use super::super::table::{
    Effect, Kind, Operands, Opt, PAT, Program, Reads, Syntax, T, Takes, flag, optional, refused, value,
};

const N: Kind = Kind::Text;
const WHEN: Kind = Kind::Choice(&["always", "never", "auto", "true", "false"]);
const GIT_HELP: Opt = flag("h", "");

/// A filter puts `git tag` in list mode as `--list` does (builtin/tag.c:
/// `-n`, `--contains`, `--no-contains`, `--merged`, `--no-merged`,
/// `--points-at`), and every operand is then a pattern; without one, an
/// operand names a tag to create.
const LISTS: &[Effect] = &[OperandsArePatterns];

pub(super) const TAG: Program = Program::new(
    "tag",
    "lists tags (never creates, deletes or verifies one; with `--list`, `-n` or a filter such as `--contains`, each operand is a pattern)",
    Syntax::GNU,
    &[
        flag("l", "list").with(LISTS),
        optional("n", "", N).with(LISTS),
        optional("", "contains", T).with(LISTS),
        optional("", "no-contains", T).with(LISTS),
        optional("", "merged", T).with(LISTS),
        optional("", "no-merged", T).with(LISTS),
        optional("", "points-at", T).with(LISTS),
        value("", "sort", T),
        value("", "format", T),
        optional("", "color", WHEN),
        optional("", "column", T),
        flag("", "no-column"),
        flag("i", "ignore-case"),
        flag("", "omit-empty"),
        refused("a", "annotate", Takes::Nothing, "creates a tag"),
        refused("s", "sign", Takes::Nothing, "creates a signed tag (runs gpg)"),
        refused("u", "local-user", Takes::Value(T), "creates a signed tag (runs gpg)"),
        refused("f", "force", Takes::Nothing, "replaces a tag"),
        refused("d", "delete", Takes::Nothing, "deletes a tag"),
        refused("v", "verify", Takes::Nothing, "verifies a signature, which runs gpg"),
        refused("m", "message", Takes::Value(T), "creates a tag"),
        refused("F", "file", Takes::Value(T), "creates a tag from a file"),
        refused("e", "edit", Takes::Nothing, "opens an editor"),
        refused("", "create-reflog", Takes::Nothing, "creates a tag's reflog"),
        GIT_HELP,
    ],
    Operands::NONE,
    Reads::Names,
);

pub(super) const DESCRIBE: Program = Program::new(
    "describe",
    "names a commit by its nearest tag",
    Syntax::GNU,
    &[
        flag("", "all"),
        flag("", "tags"),
        flag("", "contains"),
        optional("", "abbrev", N),
        value("", "candidates", N),
        flag("", "exact-match"),
        flag("", "debug"),
        flag("", "long"),
        value("", "match", PAT),
        value("", "exclude", PAT),
        flag("", "always"),
        flag("", "first-parent"),
        refused(
            "",
            "dirty",
            Takes::Optional(T),
            "refreshes the index, which writes .git/index",
        ),
        refused(
            "",
            "broken",
            Takes::Optional(T),
            "refreshes the index, which writes .git/index",
        ),
        GIT_HELP,
    ],
    Operands::TEXT,
    Reads::Names,
);

pub(super) const REV_LIST: Program = Program::new(
    "rev-list",
    "lists commit ids (and with `--objects` the names of the files they hold), never their contents",
    // setup_revisions: whole long names, `-5`.
    Syntax::GIT_REVISIONS,
    &[
        flag("", "count"),
        value("n", "max-count", N),
        value("", "skip", N),
        value("", "since", T),
        value("", "after", T),
        value("", "until", T),
        value("", "before", T),
        value("", "author", PAT),
        value("", "committer", PAT),
        value("", "grep", PAT),
        flag("i", "regexp-ignore-case"),
        flag("E", "extended-regexp"),
        flag("F", "fixed-strings"),
        flag("", "merges"),
        flag("", "no-merges"),
        flag("", "first-parent"),
        flag("", "all"),
        optional("", "branches", PAT),
        optional("", "tags", PAT),
        optional("", "remotes", PAT),
        flag("", "not"),
        flag("", "left-right"),
        flag("", "left-only"),
        flag("", "right-only"),
        flag("", "cherry-pick"),
        flag("", "cherry-mark"),
        flag("", "ancestry-path"),
        flag("", "boundary"),
        flag("", "topo-order"),
        flag("", "date-order"),
        flag("", "reverse"),
        flag("", "parents"),
        flag("", "children"),
        flag("", "objects"),
        flag("", "abbrev-commit"),
        optional("", "abbrev", N),
        flag("", "timestamp"),
        refused("", "stdin", Takes::Nothing, "reads revisions from its standard input"),
        GIT_HELP,
    ],
    Operands::TEXT,
    Reads::Names,
);

pub(super) const LS_TREE: Program = Program::new(
    "ls-tree",
    "lists the names and ids a tree holds, never their contents",
    Syntax::GNU,
    &[
        flag("d", ""),
        flag("r", ""),
        flag("t", ""),
        flag("l", "long"),
        flag("z", ""),
        flag("", "name-only"),
        flag("", "name-status"),
        flag("", "object-only"),
        flag("", "full-name"),
        flag("", "full-tree"),
        optional("", "abbrev", N),
        value("", "format", T),
        GIT_HELP,
    ],
    Operands::TEXT,
    Reads::Names,
);

pub(super) const MERGE_BASE: Program = Program::new(
    "merge-base",
    "prints the best common ancestor of commits",
    Syntax::GNU,
    &[
        flag("a", "all"),
        flag("", "octopus"),
        flag("", "independent"),
        flag("", "is-ancestor"),
        flag("", "fork-point"),
        GIT_HELP,
    ],
    Operands::TEXT,
    Reads::Names,
);

pub(super) const SHOW_REF: Program = Program::new(
    "show-ref",
    "lists references and their ids",
    Syntax::GNU,
    &[
        flag("", "head"),
        flag("", "heads"),
        flag("", "branches"),
        flag("", "tags"),
        flag("d", "dereference"),
        optional("s", "hash", N),
        optional("", "abbrev", N),
        flag("q", "quiet"),
        flag("", "verify"),
        flag("", "exists"),
        GIT_HELP,
    ],
    Operands::TEXT,
    Reads::Names,
);
