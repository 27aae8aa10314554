//! Deny and ask rules find their program behind each wrapper's options.

use super::found;
use crate::shell::Script;

#[track_caller]
fn finds(text: &str, command: &str) {
    let got = found(text);
    assert!(
        got.contains(&command.to_owned()),
        "{text:?}: {command:?} not in {got:?}"
    );
}

#[test]
fn words_after_a_redirection_belong_to_the_command() {
    finds("git 2>&1 push --force", "git push --force");
    finds("git >/dev/null push --force", "git push --force");
    finds("rm 2>/dev/null -rf x", "rm -rf x");
    finds("ls <&- x", "ls x");
}

#[test]
fn sudo_doas_and_su_options_are_read_as_theirs() {
    finds("sudo --user root rm -rf x", "rm -rf x");
    finds("sudo --us root rm -rf x", "rm -rf x");
    finds("sudo -uroot -E X=1 rm -rf x", "rm -rf x");
    finds("sudo -h rm -rf x", "rm -rf x");
    finds("doas -u root rm -rf x", "rm -rf x");
    finds("su - root -c 'rm -rf x'", "rm -rf x");
    finds("su --command='rm -rf x'", "rm -rf x");
}

#[test]
fn env_reads_split_strings_unsets_directories_and_a_lone_dash() {
    finds("env -S'rm -rf x'", "rm -rf x");
    finds("env -S 'rm -rf x' y", "rm -rf x y");
    finds("env --split-string='-i rm -rf x'", "rm -rf x");
    finds("env --spl='rm -rf x'", "rm -rf x");
    finds("env - rm -rf x", "rm -rf x");
    finds("env -i -u HOME --unset=PATH -C / X=1 rm -rf x", "rm -rf x");
}

#[test]
fn option_values_attached_or_not_and_long_prefixes_are_skipped() {
    finds("stdbuf --output L rm -rf x", "rm -rf x");
    finds("stdbuf --out=L -oL -e 0 rm -rf x", "rm -rf x");
    finds("timeout -k1 --signal KILL 5 rm x", "rm x");
    finds("timeout --sig=KILL 5 rm x", "rm x");
    finds("nice -5 rm x", "rm x");
    finds("nice --adj 5 rm x", "rm x");
    finds("time -p rm x", "rm x");
    finds("time -f '%e' rm x", "rm x");
    finds("exec -a name rm x", "rm x");
    finds("exec -cl rm x", "rm x");
    finds("xargs -n 1 -I {} --max-procs=2 rm x", "rm x");
    finds("chroot --userspec=a:b / rm x", "rm x");
    finds("setsid -w rm x", "rm x");
    finds("watch -n 1 -x rm x", "rm x");
    finds("command -p rm x", "rm x");
}

#[test]
fn a_shell_c_script_is_found_after_dashes_and_options() {
    finds("bash -c -- 'rm -rf x'", "rm -rf x");
    finds("sh -e -o pipefail -c 'rm -rf x' name", "rm -rf x");
    finds("bash --norc -c 'rm -rf x'", "rm -rf x");
}

#[test]
fn an_unknown_option_is_read_both_ways() {
    // `--frobnicate` may or may not take a value: both commands are found.
    finds("sudo --frobnicate rm -rf x", "rm -rf x");
    finds("sudo --frobnicate v rm -rf x", "rm -rf x");
}

#[test]
fn text_nested_past_the_limit_is_marked() {
    let shallow = Script::parse("eval eval rm x");
    assert!(!shallow.beyond_depth);
    assert!(shallow.found.iter().any(|c| c == &["rm", "x"]));
    let deep = Script::parse(&format!("{}rm x", "eval ".repeat(12)));
    assert!(deep.beyond_depth, "eval twelve times");
    let mut text = "rm x".to_owned();
    for _ in 0..10 {
        text = format!("sh -c {}", crate::shell::join(&[text]));
    }
    assert!(Script::parse(&text).beyond_depth, "sh -c ten times");
}
