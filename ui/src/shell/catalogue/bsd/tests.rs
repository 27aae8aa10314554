//! macOS's programs read with their own grammars, the userland injected:
//! the system, the file `PATH` finds and its answer to `--version` are
//! what each test says (these tests run on Linux; macOS itself is not run
//! here).

use std::path::{Path, PathBuf};

use super::super::shadow::userland::{Answer, Origin, Os, Userland, as_if, decide, ends_at_operand};
use super::{Parser, Probe, find};
use crate::shell::Script;

fn covered(command: &str, cwd: &Path) -> Result<(), String> {
    let script = Script::parse(command);
    for segment in &script.segments.map_err(|o| o.why)? {
        super::super::covers(segment, Some(cwd))?;
    }
    Ok(())
}

/// How macOS's own program answers `--version`.
fn apple(name: &str) -> Answer {
    match find(name).map(|b| b.probe) {
        Some(Probe::Prints(line)) => Answer::Ran {
            success: true,
            status: "exit status: 0".into(),
            out: Some(format!("{line}2.6.0-FreeBSD")),
            err: None,
        },
        Some(Probe::Refuses(line)) => refusing(line),
        None => refusing(&format!("{name}: illegal option -- -")),
    }
}

fn refusing(line: &str) -> Answer {
    Answer::Ran {
        success: false,
        status: "exit status: 1".into(),
        out: None,
        err: Some(line.into()),
    }
}

/// macOS, every program in `/usr/bin`, answering as Apple's.
fn macos(name: &str) -> (Os, Option<PathBuf>, Answer) {
    (Os::MacOs, Some(Path::new("/usr/bin").join(name)), apple(name))
}

/// macOS, but every program found in Homebrew's directory.
fn homebrew(name: &str) -> (Os, Option<PathBuf>, Answer) {
    (Os::MacOs, Some(Path::new("/opt/homebrew/bin").join(name)), apple(name))
}

/// Linux, where a program answers as Apple's does.
fn linux(name: &str) -> (Os, Option<PathBuf>, Answer) {
    (Os::Other, Some(Path::new("/usr/bin").join(name)), apple(name))
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("in.txt"), "b\na\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "# x\n").unwrap();
    std::fs::write(dir.path().join("pats.txt"), "main\n").unwrap();
    dir
}

const COVERED: &[&str] = &[
    "ls",
    "ls -l src",
    "ls -la src",
    "ls -1AF",
    "ls -G src",
    "ls --color=auto src",
    "ls --col src",
    "ls -R src",
    "ls -l@e% src",
    "cat -n in.txt",
    "cat -benstuv in.txt README.md",
    "cat in.txt -",
    "head in.txt",
    "head -n 5 in.txt",
    "head -n5 README.md",
    "head -5 in.txt",
    "head --lines=5 in.txt",
    "head --li 5 in.txt",
    "head -c 10 -- in.txt",
    "tail -n +2 in.txt",
    "tail -r in.txt",
    "tail -qv -c 3 in.txt README.md",
    "tail -3 in.txt",
    "wc -l in.txt",
    "wc -clmwL in.txt src/main.rs",
    "grep -n main src/main.rs",
    "grep main src/main.rs -n",
    "grep -5n main src/main.rs",
    "grep -C 2 --context=3 main src/main.rs",
    "grep -e main -f pats.txt in.txt src/main.rs",
    "grep --fixed main in.txt",
    "grep -V",
    "grep -rn TODO src",
    "grep -R TODO src",
    "uniq -c in.txt",
    "uniq -3 in.txt",
    "uniq -Dprepend -i in.txt",
    "uniq --all-repeated=separate --skip-f 1 in.txt",
    "cut -d , -f 1 in.txt",
    "cut -c1-3 -- in.txt README.md",
    "stat in.txt",
    "stat -f %z in.txt",
    "stat -Lx src",
    "du -sh src",
    "du -d 1",
    "du --si -c src",
];

#[test]
fn macos_own_programs_are_covered_with_their_own_grammar() {
    let p = project();
    let _macos = as_if(macos);
    for command in COVERED {
        assert_eq!(covered(command, p.path()), Ok(()), "{command}");
    }
}

#[test]
fn a_bsd_program_outside_the_system_directories_or_off_macos_is_not_covered() {
    let p = project();
    for (seen, place) in [(homebrew as fn(&str) -> _, "Homebrew"), (linux, "Linux")] {
        let _seen = as_if(seen);
        for command in [
            "ls -l src",
            "head -n 5 in.txt",
            "cat in.txt",
            "grep -n main in.txt",
            "wc -l in.txt",
        ] {
            let why = covered(command, p.path()).unwrap_err();
            assert!(why.contains("PATH finds is not GNU"), "{place}: {command}: {why}");
        }
    }
}

#[test]
fn options_end_at_the_first_operand_where_getopt_stops_there() {
    let p = project();
    let outside = format!("../{}", p.path().file_name().unwrap().to_string_lossy());
    let _macos = as_if(macos);
    // macOS's head reads the files `-n` and `../x`: the second is outside.
    for command in [
        "head README.md -n ../x".to_owned(),
        "head in.txt -n ../x".to_owned(),
        "tail in.txt -c ../x".to_owned(),
        "cat in.txt -n ../x".to_owned(),
        "wc in.txt -l ../x".to_owned(),
        "cut in.txt -f ../x".to_owned(),
        "stat in.txt -f ../x".to_owned(),
        "du src -d ../x".to_owned(),
        format!("ls src -d {outside}/.."),
    ] {
        let why = covered(&command, p.path()).unwrap_err();
        assert!(why.contains("outside the working directory"), "{command}: {why}");
    }
    // grep's getopt_long moves operands after the options: `-f` still
    // takes a file, which is read.
    let why = covered("grep main in.txt -f ../pats", p.path()).unwrap_err();
    assert!(why.contains("`../pats` is outside"), "{why}");
    // A word macOS's getopt reads as a flag takes no value: `ls -I` (GNU's
    // `--ignore PATTERN`) and `sed`-like differences.
    let why = covered("ls -I ../", p.path()).unwrap_err();
    assert!(why.contains("`../` is outside"), "{why}");
    // The same word after the first operand is an operand whose name
    // may be anything inside: a file `-n` is read.
    std::fs::write(p.path().join("-n"), "x").unwrap();
    assert_eq!(covered("head in.txt -n", p.path()), Ok(()));
}

#[test]
fn options_macos_programs_do_not_have_or_that_act_elsewhere_are_refused() {
    let p = project();
    let _macos = as_if(macos);
    for (command, said) in [
        // GNU's options that macOS's do not accept.
        ("ls --all", "`--all` is not an option"),
        ("head -q in.txt", "`-q` is not an option"),
        ("cat -A in.txt", "`-A` is not an option"),
        ("cat --number in.txt", "`--number` is not an option"),
        ("wc --lines in.txt", "`--lines` is not an option"),
        ("grep -P x in.txt", "`-P` is not an option"),
        ("grep -T x in.txt", "`-T` is not an option"),
        ("tail -5f in.txt", "`-5f` is not an option"),
        // An abbreviation both `--color` and `--context` could be.
        ("grep --co x in.txt", "ambiguous"),
        ("cat -l in.txt", "waits for a lock"),
        ("wc -l in.txt --libxo=json", "libxo"),
        ("wc --libxo json in.txt", "libxo"),
        ("wc -- --libxo:W in.txt", "libxo"),
        ("grep -d recurse x .", "is not one of"),
        ("grep -f ../pats x in.txt", "outside"),
        ("head -n 3 ../x", "outside"),
        // `-` is a file of that name to these three, not standard input.
        ("head -", "a file named `-`"),
        ("tail -n 2 -", "a file named `-`"),
        ("wc -l in.txt -", "a file named `-`"),
        // `uniq IN OUT` writes OUT, and `uniq IN -c` writes `-c`.
        ("uniq in.txt out.txt", "a file it writes"),
        ("uniq in.txt -c", "a file it writes"),
        ("uniq -Dbogus in.txt", "is not one of"),
        ("uniq -z in.txt", "`-z` is not an option"),
        ("cut --fields=1 in.txt", "`--fields=1` is not an option"),
        ("stat -c %s in.txt", "`-c` is not an option"),
        ("du -L src", "follows links"),
        ("du --apparent-size src", "`--apparent-size` is not an option"),
    ] {
        let why = covered(command, p.path()).unwrap_err();
        assert!(why.contains(said), "{command}: {why}");
    }
}

#[test]
fn each_parser_ends_options_where_apples_libc_does() {
    for posixly_correct in [false, true] {
        assert!(ends_at_operand(Some(Origin::Bsd(Parser::Getopt)), posixly_correct));
        assert!(ends_at_operand(Some(Origin::Bsd(Parser::InOrder)), posixly_correct));
        assert_eq!(
            ends_at_operand(Some(Origin::Bsd(Parser::Permuting)), posixly_correct),
            posixly_correct
        );
    }
}

#[test]
fn grep_options_in_the_environment_make_grep_not_covered() {
    use std::ffi::OsStr;
    assert_eq!(super::grep::unread_options(None), Ok(()));
    assert_eq!(super::grep::unread_options(Some(OsStr::new(""))), Ok(()));
    let why = super::grep::unread_options(Some(OsStr::new("-r --include=*"))).unwrap_err();
    assert!(why.contains("GREP_OPTIONS"), "{why}");
}

#[test]
fn grep_r_is_judged_by_what_its_walk_reaches() {
    let p = project();
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "KEY").unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("src/escape")).unwrap();
    let _macos = as_if(macos);
    // fts skips links unless -S: src's link out is not followed.
    assert_eq!(covered("grep -r KEY src", p.path()), Ok(()));
    assert_eq!(covered("grep -RO KEY src", p.path()), Ok(()));
    for (command, said) in [
        ("grep -r KEY .", ".env"),
        ("grep -r KEY", ".env"),
        ("grep -R KEY", ".env"),
        ("grep -rS KEY src", "link"),
        ("grep -S -r KEY src", "link"),
        // Its own filters are not read: the walk is judged whole.
        ("grep -r --exclude=.env KEY .", ".env"),
        ("grep -r --exclude-dir=src --include=*.rs KEY .", ".env"),
    ] {
        let why = covered(command, p.path()).unwrap_err();
        assert!(why.contains(said), "{command}: {why}");
    }
}

#[test]
fn macos_is_recognised_only_on_macos_at_a_system_path_answering_as_apples() {
    let coreutils = Origin::Gnu("coreutils");
    let at = |dir: &str| Path::new(dir).join("head");
    let head = apple("head");
    assert_eq!(
        decide("head", coreutils, Os::MacOs, Some(&at("/usr/bin")), &head),
        Ok(Userland::MacOs)
    );
    assert_eq!(
        decide("ls", coreutils, Os::MacOs, Some(Path::new("/bin/ls")), &apple("ls")),
        Ok(Userland::MacOs)
    );
    assert_eq!(
        decide(
            "grep",
            Origin::Gnu("grep"),
            Os::MacOs,
            Some(Path::new("/usr/bin/grep")),
            &apple("grep")
        ),
        Ok(Userland::MacOs)
    );
    // GNU coreutils first on PATH (Homebrew's gnubin): GNU's grammar.
    let gnu = Answer::Ran {
        success: true,
        status: "exit status: 0".into(),
        out: Some("head (GNU coreutils) 9.5".into()),
        err: None,
    };
    assert_eq!(
        decide(
            "head",
            coreutils,
            Os::MacOs,
            Some(&at("/opt/homebrew/opt/coreutils/libexec/gnubin")),
            &gnu
        ),
        Ok(Userland::Catalogued)
    );
    let busybox = refusing("head: unrecognized option: version");
    let timeout = Answer::Failed("`head --version` took more than 2 s".into());
    for (os, found, answer, said) in [
        (Os::Other, Some(at("/usr/bin")), &head, "not GNU coreutils'"),
        (
            Os::MacOs,
            Some(at("/usr/local/bin")),
            &head,
            "PATH finds /usr/local/bin/head",
        ),
        (Os::MacOs, Some(at("/usr/bin/../local/bin")), &head, "PATH finds"),
        (Os::MacOs, Some(at("/bin/x")), &head, "PATH finds"),
        (Os::MacOs, None, &head, "PATH finds no file"),
        (Os::MacOs, Some(at("/usr/bin")), &busybox, "nor does it answer"),
        (Os::MacOs, Some(at("/usr/bin")), &timeout, "nor does it answer"),
        (Os::MacOs, Some(at("/usr/bin")), &apple("cat"), "nor does it answer"),
    ] {
        let why = decide("head", coreutils, os, found.as_deref(), answer).unwrap_err();
        assert!(why.contains(said), "{os:?} {found:?}: {why}");
    }
    // A program the macOS grammars do not cover stays not covered.
    let sed = decide(
        "sed",
        Origin::Gnu("sed"),
        Os::MacOs,
        Some(Path::new("/usr/bin/sed")),
        &refusing("sed: illegal option -- -"),
    );
    assert!(sed.unwrap_err().contains("no grammar for macOS's `sed`"));
}

/// docs/policy.md lists macOS's grammars from these tables: regenerate it
/// with `TETHER_BLESS_DOCS=1 cargo test -p tether --lib catalogue`.
#[test]
fn the_docs_list_the_macos_grammars_the_code_enforces() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/policy.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- catalogue-macos:start -->\n", "<!-- catalogue-macos:end -->");
    let from = text.find(start).expect("the macOS list's start marker") + start.len();
    let to = text.find(end).expect("the macOS list's end marker");
    let generated = super::markdown();
    if std::env::var_os("TETHER_BLESS_DOCS").is_some() {
        std::fs::write(&path, format!("{}{generated}{}", &text[..from], &text[to..])).unwrap();
        return;
    }
    assert!(
        text[from..to] == generated,
        "docs/policy.md's macOS list differs from the tables: run TETHER_BLESS_DOCS=1 cargo test -p tether --lib catalogue"
    );
}
