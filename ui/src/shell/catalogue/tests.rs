use std::path::Path;

use super::*;
use crate::shell::Script;

fn verdict(command: &str, cwd: &Path) -> Result<(), String> {
    let script = Script::parse(command);
    let segments = script.segments.map_err(|o| o.why)?;
    for segment in &segments {
        covers(segment, Some(cwd))?;
    }
    Ok(())
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("in.txt"), "b\na\n").unwrap();
    dir
}

#[test]
fn ordinary_reads_are_covered() {
    let p = project();
    for ok in [
        "ls",
        "ls -la src",
        "cat src/main.rs",
        "head -n 40 src/main.rs",
        "head -20 in.txt",
        "tail -n +5 in.txt",
        "wc -l src/*.rs",
        "sort -u in.txt",
        "sort -rn -k2 in.txt",
        "uniq -c in.txt",
        "grep -n main src/main.rs",
        "grep -rn TODO src",
        "rg 'fn main' src",
        "rg -n main",
        "find src -name '*.rs' -type f",
        "echo hello world",
        "printf '%s\\n' x",
        "pwd",
        "date +%Y",
        "command -v cargo",
        "test -f in.txt",
        "cut -d: -f1 in.txt",
        "diff in.txt src/main.rs",
        "stat in.txt",
        "du -sh src",
        "tree -L 2 src",
        "sort --version-s in.txt",
        "ls --colo=never",
        "ls -lah",
        "ls -Fa src",
        "diff -u in.txt src/main.rs",
        "sort -c in.txt",
        "grep -rn --include='*.rs' main src",
        "grep -r -f in.txt src",
        "[ -d src ]",
        "test -n x -a -f in.txt",
        "man ls",
        "man 5 crontab",
    ] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
    }
}

#[test]
fn options_and_operands_that_write_run_or_read_elsewhere_are_refused() {
    let p = project();
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    for (refused, says) in [
        ("sort --compress-prog=sh in.txt", "runs another program"),
        ("sort -S 64k --compress-program=sh in.txt", "runs another program"),
        ("sort --o=x in.txt", "writes a file"),
        ("sort -uo x in.txt", "writes a file"),
        ("sort -ox in.txt", "writes a file"),
        ("sort --files0-from=- ", "reads files named"),
        ("uniq in.txt out.txt", "one operand more"),
        ("find . -name x -delete", "deletes"),
        ("find . -exec rm {} ;", "runs another program"),
        ("find -L .", "follows links"),
        ("rg --pre ./x pattern", "runs another program"),
        ("fd -x rm", "runs another program"),
        ("tree -o out", "writes a file"),
        ("tree -R -L 1", "00Tree.html"),
        ("tree -Lo 2 out", "does not read as its value"),
        ("printf -v PATH /tmp", "assigns a shell variable"),
        ("date 010100002030", "does not start with"),
        ("command ls", "covered only with one of"),
        ("cat .env", "may hold secrets"),
        ("cat .ENV", "may hold secrets"),
        ("cat .en?", "may hold secrets"),
        ("cat /etc/passwd", "outside the working directory"),
        ("cat ../x", "outside the working directory"),
        ("grep -r KEY .", "may hold secrets"),
        ("./cat in.txt", "given as a path"),
        ("python3 -c 'print(1)'", "not in the read-only catalogue"),
        ("sort --c in.txt", "ambiguous"),
        ("grep -d recurse x .", "is not one of"),
        // A short option that takes nothing bundles: `-ur` is `-u -r`,
        // `-ul` is `-u -l` (diff -urN . x prints every file, .env too,
        // and follows links out).
        ("diff -urN . src", "compares whole trees"),
        ("diff -ul in.txt src/main.rs", "runs another program"),
        ("diff -cr . src", "compares whole trees"),
        // tree's --info takes nothing: the next word is a directory.
        ("tree --noreport /", "outside the working directory"),
        ("tree --info", "prints lines of each directory's .info file"),
        // An option's path value is read, not walked: the walk is still `.`.
        ("grep -r -f in.txt", "may hold secrets"),
        ("grep -r --exclude-from=in.txt KEY", "may hold secrets"),
        ("rg -uu --ignore-file in.txt KEY", "may hold secrets"),
        // A revision's tree is not the working tree.
        // bash evaluates `-v NAME`'s array subscript: this runs touch.
        ("test -v 'a[$(touch p)]'", "runs the command substitutions"),
        ("[ -v 'a[$(touch p)]' ]", "runs the command substitutions"),
        // man-db formats a page name with a slash as a file.
        ("man /etc/passwd", "formats the file with groff"),
        ("man ./.env", "formats the file with groff"),
        // A page of the project is groff input: `.so /proc/self/environ`
        // in it prints the agent's environment.
        ("man ./in.txt", "formats the file with groff"),
        ("man src/main.rs", "formats the file with groff"),
    ] {
        match verdict(refused, p.path()) {
            Ok(()) => panic!("{refused:?} was covered"),
            Err(why) => assert!(why.contains(says), "{refused:?}: {why:?} does not say {says:?}"),
        }
    }
}

#[test]
fn a_link_out_of_the_project_is_outside_and_a_glob_is_judged_by_its_matches() {
    let p = project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("escape")).unwrap();
    assert!(
        verdict("cat escap?/secret.txt", p.path())
            .unwrap_err()
            .contains("outside")
    );
    assert!(
        verdict("cat escape/secret.txt", p.path())
            .unwrap_err()
            .contains("outside")
    );
    // A file named like an option, matched by `*`, is read as one.
    std::fs::write(p.path().join("-ofoo"), "").unwrap();
    assert!(verdict("sort *", p.path()).unwrap_err().contains("writes a file"));
    assert_eq!(verdict("cat *.txt", p.path()), Ok(()));
    // bash's bracket expressions are not globset's: to bash these match
    // `-ofoo` (`sort -ofoo` writes foo); globset matched nothing or less.
    for bracket in ["sort [[:punct:]]*", "sort [!\\]]*", "sort [-]*"] {
        let why = verdict(bracket, p.path()).unwrap_err();
        assert!(why.contains("bracket expression"), "{bracket}: {why}");
    }
}

#[test]
fn a_bracket_pattern_names_a_secret_when_bash_could_expand_it_to_one() {
    use crate::shell::Word;
    let p = project();
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    let word = |w: &str| {
        let word = Word {
            value: w.to_owned(),
            glob: true,
            pattern: Some(w.to_owned()),
            zsh: crate::shell::Zsh::Same,
        };
        Segment::of(vec![word], 0..0)
    };
    for secret in [".[e]nv", "[.]env", "*[v]", ".[[:alpha:]]nv", "[!a]env"] {
        assert!(names_secret(&word(secret), Some(p.path())).is_some(), "{secret}");
    }
    for plain in ["^[[:space:]]*fn ", "src/[m]ain.rs", "[", "x[y"] {
        assert_eq!(names_secret(&word(plain), Some(p.path())), None, "{plain}");
    }
}

#[test]
fn a_pattern_over_a_name_bash_reads_otherwise_is_not_covered() {
    use std::os::unix::ffi::OsStrExt;
    let p = project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
    std::fs::create_dir(p.path().join("odd")).unwrap();
    // A name that is not UTF-8, linked out: bash passes its bytes, which
    // the judge cannot (it read `\u{fffd}`, a name that does not exist).
    let name = std::ffi::OsStr::from_bytes(b"\xff");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), p.path().join("odd").join(name)).unwrap();
    let why = verdict("cat odd/*", p.path()).unwrap_err();
    assert!(why.contains("not UTF-8"), "{why}");
    // `?` counts characters in a UTF-8 locale, bytes in C.
    std::fs::create_dir(p.path().join("wide")).unwrap();
    std::fs::write(p.path().join("wide/é"), "").unwrap();
    assert!(verdict("cat wide/?", p.path()).unwrap_err().contains("not ASCII"));
    assert_eq!(verdict("cat wide/*", p.path()), Ok(()));
}

#[test]
fn a_recursive_read_is_covered_only_where_it_reaches_no_secret_and_no_link_out() {
    let p = project();
    assert_eq!(verdict("grep -R KEY src", p.path()), Ok(()));
    assert_eq!(verdict("rg KEY", p.path()), Ok(()));
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("src/out")).unwrap();
    assert!(verdict("grep -R KEY src", p.path()).unwrap_err().contains("link"));
    assert!(verdict("rg -L KEY src", p.path()).unwrap_err().contains("link"));
    assert_eq!(verdict("grep -r KEY src", p.path()), Ok(()), "-r skips links it meets");
    // rg skips hidden and ignored files unless told otherwise; grep -r reads them.
    std::fs::write(p.path().join("src/.env"), "KEY=1").unwrap();
    assert_eq!(verdict("rg KEY src", p.path()), Ok(()));
    assert!(
        verdict("rg --hidden KEY src", p.path())
            .unwrap_err()
            .contains("secrets")
    );
    assert!(verdict("rg -uu KEY src", p.path()).unwrap_err().contains("secrets"));
    // A glob or a type that names a hidden file reads it (rg -g .env KEY
    // printed it); one that names other files does not.
    for named in [
        "rg -g .env KEY src",
        "rg --iglob .ENV KEY src",
        "rg --type-add e:.env -t e KEY src",
        "rg --type-clear e --type-add e:*.env -t e KEY src",
        "rg --glob-case-insensitive -g .ENV KEY src",
    ] {
        let why = verdict(named, p.path()).unwrap_err();
        assert!(why.contains("secrets"), "{named}: {why}");
    }
    assert_eq!(verdict("rg -g '*.rs' KEY src", p.path()), Ok(()));
    assert_eq!(verdict("rg -t rust -g '!*.md' KEY src", p.path()), Ok(()));
    assert!(verdict("grep -rn KEY src", p.path()).unwrap_err().contains("secrets"));
    std::fs::write(p.path().join("src/Credentials.json"), "{}").unwrap();
    assert!(verdict("rg KEY src", p.path()).unwrap_err().contains("secrets"));
    // diff compares each file of a directory with its namesake, links
    // followed: `diff . other` printed ./.env.
    std::fs::create_dir(p.path().join("other")).unwrap();
    assert!(verdict("diff src other", p.path()).unwrap_err().contains("secrets"));
    assert_eq!(verdict("diff in.txt other/in.txt", p.path()), Ok(()));
    std::fs::remove_file(p.path().join("src/.env")).unwrap();
    std::fs::remove_file(p.path().join("src/Credentials.json")).unwrap();
    assert!(verdict("diff src other", p.path()).unwrap_err().contains("link"));
    // Listing names never reads a secret.
    assert_eq!(verdict("find src -name '*.json'", p.path()), Ok(()));
}

#[test]
fn explain_accounts_for_every_word() {
    let p = project();
    let script = Script::parse("grep -n -e main src/main.rs");
    let reading = explain(&script.segments.unwrap()[0], Some(p.path()));
    assert_eq!(reading.refused, None);
    let words: Vec<&str> = reading.notes.iter().map(|n| n.word.as_str()).collect();
    assert_eq!(words, ["grep", "-n", "-e", "main", "src/main.rs"]);
    assert!(reading.notes[4].read_as.contains("input path"));
}

#[test]
fn every_program_is_found_by_its_bare_name_only() {
    assert!(program("cat").is_some());
    assert!(program("/bin/cat").is_none());
    assert!(programs().count() > 35);
}

/// docs/policy.md lists the catalogue from these tables: regenerate it with
/// `TETHER_BLESS_DOCS=1 cargo test -p tether --lib catalogue`.
#[test]
fn the_docs_list_the_catalogue_the_code_enforces() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/policy.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- catalogue:start -->\n", "<!-- catalogue:end -->");
    let from = text.find(start).expect("the catalogue's start marker") + start.len();
    let to = text.find(end).expect("the catalogue's end marker");
    let generated = markdown();
    if std::env::var_os("TETHER_BLESS_DOCS").is_some() {
        std::fs::write(&path, format!("{}{generated}{}", &text[..from], &text[to..])).unwrap();
        return;
    }
    assert!(
        text[from..to] == generated,
        "docs/policy.md's catalogue differs from the tables: run TETHER_BLESS_DOCS=1 cargo test -p tether --lib catalogue"
    );
}

#[test]
fn standard_input_from_a_file_is_judged_as_an_input_path() {
    let p = project();
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("escape")).unwrap();
    std::os::unix::fs::symlink(".env", p.path().join("innocent.txt")).unwrap();
    for ok in [
        "wc -l < in.txt",
        "sort < in.txt",
        "grep b < in.txt",
        "<in.txt sort -u",
        "sort 0< in.txt | uniq -c",
        "cat <<'EOF' | wc -l\na\nEOF",
        "wc -l < src/main.rs 2>/dev/null",
        "sort < in.txt 2>&1",
    ] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
    }
    for (refused, says) in [
        ("wc -l < .env", "may hold secrets"),
        ("sort < .ENV", "may hold secrets"),
        ("wc -c < innocent.txt", "may hold secrets"),
        ("cat < ../x", "outside the working directory"),
        ("cat < /etc/passwd", "outside the working directory"),
        ("cat < escape/x", "outside the working directory"),
        ("python3 < in.txt", "not in the read-only catalogue"),
        ("cat < in.txt > out.txt", "redirection to a file"),
    ] {
        let why = verdict(refused, p.path()).unwrap_err();
        assert!(why.contains(says), "{refused}: {why}");
    }
    let script = Script::parse("cat < .env");
    let segment = &script.segments.unwrap()[0];
    assert!(names_secret(segment, Some(p.path())).is_some(), "@secret sees `< .env`");
}

#[test]
fn a_path_whose_metadata_only_is_read_may_be_a_secret_but_stays_inside() {
    let p = project();
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    std::fs::create_dir(p.path().join("config")).unwrap();
    std::fs::write(p.path().join("config/credentials.json"), "{}").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("escape")).unwrap();
    let secret = |command: &str| {
        let script = Script::parse(command);
        names_secret(&script.segments.unwrap()[0], Some(p.path()))
    };
    for ok in [
        "ls -l .env",
        "ls -la config/",
        "ls -la config/credentials.json",
        "stat .env",
        "stat -c %s .env",
        "stat --format=%n:%s .env",
        "du -h .env",
        "find . -newer .env",
        "find config -name '*.json'",
        "test -f .env",
        "[ -e .env ]",
        "date -r .env",
        "tree config",
    ] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
        assert_eq!(secret(ok), None, "@secret: {ok}");
    }
    for (refused, says) in [
        // Contents: a secret is refused and named.
        ("wc -c .env", "may hold secrets"),
        ("file .env", "may hold secrets"),
        ("du -X .env .", "may hold secrets"),
        ("du --exclude-from=.env .", "may hold secrets"),
        ("grep -f .env in.txt", "may hold secrets"),
        ("date -f .env", "may hold secrets"),
        // Metadata only, but outside.
        ("ls -l ../x", "outside the working directory"),
        ("stat escape/x", "outside the working directory"),
        ("find . -newer /etc/passwd", "outside the working directory"),
        ("ls -l escape", "outside the working directory"),
    ] {
        let why = verdict(refused, p.path()).unwrap_err();
        assert!(why.contains(says), "{refused}: {why}");
    }
    for named in [
        "wc -c .env",
        "file .env",
        "du -X .env .",
        "du --exclude-from=.env .",
        "ls --frobnicate .env",
        "ls .en?",
        "cat .env",
        "cp .env x",
    ] {
        assert!(secret(named).is_some(), "@secret: {named}");
    }
}

#[test]
fn grep_filters_are_applied_to_the_walk_as_grep_applies_them() {
    let p = project();
    std::fs::write(p.path().join(".env"), "KEY=1").unwrap();
    std::fs::write(p.path().join("src/credentials.json"), "{}").unwrap();
    for ok in [
        "grep -rn main --include='*.rs' .",
        "grep -r main --exclude=.env --exclude='credentials*' .",
        "grep -r main --exclude-dir=src --exclude=.env",
        "grep -rl main --include='*.txt' --include='*.rs' src in.txt",
    ] {
        assert_eq!(verdict(ok, p.path()), Ok(()), "{ok}");
    }
    for (refused, says) in [
        // fnmatch without FNM_PERIOD: `*v` matches `.env`.
        ("grep -r KEY --include='*v' .", "may hold secrets"),
        ("grep -r KEY --exclude='*.rs' .", "may hold secrets"),
        // The last that matches decides: `.env` is included again.
        ("grep -r KEY --exclude=.env --include='.e*' .", "may hold secrets"),
        // Filters read from a file, and a walk through links, are judged unfiltered.
        ("grep -r KEY --exclude-from=in.txt --exclude=.env .", "may hold secrets"),
        ("grep -R KEY --include='*.rs' .", "may hold secrets"),
        ("grep -r KEY --include='[a-z]*.rs' .", "a bracket"),
        // Unquoted, the pattern is a file-name pattern: with nullglob it is
        // no word at all, and grep reads everything.
        ("grep -rn main --include=*.rs", "nullglob"),
    ] {
        let why = verdict(refused, p.path()).unwrap_err();
        assert!(why.contains(says), "{refused}: {why}");
    }
}
