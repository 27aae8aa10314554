use std::path::Path;

use super::manpath::searched;
use super::userland::{Origin, ends_at_operand, origin, verdict};
use crate::shell::Script;

fn covered(command: &str, cwd: &Path) -> Result<(), String> {
    let script = Script::parse(command);
    for segment in &script.segments.map_err(|o| o.why)? {
        super::super::covers(segment, Some(cwd))?;
    }
    Ok(())
}

#[test]
fn only_the_gnu_or_util_linux_answer_to_version_is_the_implementation_the_grammar_describes() {
    let sed = Origin::Gnu("sed");
    assert_eq!(verdict("sed", sed, &Ok("sed (GNU sed) 4.9".into())), Ok(()));
    assert_eq!(
        verdict("ls", Origin::Gnu("coreutils"), &Ok("ls (GNU coreutils) 9.1".into())),
        Ok(())
    );
    assert_eq!(
        verdict("column", Origin::UtilLinux, &Ok("column from util-linux 2.38.1".into())),
        Ok(())
    );
    // BSD's (macOS's) answer on standard error, busybox's, uutils', another
    // package's, another program's.
    for (name, origin, answer) in [
        (
            "sed",
            sed,
            Err("`sed --version` says `sed: illegal option -- -` (exit status: 1)".to_owned()),
        ),
        (
            "ls",
            Origin::Gnu("coreutils"),
            Ok("ls (uutils coreutils) 0.0.27".to_owned()),
        ),
        (
            "head",
            Origin::Gnu("coreutils"),
            Err("`head --version` says `head: unrecognized option: version` (exit status: 1)".into()),
        ),
        (
            "grep",
            Origin::Gnu("grep"),
            Ok("grep (BSD grep, GNU compatible) 2.6.0-FreeBSD".into()),
        ),
        (
            "diff",
            Origin::Gnu("diffutils"),
            Ok("Apple diff (based on FreeBSD diff)".into()),
        ),
        ("cat", Origin::Gnu("coreutils"), Ok("sed (GNU sed) 4.9".into())),
        (
            "rev",
            Origin::UtilLinux,
            Err("`rev --version` cannot be run: No such file".into()),
        ),
    ] {
        let why = verdict(name, origin, &answer).unwrap_err();
        assert!(why.starts_with(&format!("the `{name}` PATH finds is not ")), "{why}");
        assert!(why.contains("its options mean other things"), "{why}");
    }
    let why = verdict(
        "sed",
        sed,
        &Err("`sed --version` says `sed: illegal option -- -` (exit status: 1)".into()),
    );
    assert!(
        why.unwrap_err()
            .contains("not GNU sed's (`sed --version` says `sed: illegal option -- -`")
    );
}

#[test]
fn every_catalogued_program_says_whose_options_it_reads() {
    for program in super::super::programs() {
        assert!(origin(program.name).is_some(), "`{}` has no origin", program.name);
    }
    assert_eq!(origin("rm"), None);
}

#[test]
fn builtins_always_and_getopt_programs_under_posixly_correct_stop_at_the_first_operand() {
    assert!(ends_at_operand(origin("command"), false));
    assert!(!ends_at_operand(origin("head"), false));
    assert!(ends_at_operand(origin("head"), true));
    assert!(ends_at_operand(origin("file"), true));
    assert!(!ends_at_operand(origin("git"), true));
    assert!(!ends_at_operand(origin("rg"), true));
}

#[test]
fn a_builtins_option_after_its_first_operand_is_an_operand() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    // bash runs `rm a.txt -v`: `command` looks nothing up without -v first.
    let why = covered("command rm a.txt -v", dir.path()).unwrap_err();
    assert!(why.contains("-v"), "{why}");
    covered("command -v rm", dir.path()).unwrap();
    covered("type ls -a", dir.path()).unwrap();
}

#[test]
fn man_is_not_covered_where_its_search_path_reaches_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let venv = root.join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    let system = "/usr/local/bin:/usr/bin:/bin";
    searched(None, Some(system), &[], &root).unwrap();
    let with_venv = format!("{}:{system}", venv.display());
    let why = searched(None, Some(&with_venv), &[], &root).unwrap_err();
    assert!(
        why.contains("/.venv/bin`, so man searches") && why.contains("inside the working directory"),
        "{why}"
    );
    let why = searched(
        Some(&format!("/usr/share/man:{}/man", root.display())),
        Some(system),
        &[],
        &root,
    )
    .unwrap_err();
    assert!(why.starts_with("MANPATH holds"), "{why}");
    assert!(
        searched(Some("man"), Some(system), &[], &root)
            .unwrap_err()
            .contains("relative")
    );
    assert!(
        searched(None, Some("bin:/usr/bin"), &[], &root)
            .unwrap_err()
            .contains("relative")
    );
    // A directory holding the project.
    let parent = root.parent().unwrap().display().to_string();
    assert!(
        searched(Some(&parent), Some(system), &[], &root)
            .unwrap_err()
            .contains("holds the working directory")
    );
    let config = (
        "~/.manpath".to_owned(),
        format!(
            "# mine\nMANPATH_MAP /opt/bin {}/docs/man\nSECTION 1 8\n",
            root.display()
        ),
    );
    let why = searched(None, Some(system), &[config], &root).unwrap_err();
    assert!(why.starts_with("~/.manpath names"), "{why}");
    let system_config = (
        "/etc/manpath.config".to_owned(),
        "MANPATH_MAP /bin /usr/share/man\n".to_owned(),
    );
    searched(None, Some(system), &[system_config], &root).unwrap();
}
