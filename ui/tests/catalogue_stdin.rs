//! Standard input redirected at the end of a pipeline or a list is the last
//! command's (issue 47): the real bash gives the file to that command
//! alone, and the catalogue judges it as that command's input — a secret
//! or a file outside the project there is not covered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod real_bash_support;

use real_bash_support::{bash, explain_with, have_bash};

#[test]
fn the_file_a_pipelines_last_redirection_names_is_what_its_last_command_reads() {
    if !have_bash() {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("four.txt"), "1\n2\n3\n4\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("in.txt"), "a\nb\n").unwrap();
    std::fs::write(root.join("src/in.txt"), "1\n2\n3\n").unwrap();
    std::fs::write(root.join(".env"), "A=1\nB=2\nC=3\nD=4\nE=5\n").unwrap();
    let four = outside.path().join("four.txt").canonicalize().unwrap();
    let four = four.to_str().unwrap();
    // (command, what bash prints: the count of the file, never `echo`'s one
    // line, whether it is covered)
    let cases = [
        ("echo x | wc -l < in.txt".to_owned(), "2", true),
        ("echo x && wc -l < in.txt".to_owned(), "x\n2", true),
        ("cd src && wc -l < in.txt".to_owned(), "3", true),
        ("echo x | wc -l < .env".to_owned(), "5", false),
        (format!("echo x | wc -l < {four}"), "4", false),
    ];
    for (command, printed, covered) in &cases {
        assert_eq!(bash(command, &[], &root).trim(), *printed, "bash ran `{command}`");
        let (ok, explained) = explain_with(command, &root, &[]);
        assert_eq!(ok, *covered, "`{command}`:\n{explained}");
    }
}
