use super::*;

pub(super) fn segments(text: &str) -> Vec<Vec<String>> {
    match Script::parse(text).segments {
        Ok(segments) => segments.iter().map(Segment::values).collect(),
        Err(opaque) => panic!("{text:?} is not plain: {}", opaque.why),
    }
}

pub(super) fn why_opaque(text: &str) -> String {
    match Script::parse(text).segments {
        Ok(s) => panic!("{text:?} was read as plain: {s:?}"),
        Err(opaque) => opaque.why,
    }
}

pub(super) fn found(text: &str) -> Vec<String> {
    Script::parse(text).found.iter().map(|w| w.join(" ")).collect()
}

#[test]
fn plain_commands_split_into_their_segments_with_quotes_removed() {
    assert_eq!(segments("git status"), [["git", "status"]]);
    assert_eq!(
        segments("git status && git diff; ls | grep x || true\npwd"),
        vec![
            vec!["git", "status"],
            vec!["git", "diff"],
            vec!["ls"],
            vec!["grep", "x"],
            vec!["true"],
            vec!["pwd"]
        ]
    );
    assert_eq!(
        segments(r#"\rm "-rf" r''m 'a b' "c\"d""#),
        [["rm", "-rf", "rm", "a b", "c\"d"]]
    );
    assert_eq!(segments("ls \\\n -la"), [["ls", "-la"]]);
    assert_eq!(segments("cargo test 2>&1 >/dev/null"), [["cargo", "test"]]);
    assert_eq!(
        segments("find . -exec grep x {} \\;"),
        [["find", ".", "-exec", "grep", "x", "{}", ";"]]
    );
}

#[test]
fn anything_a_shell_does_besides_running_words_is_opaque() {
    for (text, why) in [
        ("echo $(id)", "command substitution"),
        ("echo `id`", "command substitution"),
        ("echo $HOME", "variable expansion"),
        ("echo ${x@P}", "variable expansion"),
        ("echo $((1+2))", "arithmetic"),
        ("echo $'\\x41'", "ANSI-C"),
        ("cat <(id)", "process substitution"),
        ("cat <<EOF\n$x\nEOF", "here-document"),
        ("cat <<< \"$x\"", "here-string"),
        ("(rm -rf /)", "subshell"),
        ("{ rm -rf /; }", "group"),
        ("f() { rm; }", "function"),
        ("PAGER=cat git log", "variable assignment"),
        ("X=1", "variable assignment"),
        ("export X=1", "declaration"),
        ("ls > out", "redirection to a file"),
        ("ls >& out", "redirection to a file"),
        ("cat 3< /etc/shadow", "redirection to a file"),
        ("cat < /etc/sha*", "file-name pattern in a redirection"),
        ("sleep 1 &", "background"),
        ("a |& b", "standard error"),
        ("[[ $(id) ]]", "test"),
        ("! ls", "negated"),
        ("while true; do ls; done", "control structure"),
        ("for f in a; do ls; done", "control structure"),
        ("echo {a,b}", "brace expansion"),
        ("echo 'unterminated", "does not parse"),
        ("ls\rrm -rf /", "control character"),
        ("/???/r? -rf /", "file-name pattern"),
    ] {
        let got = why_opaque(text);
        assert!(got.contains(why), "{text:?}: {got:?} does not say {why:?}");
    }
}

#[test]
fn a_glob_argument_is_marked_so_only_a_trailing_star_covers_it() {
    let script = Script::parse("ls *.rs");
    let words = &script.segments.as_ref().unwrap()[0].words;
    assert!(!words[0].glob);
    assert!(words[1].glob);
    assert!(!Script::parse("ls '*.rs'").segments.unwrap()[0].words[1].glob);
}

#[test]
fn deny_sees_every_command_behind_wrappers_substitutions_and_shells() {
    for text in [
        "echo $(rm -rf /)",
        "echo `rm -rf /`",
        "ls; rm -rf /",
        "sudo -u root rm -rf /",
        "env -i X=1 rm -rf /",
        "nice -n 5 nohup timeout -s 9 10 rm -rf /",
        "xargs -I{} rm -rf {}",
        "find . -name x -exec rm -rf {} \\;",
        "bash -lc 'rm -rf /'",
        "sh -e -o pipefail -c \"rm -rf /\"",
        "zsh -c 'echo $(rm -rf /)'",
        "eval rm -rf /",
        "/bin/rm -rf /",
        "command rm -rf /",
        "exec rm -rf /",
        "stdbuf -o0 rm -rf /",
        "watch -n 1 rm -rf /",
        "bash <<EOF\nrm -rf /\nEOF",
        "sh <<< 'rm -rf /'",
        "[[ $(rm -rf /) ]]",
        "f() { rm -rf /; }",
        "(cd / && rm -rf .)",
        "X=1 rm -rf /",
        "time rm -rf /",
        "env -S 'rm -rf /'",
    ] {
        assert!(
            found(text).iter().any(|c| c.starts_with("rm ")),
            "{text:?}: the rm is not found in {:?}",
            found(text)
        );
    }
}

#[test]
fn patterns_match_whole_words_with_a_trailing_star_for_further_words() {
    let status = Pattern::parse("git status *").unwrap();
    let words = |t: &str| Script::parse(t).segments.unwrap().remove(0).words;
    assert!(status.matches_segment(&words("git status")));
    assert!(status.matches_segment(&words("git status --short")));
    assert!(!status.matches_segment(&words("git statusx")));
    assert!(!status.matches_segment(&words("/tmp/evil/git status")));
    let exact = Pattern::parse("cargo test").unwrap();
    assert!(exact.matches_segment(&words("cargo test")));
    assert!(!exact.matches_segment(&words("cargo test -q")));
    let format = Pattern::parse("git log --format=*").unwrap();
    assert!(format.matches_segment(&words("git log --format=%h")));
    assert!(!format.matches_segment(&words("git log --output=x")));
    let ls = Pattern::parse("ls *").unwrap();
    assert!(
        ls.matches_segment(&words("ls *.rs")),
        "a trailing star covers a glob word"
    );
    let one = Pattern::parse("ls *.rs").unwrap();
    assert!(
        !one.matches_segment(&words("ls *.rs")),
        "a glob word may expand into other words"
    );
}

#[test]
fn bad_patterns_say_what_was_expected() {
    for (text, says) in [("", "empty"), ("git 'status", "quote"), ("git * status", "last word")] {
        let error = Pattern::parse(text).unwrap_err().0;
        assert!(error.contains(says), "{text:?}: {error}");
    }
}

#[test]
fn argv_commands_are_words_and_a_shell_with_c_is_its_script() {
    let argv = |a: &[&str]| Script::argv(&a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    let plain = argv(&["rm", "-rf", "/"]);
    assert_eq!(plain.segments.unwrap()[0].values(), ["rm", "-rf", "/"]);
    let wrapped = argv(&["bash", "-lc", "git status; rm -rf /"]);
    assert_eq!(wrapped.segments.unwrap().len(), 2);
    let sub = argv(&["echo", "$(id)"]);
    assert_eq!(
        sub.segments.unwrap()[0].values(),
        ["echo", "$(id)"],
        "no shell reads an argv word"
    );
}

#[test]
fn a_call_with_two_different_commands_is_opaque_and_both_are_found() {
    let (_, script) = command_of(&serde_json::json!({"command": "ls", "cmd": "rm -rf /"})).unwrap();
    assert!(script.segments.is_err());
    assert!(script.found.iter().any(|c| c[0] == "rm"));
    let (pointer, same) = command_of(&serde_json::json!({"command": "ls", "cmd": "ls"})).unwrap();
    assert_eq!(pointer, "/command");
    assert!(same.segments.is_ok());
    let (_, odd) = command_of(&serde_json::json!({"command": 5, "cmd": "ls"})).unwrap();
    assert!(odd.segments.is_err(), "a command argument that is not a command");
}

#[test]
fn a_glob_word_carries_its_pattern_with_quoted_metacharacters_escaped() {
    let words = |t: &str| Script::parse(t).segments.unwrap().remove(0).words;
    let w = words(r#"ls '*'.r? "a[b"\]x*"#);
    assert_eq!(w[0].pattern, None, "a word without a glob has no pattern");
    assert_eq!(w[1].value, "*.r?");
    assert_eq!(w[1].pattern.as_deref(), Some(r"\*.r?"));
    assert_eq!(w[2].value, "a[b]x*");
    assert_eq!(w[2].pattern.as_deref(), Some(r"a\[b\]x*"));
    let w = words(r"ls [ab]\\*");
    assert_eq!(w[1].value, r"[ab]\*");
    assert_eq!(w[1].pattern.as_deref(), Some(r"[ab]\\*"));
}

mod allow;
mod dirs;
mod input;
mod secret;
mod wrappers;
