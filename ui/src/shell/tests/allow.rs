//! What the allow side reads as plain segments, and what stays opaque.

use super::{segments, why_opaque};
use crate::shell::Script;

#[test]
fn if_statements_of_plain_commands_are_their_segments_in_order() {
    assert_eq!(
        segments("if test -f a; then cat a; elif ls b; then cat b; else echo none; fi"),
        vec![
            vec!["test", "-f", "a"],
            vec!["cat", "a"],
            vec!["ls", "b"],
            vec!["cat", "b"],
            vec!["echo", "none"]
        ]
    );
    assert!(why_opaque("if ls; then rm x & fi").contains("background"));
    assert!(why_opaque("if [[ -f a ]]; then cat a; fi").contains("[[ ]]"));
}

#[test]
fn single_bracket_tests_are_the_command_bracket() {
    assert_eq!(segments("[ -f a.txt ]"), [["[", "-f", "a.txt", "]"]]);
    assert_eq!(
        segments("[ a = \"b c\" ] && [ ! -d x ]"),
        vec![vec!["[", "a", "=", "b c", "]"], vec!["[", "!", "-d", "x", "]"]]
    );
    assert!(why_opaque("[ $x = a ]").contains("expansion"));
    assert!(why_opaque("[ a > b ]").contains("[ ]"), "> is a redirection to bash");
}

#[test]
fn here_documents_and_strings_of_literal_data_mark_the_segment() {
    let here = |t: &str| {
        Script::parse(t)
            .segments
            .unwrap()
            .iter()
            .map(|s| s.here)
            .collect::<Vec<_>>()
    };
    assert_eq!(here("cat <<'EOF'\n$(rm x) `y` \\z\nEOF"), [true]);
    assert_eq!(here("cat <<EOF\nplain text\nEOF"), [true]);
    assert_eq!(here("grep x <<< 'a b' && ls"), [true, false]);
    assert_eq!(here("cat <<-\"EOF\" >/dev/null\n\tx\n\tEOF"), [true]);
    assert!(why_opaque("cat <<EOF\n$(rm x)\nEOF").contains("here-document"));
    assert!(why_opaque("cat <<EOF\na\\tb\nEOF").contains("here-document"));
    // Bash joins `a\⏎b` first: the data is `ab`.
    assert_eq!(here("cat <<EOF\na\\\nb\nEOF"), [true]);
    assert!(why_opaque("grep x <<< \"$HOME\"").contains("here-string"));
}

#[test]
fn a_tilde_is_plain_only_where_bash_expands_it_to_home() {
    assert_eq!(segments("ls ~ ~/x x~"), [["ls", "~", "~/x", "x~"]]);
    for text in [
        "ls '~/x'",
        "ls \\~",
        "ls ~root/x",
        "ls ~+",
        "ls a=~/x",
        "ls x=a:~/y",
        "ls ~'/x'",
    ] {
        assert!(why_opaque(text).contains("tilde"), "{text:?}");
    }
}

#[test]
fn words_the_grammar_skips_or_splits_are_read_as_bash_reads_them() {
    // The grammar drops `\ ` (a word holding a space) and splits `"a"\]`.
    let why = why_opaque("ls \\ ; ls");
    assert!(why.contains("skipped"), "{why}");
    assert_eq!(segments("ls \"a[b\"\\]x"), [["ls", "a[b]x"]]);
    assert_eq!(segments("git 2>&1 push --force"), [["git", "push", "--force"]]);
}
