//! What a command runs besides itself: the command behind a wrapper
//! (`sudo rm`, `xargs rm`, `timeout 5 rm`), the script of `sh -c`, the
//! command of `find -exec`. A deny or ask rule sees each of them.

use std::rc::Rc;

use super::options::{self, Start};
use super::{Opaque, Script, basename, parse, wrappers, zsh};

/// The commands found in a text so far.
#[derive(Default)]
pub(super) struct Found {
    /// Each command, its program by basename.
    pub commands: Vec<Vec<String>>,
    /// Some text was nested too deeply to read.
    pub beyond_depth: bool,
    /// The files redirections open for reading (`< f`, `3< f`, `<> f`).
    pub reads: Vec<String>,
}

impl Found {
    /// Takes in what a nested script found.
    pub fn nested(&mut self, script: Script) {
        self.commands.extend(script.found);
        self.beyond_depth |= script.beyond_depth;
        self.reads.extend(script.reads);
    }
}

/// Shells whose `-c STRING` runs STRING.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ash", "ksh", "mksh", "oksh", "pdksh", "yash", "fish", "csh", "tcsh", "nu", "pwsh",
    "elvish", "xonsh",
];

/// Shells that read a script as bash reads it, for what an allow covers
/// (POSIX sh, dash and busybox's ash do less than bash, never more, in what
/// a plain command can hold).
const BASH_LIKE: &[&str] = &["sh", "bash", "dash", "ash"];

/// Whether a program is a shell.
pub(super) fn is_shell(program: &str) -> bool {
    SHELLS.contains(&basename(program))
}

/// The script of `bash -lc SCRIPT` (any shell, any short-option cluster
/// ending in `c`, the script the last word), read as that shell runs it:
/// bash's reading for sh, bash and dash; bash's and zsh's for zsh; for any
/// other shell, which quotes and expands otherwise (fish's `(cmd)` and
/// `'…\''`, recursive `**`; ksh's and csh's own expansions), no allow
/// covers it and a deny still finds its commands read as bash reads them.
pub(super) fn shell_script(argv: &[String]) -> Option<Script> {
    let [shell, flags, script] = argv else {
        return None;
    };
    if !is_shell(shell) || !is_c_cluster(flags) {
        return None;
    }
    let read = parse::cached(script);
    let name = basename(shell);
    // Options that change how the script is read or run are read as such
    // only for denies: bash's `-k` makes every `NAME=VALUE` word an
    // assignment to the program's environment (`git status
    // GIT_CONFIG_COUNT=1 …` configures git to run a program), `-f` passes
    // patterns unexpanded, `-i` reads the user's startup files and expands
    // their aliases.
    if let Some(option) = flags[1..].chars().find(|c| !ORDINARY_OPTIONS.contains(*c)) {
        let mut read = Rc::unwrap_or_clone(read);
        read.segments = Err(Opaque {
            why: format!(
                "a script run by {name} -{option}, which changes how it reads or runs the script: no allow covers it"
            ),
            span: 0..script.len(),
        });
        return Some(read);
    }
    Some(match name {
        _ if BASH_LIKE.contains(&name) => Rc::unwrap_or_clone(read),
        "zsh" => Rc::unwrap_or_clone(zsh::also(script, read)),
        other => {
            let mut read = Rc::unwrap_or_clone(read);
            read.segments = Err(Opaque {
                why: format!(
                    "a script run by {other}, which quotes and expands otherwise than bash: no allow covers it"
                ),
                span: 0..script.len(),
            });
            read
        }
    })
}

/// The options of `SHELL -lc SCRIPT` that leave what a plain script runs
/// as it reads: `-c` itself, a login shell, errexit, nounset, tracing,
/// verbose.
const ORDINARY_OPTIONS: &str = "clexuv";

/// `-c`, `-lc`, `-ec`, `-xec`: short options ending in `c`.
fn is_c_cluster(word: &str) -> bool {
    word.len() > 1
        && word.starts_with('-')
        && !word.starts_with("--")
        && word.ends_with('c')
        && word[1..].bytes().all(|b| b.is_ascii_alphabetic())
}

/// Pushes `words` (its program by basename) and everything it runs.
pub(super) fn found(words: &[String], depth: usize, out: &mut Found) {
    let Some(program) = words.first() else {
        return;
    };
    if depth > parse::MAX_DEPTH {
        out.beyond_depth = true;
        return;
    }
    let name = basename(program);
    let mut named = words.to_vec();
    named[0] = name.to_owned();
    out.commands.push(named);
    let rest = &words[1..];
    if let Some(spec) = wrappers::spec(name) {
        for start in options::starts(rest, spec) {
            match start {
                Start::At(at) => inner(rest.get(at..).unwrap_or_default(), depth, out),
                // `env -S 'rm -rf x' y`: env reads the split words as its own
                // arguments, options included.
                Start::Split(text, at) => {
                    let mut again = vec![name.to_owned()];
                    match shell_words::split(&text) {
                        Ok(split) => again.extend(split),
                        Err(_) => again.extend(text.split_whitespace().map(str::to_owned)),
                    }
                    again.extend(rest.get(at..).unwrap_or_default().iter().cloned());
                    inner(&again, depth, out);
                }
            }
        }
        return;
    }
    match name {
        // `command -v rm` only looks the program up.
        "command" => {
            let starts = options::starts(rest, &wrappers::COMMAND);
            let looks_up = rest
                .iter()
                .take_while(|w| w.starts_with('-') && *w != "--")
                .any(|w| w.contains(['v', 'V']));
            if !looks_up {
                for start in starts {
                    if let Start::At(at) = start {
                        inner(rest.get(at..).unwrap_or_default(), depth, out);
                    }
                }
            }
        }
        "watch" => {
            let starts = options::starts(rest, &wrappers::WATCH);
            let exec = rest
                .iter()
                .take_while(|w| w.starts_with('-'))
                .any(|w| w == "--exec" || (!w.starts_with("--") && w.contains('x')));
            for start in starts {
                let Start::At(at) = start else { continue };
                let after = rest.get(at..).unwrap_or_default();
                // watch runs its words through `sh -c`, unless `-x`.
                if exec {
                    inner(after, depth, out);
                } else if !after.is_empty() {
                    out.nested(parse::script(&after.join(" "), depth + 1));
                }
            }
        }
        "eval" => out.nested(parse::script(&rest.join(" "), depth + 1)),
        "su" | "runuser" => {
            for (at, word) in rest.iter().enumerate() {
                let line = match word.as_str() {
                    "-c" | "--command" | "--session-command" => rest.get(at + 1).cloned(),
                    w if w.starts_with("--comm") || w.starts_with("--sess") => {
                        w.split_once('=').map(|(_, v)| v.to_owned())
                    }
                    w if w.starts_with("-c") && !w.starts_with("--") => Some(w[2..].to_owned()),
                    _ => None,
                };
                if let Some(line) = line {
                    out.nested(parse::script(&line, depth + 1));
                }
            }
        }
        "find" => {
            let mut i = 0;
            while i < rest.len() {
                if matches!(rest[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let start = i + 1;
                    let end = rest[start..]
                        .iter()
                        .position(|w| w == ";" || w == "+")
                        .map_or(rest.len(), |n| start + n);
                    inner(&rest[start..end], depth, out);
                    i = end;
                }
                i += 1;
            }
        }
        _ if is_shell(name) => {
            if let Some(script) = shell_c_script(rest) {
                out.nested(parse::script(script, depth + 1));
            }
        }
        _ => {}
    }
}

/// The script of `bash [options] -c [options] [--] SCRIPT [name args]`:
/// the first operand once a short-option cluster held `c` (`-o`/`-O` and
/// `--rcfile`/`--init-file` take a value).
fn shell_c_script(rest: &[String]) -> Option<&str> {
    let mut c = false;
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        if word == "--" || word == "-" {
            i += 1;
            break;
        }
        if word.starts_with("--") {
            i += if matches!(word.as_str(), "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if word.len() > 1 && (word.starts_with('-') || word.starts_with('+')) {
            c |= word.contains('c');
            i += 1 + word.matches(['o', 'O']).count();
            continue;
        }
        break;
    }
    if c { rest.get(i).map(String::as_str) } else { None }
}

fn inner(words: &[String], depth: usize, out: &mut Found) {
    found(words, depth + 1, out);
}
