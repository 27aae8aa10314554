//! The oracle for the shell reader: a script runs under the real `bash`, in
//! a scratch directory, with `PATH` set only to a directory of logging stubs
//! (each records its argv), and what bash ran is compared with what
//! `Script::parse` reads.
//!
//! - **Deny side**: every program bash ran (at any depth: through `sh -c`,
//!   `env`, `timeout` …, which run for real behind their stubs) must be in
//!   [`Script::found`], with the same words where Tether read them plain.
//! - **Allow side**: when the script is plain, bash runs exactly its
//!   segments, in order (pipelines in any order), each glob word expanded
//!   as bash expands it in the scratch directory. Stubs exit 0, or 1, or
//!   fail a chosen set of segments, so that every branch of `&&`, `||` and
//!   `if` is taken in some run.
//!
//! Safety: the stubs never run anything, except the wrappers listed in
//! [`REAL`], which run the command they wrap (looked up in the stubs'
//! `PATH`). A script must not name a program by a path outside the stubs:
//! [`Oracle::run`] refuses text with such a path in it.
#![allow(dead_code)]

mod glob;

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tether_console::shell::Script;

/// Programs bash runs for real behind their stub (they run the command they
/// wrap from `PATH`, which holds only stubs), and where they are.
const REAL: &[(&str, &str)] = &[
    ("env", "env"),
    ("nice", "nice"),
    ("nohup", "nohup"),
    ("timeout", "timeout"),
    ("stdbuf", "stdbuf"),
    ("xargs", "xargs"),
    ("setsid", "setsid"),
    ("sh", "bash"),
    ("bash", "bash"),
];

/// Builtins the prelude turns off, so that bash runs (and logs) their stubs.
const DISABLED: &[&str] = &[
    "echo", "printf", "test", "true", "false", "pwd", "kill", "type", "hash", "ulimit", "umask", "times",
];

/// Builtins left on: bash runs them itself, so they are never logged and a
/// segment they start is judged knowingly (see [`Oracle::check`]).
pub const KEPT: &[&str] = &[
    // `[` runs no program: the reader reads it as a segment, not as a
    // command a deny could name.
    "[",
    "cd",
    ":",
    "export",
    "set",
    "shopt",
    "unset",
    "read",
    "source",
    ".",
    "alias",
    "local",
    "declare",
    "typeset",
    "readonly",
    "return",
    "exit",
    "break",
    "continue",
    "shift",
    "wait",
    "trap",
    "getopts",
    "let",
    "jobs",
    "fg",
    "bg",
    "disown",
    "pushd",
    "popd",
    "dirs",
    "enable",
    "help",
    "history",
    "mapfile",
    "readarray",
    "compgen",
    "complete",
    "suspend",
    "logout",
    "caller",
    "fc",
    "bind",
];

/// Builtins that run the command after them (and their options, if any,
/// make the allow side's comparison unknowable).
const RUNNING: &[&str] = &["command", "exec", "builtin", "time", "eval", "coproc", "!"];

/// Every program name the corpus and the generator use, each with a stub.
pub const PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "rm",
    "touch",
    "git",
    "grep",
    "sort",
    "uniq",
    "head",
    "tail",
    "wc",
    "find",
    "sed",
    "awk",
    "cut",
    "diff",
    "tree",
    "file",
    "stat",
    "du",
    "df",
    "nl",
    "which",
    "date",
    "whoami",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "id",
    "cargo",
    "npm",
    "python3",
    "curl",
    "chmod",
    "mkdir",
    "cp",
    "mv",
    "tee",
    "sudo",
    "doas",
    "su",
    "chroot",
    "watch",
    "unbuffer",
    "caffeinate",
    "rg",
    "fd",
    "make",
    "sleep",
    "x",
    "y",
    "p",
    "q",
    "zsh",
    "fish",
    "dash",
    "ksh",
    "whereis",
    "man",
    "ssh",
];

/// One program bash ran.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ran {
    /// 0 when bash ran it, more when a stubbed wrapper did.
    pub depth: usize,
    /// The program (by basename) and its arguments.
    pub argv: Vec<String>,
}

/// A scratch directory with the stubs, ready to run scripts.
pub struct Oracle {
    _root: tempfile::TempDir,
    stubs: PathBuf,
    prelude: PathBuf,
    scratch: PathBuf,
    /// `HOME` in every run (`~` expands to it).
    home: PathBuf,
    bash: PathBuf,
}

/// Files every run's working directory starts with, for globs to match.
pub const FILES: &[&str] = &["a.txt", "b.rs", "c.rs", ".env", "[x]", "q*", "x y", "-rf", "ab"];

/// Directories it starts with.
pub const DIRS: &[&str] = &["src", "sub"];

impl Oracle {
    /// The stubs and the prelude, or why bash cannot be the oracle here.
    pub fn new() -> Result<Self, String> {
        let bash = ["/bin/bash", "/usr/bin/bash"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .ok_or("no bash at /bin/bash")?;
        let root = tempfile::tempdir().map_err(|e| e.to_string())?;
        let stubs = root.path().join("stubs");
        fs::create_dir(&stubs).map_err(|e| e.to_string())?;
        let names: BTreeSet<&str> = PROGRAMS
            .iter()
            .chain(DISABLED)
            .chain(REAL.iter().map(|(name, _)| name))
            .copied()
            .collect();
        for name in names {
            let real = REAL
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, program)| find_program(program))
                .transpose()?;
            write_stub(&stubs.join(name), &bash, real.as_deref())?;
        }
        let prelude = root.path().join("prelude.sh");
        let disable: Vec<String> = DISABLED.iter().map(|b| format!("'{b}'")).collect();
        fs::write(
            &prelude,
            format!(
                "enable -n {}\ncommand_not_found_handle() {{ __tether_log \"$@\"; return 127; }}\n{LOG_FUNCTION}",
                disable.join(" ")
            ),
        )
        .map_err(|e| e.to_string())?;
        let scratch = root.path().join("runs");
        fs::create_dir(&scratch).map_err(|e| e.to_string())?;
        let home = root.path().join("home");
        fs::create_dir(&home).map_err(|e| e.to_string())?;
        Ok(Self {
            home,
            _root: root,
            stubs,
            prelude,
            scratch,
            bash,
        })
    }

    /// The stub directory (a script may name a program by a path in it).
    pub fn stubs(&self) -> &Path {
        &self.stubs
    }

    /// Runs `script` under bash: the programs it ran, in order. `fail`
    /// says which invocations exit 1 (the others exit 0).
    pub fn run(&self, script: &str, fail: &Fail) -> Result<Vec<Ran>, String> {
        guard(script, &self.stubs)?;
        let run = tempfile::tempdir_in(&self.scratch).map_err(|e| e.to_string())?;
        let work = run.path().join("work");
        let log = run.path().join("log");
        fs::create_dir(&work).map_err(|e| e.to_string())?;
        fs::create_dir(&log).map_err(|e| e.to_string())?;
        for file in FILES {
            fs::write(work.join(file), "").map_err(|e| e.to_string())?;
        }
        for dir in DIRS {
            fs::create_dir(work.join(dir)).map_err(|e| e.to_string())?;
        }
        let fail_file = run.path().join("fail");
        let (all, keys) = match fail {
            Fail::None => ("", String::new()),
            Fail::All => ("1", String::new()),
            Fail::These(list) => ("", list.iter().map(|argv| format!("\x1e{}", key(argv))).collect()),
        };
        fs::write(&fail_file, format!("{keys}\x1e")).map_err(|e| e.to_string())?;
        let stderr = fs::File::create(run.path().join("stderr")).map_err(|e| e.to_string())?;
        let mut child = Command::new(&self.bash)
            .arg("-c")
            .arg(script)
            .current_dir(&work)
            .env_clear()
            .env("PATH", &self.stubs)
            .env("HOME", &self.home)
            .env("LC_ALL", "C")
            .env("BASH_ENV", &self.prelude)
            .env("TETHER_DIFF_LOG", &log)
            .env("TETHER_DIFF_FAIL", &fail_file)
            .env("TETHER_DIFF_FAIL_ALL", all)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("bash did not start: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let group = rustix::process::Pid::from_raw(i32::try_from(child.id()).map_err(|e| e.to_string())?)
            .ok_or("bash has no process id")?;
        let mut exited = false;
        // Bash, then everything it left running (`ls &`), must be done
        // before the log is whole.
        loop {
            if !exited && child.try_wait().map_err(|e| e.to_string())?.is_some() {
                exited = true;
            }
            if exited && rustix::process::test_kill_process_group(group).is_err() {
                break;
            }
            if Instant::now() > deadline {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("bash ran {script:?} for more than 10 s"));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        read_log(&log).map_err(|e| format!("{script:?}: {e}"))
    }
}

/// Which stub invocations exit 1.
pub enum Fail {
    None,
    All,
    /// Those with exactly these words (program by basename).
    These(Vec<Vec<String>>),
}

/// The shell function the stubs and the not-found handler log with: one
/// file per invocation, named by the time so the log reads in order.
const LOG_FUNCTION: &str = r#"__tether_log() {
  local depth=${TETHER_DIFF_DEPTH:-0} name=${1##*/}
  shift
  # The not-found handler runs in a child of the script's shell, where the
  # prelude turned printf off.
  enable printf
  builtin printf '%s\0' "$depth" "$name" "$@" > "$TETHER_DIFF_LOG/${EPOCHREALTIME/./}.$$.$RANDOM"
}
"#;

fn write_stub(path: &Path, bash: &Path, real: Option<&Path>) -> Result<(), String> {
    // `-p`: the stub does not read BASH_ENV (the prelude is for the script).
    let tail = match real {
        // A login shell (`bash -lc`) would read the system's profile.
        Some(real) if real.ends_with("bash") => format!("exec '{}' --noprofile \"$@\"\n", real.display()),
        Some(real) => format!("exec '{}' \"$@\"\n", real.display()),
        None => concat!(
            "[ -n \"$TETHER_DIFF_FAIL_ALL\" ] && exit 1\n",
            "key=$(builtin printf '%s\\x1f' \"${0##*/}\" \"$@\")\n",
            "fails=$(< \"$TETHER_DIFF_FAIL\")\n",
            "[[ \"$fails\" == *$'\\x1e'\"$key\"$'\\x1e'* ]] && exit 1\n",
            "exit 0\n"
        )
        .to_owned(),
    };
    let text = format!(
        "#!{} -p\n{LOG_FUNCTION}__tether_log \"$0\" \"$@\"\nexport TETHER_DIFF_DEPTH=$(( ${{TETHER_DIFF_DEPTH:-0}} + 1 ))\n{tail}",
        bash.display()
    );
    let mut file = fs::File::create(path).map_err(|e| e.to_string())?;
    file.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())
}

/// The key a stub compares with the fail list: its words, each ended by US.
fn key(argv: &[String]) -> String {
    argv.iter().map(|w| format!("{w}\x1f")).collect()
}

fn find_program(name: &str) -> Result<PathBuf, String> {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists())
        .ok_or_else(|| format!("no {name} in /usr/bin or /bin"))
}

fn read_log(log: &Path) -> Result<Vec<Ran>, String> {
    let mut entries: Vec<PathBuf> = fs::read_dir(log)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let mut ran = Vec::new();
    for entry in entries {
        let bytes = fs::read(&entry).map_err(|e| e.to_string())?;
        let mut fields: Vec<String> = bytes
            .split(|b| *b == 0)
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        // Each field ends with a NUL: the last split is empty.
        fields.pop();
        if fields.len() < 2 {
            return Err(format!("a log entry without a program: {fields:?}"));
        }
        let depth = fields.remove(0).parse().map_err(|e| format!("a log depth: {e}"))?;
        ran.push(Ran { depth, argv: fields });
    }
    Ok(ran)
}

/// Refuses a script that could name a program by a path outside the stubs
/// (the stubs' own path is allowed) or build one from escapes.
fn guard(script: &str, stubs: &Path) -> Result<(), String> {
    let rest = script
        .replace(&format!("{}/", stubs.display()), "")
        .replace("/dev/null", "");
    for (at, _) in rest.match_indices('/') {
        let after = &rest[at + 1..];
        // `./x` and `../x` (one name) stay in the scratch tree.
        let word_rest = after.split(char::is_whitespace).next().unwrap_or_default();
        if rest[..at].ends_with('.') && !word_rest.contains('/') {
            continue;
        }
        // `~/x` is in the scratch directory (HOME).
        let harmless = after.is_empty()
            || rest[..at].trim_end_matches(['\'', '"']).ends_with('~')
            || after.starts_with(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ')' | ';' | '&' | '|'));
        if !harmless {
            return Err(format!("{script:?} names a path outside the stubs; use @BIN@/"));
        }
    }
    for escape in [
        "\\057", "\\x2f", "\\x2F", "\\u002f", "\\u002F", "\\U", "$BASH", "${BASH", "$PWD", "$HOME", "$OLDPWD",
    ] {
        if rest.contains(escape) {
            return Err(format!("{script:?} may build a path from {escape}"));
        }
    }
    // `~user`, `~+` and `~-` name directories outside the scratch one.
    if rest
        .match_indices('~')
        .any(|(at, _)| rest[at + 1..].starts_with(|c: char| c.is_alphanumeric() || matches!(c, '+' | '-' | '_')))
    {
        return Err(format!(
            "{script:?} names another user's home or a directory stack entry"
        ));
    }
    Ok(())
}

/// Whether a found command (words as Tether read them) stands for `ran`.
fn stands_for(found: &[String], ran: &[String]) -> bool {
    // A word the reader could not read plain (an expansion, a glob) may
    // become any number of words: then the program alone must agree.
    let unread = |w: &String| w.contains(['$', '`', '*', '?', '[', '{', '~', '\'', '"', '\\', '<', '>']);
    // A program named by a pattern or an expansion (`/???/r?`, `$(x)`) is
    // not a name a rule can read: the reader leaves it as written, and a
    // rule must treat it as any program.
    let program = found.first().map(|p| p.rsplit('/').next().unwrap_or(p)) == ran.first().map(String::as_str);
    let unread_program = found.first().is_some_and(unread);
    unread_program || (program && (found.iter().skip(1).any(unread) || found == ran))
}

/// A disagreement between bash and the reader, said plainly.
pub type Disagreement = String;

impl Oracle {
    /// Runs `script` (with `@BIN@` standing for the stubs' directory) and
    /// compares what bash ran with what the reader reads.
    pub fn check(&self, script: &str) -> Result<(), Disagreement> {
        let script = script.replace("@BIN@", &self.stubs.to_string_lossy());
        let read = Script::parse(&script);
        let mut runs = vec![self.run(&script, &Fail::None)?];
        // Deny side: every program bash ran is found.
        let check_found = |ran: &[Ran]| -> Result<(), Disagreement> {
            for r in ran {
                // xargs adds words read from its input: the reader finds
                // the command it runs without them.
                let xargs = script.contains("xargs") && r.depth > 0;
                let prefix = |f: &Vec<String>| xargs && r.argv.starts_with(&f[..]) && !f.is_empty();
                if !read.found.iter().any(|f| stands_for(f, &r.argv) || prefix(f)) {
                    return Err(format!(
                        "{script:?}: bash ran {:?} (depth {}), the reader found only {:?}",
                        r.argv, r.depth, read.found
                    ));
                }
            }
            Ok(())
        };
        check_found(&runs[0])?;
        let Ok(segments) = &read.segments else {
            runs.push(self.run(&script, &Fail::All)?);
            return check_found(&runs[1]);
        };
        // Allow side: what bash runs for each segment, if it is knowable.
        let names: Vec<&str> = FILES.iter().chain(DIRS).copied().collect();
        let home = &self.home;
        let mut expected = Vec::new();
        for segment in segments {
            // Standard input from a file that is not there: bash runs nothing.
            if segment.inputs.iter().any(|w| !names.contains(&w.value.as_str())) {
                continue;
            }
            let mut words: Vec<String> = Vec::new();
            for word in &segment.words {
                match &word.pattern {
                    None if word.value == "~" || word.value.starts_with("~/") => {
                        // An unquoted leading tilde (a quoted one is opaque).
                        words.push(format!("{}{}", home.display(), &word.value[1..]));
                    }
                    None => words.push(word.value.clone()),
                    Some(pattern) => match glob::expand(pattern, &names) {
                        Some(matches) if matches.is_empty() => words.push(word.value.clone()),
                        Some(matches) => words.extend(matches),
                        None => return check_found(&self.run(&script, &Fail::All)?),
                    },
                }
            }
            if let Some(program) = words.first_mut() {
                // A path outside the stubs is not there: bash runs nothing.
                if program.contains('/') && !program.starts_with(&*self.stubs.to_string_lossy()) {
                    continue;
                }
                *program = program.rsplit('/').next().unwrap_or(program).to_owned();
            }
            match words.first().map(String::as_str) {
                Some(p) if RUNNING.contains(&p) => return check_found(&self.run(&script, &Fail::All)?),
                Some(p) if KEPT.contains(&p) => {}
                Some(_) => expected.push(words),
                None => {}
            }
        }
        let unordered = script.contains('|');
        let mut covered = vec![false; expected.len()];
        let modes = fail_modes(&expected);
        for (i, mode) in modes.iter().enumerate() {
            if i > 0 && covered.iter().all(|c| *c) {
                break;
            }
            let ran = if i == 0 {
                runs[0].clone()
            } else {
                let ran = self.run(&script, mode)?;
                check_found(&ran)?;
                ran
            };
            let top: Vec<&Vec<String>> = ran.iter().filter(|r| r.depth == 0).map(|r| &r.argv).collect();
            let mut next = 0;
            for argv in top {
                let at = if unordered {
                    expected.iter().position(|e| e == argv)
                } else {
                    expected[next..].iter().position(|e| e == argv).map(|n| n + next)
                };
                let Some(at) = at else {
                    return Err(format!(
                        "{script:?}: bash ran {argv:?}, not a segment the reader read (in order) {expected:?}"
                    ));
                };
                covered[at] = true;
                next = at + 1;
            }
        }
        // Identical segments cannot be told apart by what ran: one run of
        // the words covers them all.
        let ran_once = |e: &Vec<String>| expected.iter().zip(&covered).any(|(o, c)| *c && o == e);
        // A wrapper that runs for real exits as its command does, which no
        // run chooses: what follows it may never run.
        if expected.iter().any(|e| {
            REAL.iter()
                .any(|(name, _)| e.first().map(String::as_str) == Some(*name))
        }) {
            return Ok(());
        }
        if let Some(missed) = (0..expected.len()).find(|&i| !covered[i] && !ran_once(&expected[i])) {
            return Err(format!(
                "{script:?}: the reader read the segment {:?}, which bash never ran (segments {expected:?})",
                expected[missed]
            ));
        }
        Ok(())
    }
}

/// The runs that take every branch: none fail, all fail, then segments
/// chosen by each bit of their index (and its complement).
fn fail_modes(expected: &[Vec<String>]) -> Vec<Fail> {
    let mut modes = vec![Fail::None, Fail::All];
    let bits = usize::BITS - expected.len().leading_zeros();
    for bit in 0..bits {
        for set in [true, false] {
            let chosen = expected
                .iter()
                .enumerate()
                .filter(|(i, _)| (i >> bit & 1 == 1) == set)
                .map(|(_, e)| e.clone())
                .collect();
            modes.push(Fail::These(chosen));
        }
    }
    modes
}
