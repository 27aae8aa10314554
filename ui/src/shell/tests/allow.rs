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

type Read = (Vec<String>, Vec<String>);

/// Each segment's words and the files its standard input is read from.
fn inputs(text: &str) -> Vec<Read> {
    Script::parse(text)
        .segments
        .unwrap()
        .iter()
        .map(|s| (s.values(), s.inputs.iter().map(|w| w.value.clone()).collect()))
        .collect()
}

fn one(words: &[&str], input: &[&str]) -> Read {
    (
        words.iter().map(|w| (*w).to_owned()).collect(),
        input.iter().map(|w| (*w).to_owned()).collect(),
    )
}

#[test]
fn standard_input_from_a_plain_file_is_read_as_an_input_of_the_segment() {
    assert_eq!(inputs("wc -l < in.txt"), [one(&["wc", "-l"], &["in.txt"])]);
    assert_eq!(inputs("<in.txt sort -u"), [one(&["sort", "-u"], &["in.txt"])]);
    assert_eq!(inputs("grep x 0<'a b.txt'"), [one(&["grep", "x"], &["a b.txt"])]);
    assert_eq!(
        inputs("sort < in.txt 2>/dev/null | uniq -c"),
        [one(&["sort"], &["in.txt"]), one(&["uniq", "-c"], &[])]
    );
    // `/dev/null` reads nothing: plain as before.
    assert_eq!(inputs("cat < /dev/null"), [one(&["cat"], &[])]);
    // A redirection with no command: zsh runs `cat` on it, bash nothing.
    assert!(why_opaque("< .env").contains("without a command"));
    assert!(why_opaque("< in.txt;").contains("without"));
    for (text, why) in [
        ("wc -l < *.txt", "file-name pattern"),
        ("wc -l < in.tx?", "file-name pattern"),
        ("wc -l < ~/x", "tilde"),
        ("wc -l < $HOME/x", "expansion"),
        ("wc -l < {a,b}", "brace"),
        ("cat <> in.txt", ""),
        ("cat 3< in.txt", "redirection to a file"),
        ("cat > in.txt", "redirection to a file"),
        ("cat < in.txt > out", "redirection to a file"),
    ] {
        assert!(why_opaque(text).contains(why), "{text}: {}", why_opaque(text));
    }
}

#[test]
fn standard_input_redirected_at_the_end_of_a_pipeline_or_list_is_its_last_commands() {
    // bash gives a redirection to the simple command it ends (`ls | wc -l
    // < f` is `ls | (wc -l < f)`); the grammar hangs one that ends a
    // pipeline or an and-or list on all of it.
    assert_eq!(
        inputs("ls | wc -l < in.txt"),
        [one(&["ls"], &[]), one(&["wc", "-l"], &["in.txt"])]
    );
    assert_eq!(
        inputs("cd src && wc -l < in.txt 2>/dev/null"),
        [one(&["cd", "src"], &[]), one(&["wc", "-l"], &["in.txt"])]
    );
    assert_eq!(
        inputs("sort < a.txt | uniq -c < b.txt"),
        [one(&["sort"], &["a.txt"]), one(&["uniq", "-c"], &["b.txt"])]
    );
    assert_eq!(
        inputs("git status; ls | grep x < in.txt"),
        [
            one(&["git", "status"], &[]),
            one(&["ls"], &[]),
            one(&["grep", "x"], &["in.txt"])
        ]
    );
    for (text, why) in [
        ("ls | wc -l < *.txt", "file-name pattern"),
        ("ls | wc -l < ~/x", "tilde"),
        ("ls | wc -l < in.txt > out", "redirection to a file"),
        ("ls | wc -l 3< in.txt", "redirection to a file"),
        // A compound takes the redirection whole: not one command's.
        ("ls && if true; then cat; fi < in.txt", "compound"),
    ] {
        assert!(why_opaque(text).contains(why), "{text}: {}", why_opaque(text));
    }
}

#[test]
fn a_here_document_may_feed_a_pipeline_and_each_segment_knows_its_joint() {
    use crate::shell::Joint::{And, Or, Pipe, Seq};
    let joints = |t: &str| {
        Script::parse(t)
            .segments
            .unwrap()
            .iter()
            .map(|s| (s.values()[0].clone(), s.here, s.joint))
            .collect::<Vec<_>>()
    };
    let j = |w: &str, here: bool, joint| (w.to_owned(), here, joint);
    assert_eq!(
        joints("cat <<'EOF' | wc -l | sort && ls\na\nEOF"),
        [
            j("cat", true, Seq),
            j("wc", false, Pipe),
            j("sort", false, Pipe),
            j("ls", false, And)
        ]
    );
    assert_eq!(
        joints("cat <<EOF && ls\na\nEOF"),
        [j("cat", true, Seq), j("ls", false, And)]
    );
    assert_eq!(
        joints("cd x && ls; cat y || pwd\necho"),
        [
            j("cd", false, Seq),
            j("ls", false, And),
            j("cat", false, Seq),
            j("pwd", false, Or),
            j("echo", false, Seq)
        ]
    );
    // `&&` after a compound weighs the compound, not its last segment.
    assert_eq!(
        joints("if cd x; then ls; fi && pwd"),
        [j("cd", false, Seq), j("ls", false, Seq), j("pwd", false, Seq)]
    );
    // The grammar reads `EOF;` as the delimiter here, bash `EOF`.
    why_opaque("cat <<EOF; ls\na\nEOF");
}
