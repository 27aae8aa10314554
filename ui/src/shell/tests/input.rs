//! Bash's input stage: line continuations taken out before words split.

use super::{found, segments, why_opaque};
use crate::shell::Script;

#[test]
fn a_line_continuation_before_a_hash_makes_it_part_of_the_word() {
    // Bash reads `ls x#;touch /tmp/p`: two commands, not a comment.
    let text = "ls x\\\n#;touch /tmp/p";
    assert_eq!(segments(text), [vec!["ls", "x#"], vec!["touch", "/tmp/p"]]);
    assert!(found(text).contains(&"touch /tmp/p".to_owned()), "{:?}", found(text));
}

#[test]
fn segment_spans_point_into_the_text_as_written() {
    let text = "ls x\\\n#;touch /tmp/p";
    let script = Script::parse(text);
    let spans: Vec<&str> = script.segments.unwrap().iter().map(|s| &text[s.span.clone()]).collect();
    assert_eq!(spans, ["ls x\\\n#", "touch /tmp/p"]);
    let text = "ls \\\n -la > out";
    let opaque = Script::parse(text).segments.unwrap_err();
    assert_eq!(&text[opaque.span], "> out");
}

#[test]
fn continuations_stay_inside_single_quotes_ansi_c_strings_and_comments() {
    assert_eq!(segments("echo 'a\\\nb'"), [["echo", "a\\\nb"]]);
    assert_eq!(segments("echo \"a\\\nb\" c\\\nd"), [["echo", "ab", "cd"]]);
    // A comment ends at its newline even after a backslash.
    let text = "ls # x \\\nrm -rf y";
    assert!(found(text).contains(&"rm -rf y".to_owned()), "{:?}", found(text));
    assert!(why_opaque(text).contains("comment"));
    assert!(why_opaque("echo $'a\\\nb'").contains("ANSI-C"));
}

#[test]
fn a_here_document_body_is_joined_only_when_its_delimiter_is_unquoted() {
    // Bash joins `a\⏎EOF` into `aEOF`: the body runs on to the second EOF.
    let text = "bash <<EOF\nrm a\\\nEOF\nrm b\nEOF\n";
    let got = found(text);
    assert!(
        got.contains(&"rm aEOF".to_owned()) && got.contains(&"rm b".to_owned()),
        "{got:?}"
    );
    let text = "bash <<'EOF'\nrm a\\\nEOF\nrm b\n";
    let got = found(text);
    assert!(got.contains(&"rm b".to_owned()), "{got:?}");
}

#[test]
fn a_comment_anywhere_makes_the_script_opaque_but_its_commands_are_found() {
    assert!(why_opaque("ls # just a listing").contains("comment"));
    assert!(why_opaque("# note\nls").contains("comment"));
    assert!(found("ls # x\nrm -rf y").contains(&"rm -rf y".to_owned()));
}

#[test]
fn a_line_starting_with_an_escaped_word_is_its_own_command() {
    // The grammar reads `ls⏎\rm -rf x` as `ls` with three arguments.
    let text = "ls\n\\rm -rf x";
    assert!(found(text).contains(&"rm -rf x".to_owned()), "{:?}", found(text));
    assert!(why_opaque(text).contains("line break"));
    let text = "ls # \\\n\\a";
    assert!(found(text).contains(&"a".to_owned()), "{:?}", found(text));
}

#[test]
fn a_here_document_ends_only_at_its_delimiter_line() {
    // The grammar ends the body at `rm -rf x` (it starts with `rm`); bash
    // runs that line inside the shell fed the body.
    let text = "bash <<'rm'\nls\nrm -rf x\n";
    assert!(found(text).contains(&"rm -rf x".to_owned()), "{:?}", found(text));
    let text = "cat <<'EOF'\nls\nEOF # x; rm y\nEOF\necho after";
    assert!(found(text).contains(&"echo after".to_owned()));
    assert!(!found(text).contains(&"rm y".to_owned()), "data, not a command");
}
