//! `sed` in the read-only catalogue, proved against the real GNU sed: every
//! script the catalogue covers is run in a scratch project with `PATH`
//! pointing at logging stubs first, and none may write or create a file,
//! run a program or print a file it was not given; every refused form that
//! does harm is shown doing it (the control).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use tether_console::shell::{Script, catalogue};

/// What the file no covered command may print holds.
const MARK: &str = "TOPSECRET";

/// Scripts an agent runs with sed, each covered.
const COVERED: &[&str] = &[
    "sed -n '1,40p' f.txt",
    "sed -n 5p f.txt",
    "sed -n '$p' f.txt",
    "sed 's/a/b/g' f.txt",
    "sed -E 's/(a+)/[\\1]/' f.txt",
    "sed -r 's/a|b/x/2' f.txt",
    "sed -e 's|/|_|g' -e '/^$/d' f.txt",
    "sed -n '/start/,/end/p' f.txt",
    "sed '1~2d' f.txt",
    "sed '0,/a/s//X/' f.txt",
    "sed -n '\\%a%p' f.txt",
    "sed -n '\\%a%Ip' f.txt",
    "sed '2,+1d' f.txt",
    "sed '2,~4d' f.txt",
    "sed '/a/!d' f.txt",
    "sed ':a;N;$!ba;s/\\n/ /g' f.txt",
    "sed 'y/abc/xyz/' f.txt",
    "sed '1i header' f.txt",
    "sed '$a footer' f.txt",
    "sed '2c changed' f.txt",
    "sed -n l f.txt",
    "sed = f.txt",
    "sed q5 f.txt",
    "sed 2Q f.txt",
    "sed -n '/a/{p;q}' f.txt",
    "sed -n '/a/ { s/a/A/p ; }' f.txt",
    "sed -s -n 1p f.txt g.txt",
    "sed -z 's/a/b/' f.txt",
    "sed --posix -n p f.txt",
    "sed -n F f.txt",
    "sed 's/a/b/;tx;s/b/c/;:x' f.txt",
    "sed -n 's/\\//|/gp' f.txt",
    "sed 's,a\\,b,X,' f.txt",
    "sed --quiet 1p f.txt",
    "sed --expr=p -n f.txt",
    "sed --sandbox -n p f.txt",
    "sed -n -- 1p f.txt",
    "sed -n 'h;x;G;H;g;p' f.txt",
    "sed '$!N;P;D' f.txt",
    "sed '#n\n1p' f.txt",
    "sed 's/a/\\n/;P;D' f.txt",
    "sed 's/x/w/g' f.txt",
    "sed 's/e/r/' f.txt",
    "sed -n '/w/p' f.txt",
    "cat f.txt | sed -n 2p",
];

/// Forms that write, run a program or read a file not given, each refused;
/// each does harm when run.
const REFUSED: &[&str] = &[
    "sed -n 'w out.txt' f.txt",
    "sed 's/a/b/w out.txt' f.txt",
    "sed 's/a/b/gw out.txt' f.txt",
    "sed 'W out.txt' f.txt",
    "sed -n '/a/{w out.txt\n}' f.txt",
    "sed -e p -e 'w out.txt' f.txt",
    "sed -i 's/a/b/' f.txt",
    "sed -ni 1p f.txt",
    "sed --in-pl=.bak 's/a/b/' f.txt",
    "sed -Ei.bak 's/a/b/' f.txt",
    "sed '1e touch pwned' f.txt",
    "sed 's/.*/touch pwned/e' f.txt",
    "sed e cmds.txt",
    "sed '$!{e touch pwned\n}' f.txt",
    "sed '1r other.txt' f.txt",
    "sed '1R other.txt' f.txt",
    "sed -f script.sed f.txt",
    "sed --file=script.sed f.txt",
    // GNU sed ends a comment at the line break, a backslash before it or not.
    "sed -n '#\\\n1e touch pwned\n1p' f.txt",
    "sed -n '# print the first line \\\nw out.txt\n1p' f.txt",
];

fn covered(command: &str, cwd: &Path) -> bool {
    let script = Script::parse(command);
    script.segments.is_ok_and(|segments| {
        !segments.is_empty()
            && segments
                .iter()
                .all(|segment| catalogue::covers(segment, Some(cwd)).is_ok())
    })
}

/// A scratch project, and outside it a stub directory whose programs log
/// their names to `log` instead of running.
struct Scratch {
    project: tempfile::TempDir,
    stubs: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let project = tempfile::tempdir().unwrap();
        let p = project.path();
        std::fs::write(p.join("f.txt"), "a line\nstart\nb/c\n\nabc\nend\naaa\n").unwrap();
        std::fs::write(p.join("g.txt"), "g1\ng2\n").unwrap();
        std::fs::write(p.join("cmds.txt"), "touch pwned\n").unwrap();
        std::fs::write(p.join("script.sed"), "w out.txt\n").unwrap();
        // Named by no covered command: only `r`/`R` can print it.
        std::fs::write(p.join("other.txt"), format!("{MARK}\n")).unwrap();
        let stubs = tempfile::tempdir().unwrap();
        let log = stubs.path().join("log");
        for program in ["touch", "rm", "id", "sh", "bash", "cat", "ls", "curl"] {
            let stub = stubs.path().join(program);
            std::fs::write(
                &stub,
                format!("#!/bin/sh\necho {program} \"$@\" >> {}\n", log.display()),
            )
            .unwrap();
            std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Self { project, stubs }
    }

    /// Every file's name and content.
    fn state(&self) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(self.project.path())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect()
    }

    /// Runs `command` under bash with the stubs first on PATH: what it
    /// printed, and whether it did harm (a file written or created, a stub
    /// run, another file's secret printed).
    fn run(&self, command: &str) -> (String, Option<String>) {
        let before = self.state();
        let log = self.stubs.path().join("log");
        let _ = std::fs::remove_file(&log);
        let path = format!("{}:/usr/bin:/bin", self.stubs.path().display());
        // `cat f.txt | sed …` needs the real cat: only sed's own children
        // meet the stubs.
        let command = command.replace("cat f.txt |", "/bin/cat f.txt |");
        // A script that never ends must not hang the suite.
        let out = Command::new("timeout")
            .args(["20", "/bin/bash", "-c", &command])
            .current_dir(self.project.path())
            .env("PATH", path)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let after = self.state();
        let harm = if after != before {
            Some(format!(
                "files changed: {:?}",
                after
                    .keys()
                    .filter(|k| before.get(*k) != after.get(*k))
                    .collect::<Vec<_>>()
            ))
        } else if let Ok(ran) = std::fs::read_to_string(&log) {
            Some(format!("ran {ran}"))
        } else if printed.contains(MARK) {
            Some("printed other.txt".into())
        } else {
            None
        };
        (printed, harm)
    }
}

fn have_gnu_sed() -> bool {
    let found = Command::new("sed")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU sed"));
    if !found {
        assert!(std::env::var_os("CI").is_none(), "GNU sed must be installed in CI");
        eprintln!("skipped: no GNU sed on PATH");
    }
    found
}

#[test]
fn every_covered_sed_script_only_prints() {
    if !have_gnu_sed() {
        return;
    }
    let scratch = Scratch::new();
    for command in COVERED {
        assert!(covered(command, scratch.project.path()), "`{command}` is covered");
        let (printed, harm) = scratch.run(command);
        assert_eq!(harm, None, "`{command}` did harm; it printed {printed}");
    }
}

#[test]
fn every_refused_sed_form_does_harm_when_run() {
    if !have_gnu_sed() {
        return;
    }
    for command in REFUSED {
        let scratch = Scratch::new();
        assert!(!covered(command, scratch.project.path()), "`{command}` is refused");
        let (printed, harm) = scratch.run(command);
        assert!(
            harm.is_some(),
            "`{command}` did no harm (the control), it printed {printed}"
        );
    }
}

#[test]
fn scripts_sed_would_read_otherwise_are_refused() {
    let scratch = Scratch::new();
    for command in [
        "sed 'p;{'",
        "sed '}'",
        "sed 's/a/b'",
        "sed 's/a/b/x' f.txt",
        "sed 'k' f.txt",
        "sed -n 'p' ../f.txt",
        "sed -n p other.txt /etc/passwd",
        "sed --in-place p f.txt",
        "sed -s -i p f.txt",
        "sed --follow-symlinks p f.txt",
        "sed -n '1{p' f.txt",
        "sed 'y/ab/x' f.txt",
    ] {
        assert!(!covered(command, scratch.project.path()), "`{command}` is refused");
    }
}
