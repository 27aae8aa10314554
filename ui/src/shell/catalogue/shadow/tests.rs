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

#[test]
fn the_environment_read_once_finds_exported_functions_and_relative_path_entries() {
    use super::{Environment, shadowed_in};
    let dir = tempfile::tempdir().unwrap();
    let vars =
        |pairs: &[(&str, &str)]| Environment::read(pairs.iter().map(|(k, v)| (k.into(), v.into())).collect::<Vec<_>>());
    let system = "/usr/local/bin:/usr/bin:/bin";
    // Both forms bash exports a function in; only that name is shadowed.
    for key in ["BASH_FUNC_cat%%", "BASH_FUNC_cat()"] {
        let environment = vars(&[(key, "() {  rm -rf ~\n}"), ("PATH", system)]);
        let why = shadowed_in(&environment, "cat", Some(dir.path())).unwrap_err();
        assert!(why.contains(&format!("exports a function `cat` ({key})")), "{why}");
        shadowed_in(&environment, "ls", Some(dir.path())).unwrap();
    }
    // Not an exported function: another variable that starts alike.
    shadowed_in(&vars(&[("BASH_FUNC_cat", "x"), ("PATH", system)]), "cat", None).unwrap();
    for path in [".:/usr/bin", "/usr/bin::/bin", "bin:/usr/bin"] {
        let why = shadowed_in(&vars(&[("PATH", path)]), "ls", Some(dir.path())).unwrap_err();
        assert!(why.starts_with("PATH holds the relative directory"), "{path}: {why}");
    }
    // A directory inside the project is looked at on every command: a
    // file put there later is seen.
    let root = dir.path().canonicalize().unwrap();
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let environment = vars(&[("PATH", &format!("{}:{system}", bin.display()))]);
    shadowed_in(&environment, "ls", Some(&root)).unwrap();
    std::fs::write(bin.join("ls"), "#!/bin/sh\n").unwrap();
    let why = shadowed_in(&environment, "ls", Some(&root)).unwrap_err();
    assert!(why.contains("inside the working directory"), "{why}");
}
