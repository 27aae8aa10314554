//! What a command runs besides itself: the command behind a wrapper
//! (`sudo rm`, `xargs rm`, `timeout 5 rm`), the script of `sh -c`, the
//! command of `find -exec`. A deny or ask rule sees each of them.

use super::{Script, basename, parse};

/// The commands found in a text so far.
#[derive(Default)]
pub(super) struct Found {
    /// Each command, its program by basename.
    pub commands: Vec<Vec<String>>,
    /// Some text was nested too deeply to read.
    pub beyond_depth: bool,
}

impl Found {
    /// Takes in what a nested script found.
    pub fn nested(&mut self, script: Script) {
        self.commands.extend(script.found);
        self.beyond_depth |= script.beyond_depth;
    }
}

/// Shells whose `-c STRING` runs STRING.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

/// Whether a program is a shell.
pub(super) fn is_shell(program: &str) -> bool {
    SHELLS.contains(&basename(program))
}

/// The script of `bash -lc SCRIPT` (any shell, any short-option cluster
/// ending in `c`, the script the last word): the command that runs.
pub(super) fn shell_script(argv: &[String]) -> Option<&str> {
    match argv {
        [shell, flags, script] if is_shell(shell) && is_c_cluster(flags) => Some(script),
        _ => None,
    }
}

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
    match name {
        "sudo" | "doas" => inner(
            skip_options(rest, &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"]),
            depth,
            out,
        ),
        "env" => {
            let after = skip_options(rest, &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"]);
            // `env -S 'rm -rf /'` splits its argument into a command.
            if let Some(at) = rest.iter().position(|w| w == "-S" || w == "--split-string") {
                if let Some(line) = rest.get(at + 1) {
                    out.nested(parse::script(line, depth + 1));
                }
            }
            let after: Vec<String> = after.iter().skip_while(|w| is_assignment(w)).cloned().collect();
            inner(&after, depth, out);
        }
        "nice" => inner(skip_options(rest, &["-n", "--adjustment"]), depth, out),
        "nohup" | "builtin" | "time" | "chroot" | "unbuffer" | "setsid" | "caffeinate" => {
            let after = skip_options(rest, &[]);
            // `chroot DIR CMD`: the directory comes first.
            let after = if name == "chroot" {
                after.get(1..).unwrap_or_default()
            } else {
                after
            };
            inner(after, depth, out);
        }
        // `command -v rm` only looks the program up.
        "command" if !rest.iter().any(|w| w == "-v" || w == "-V") => inner(skip_options(rest, &[]), depth, out),
        "exec" => inner(skip_options(rest, &["-a"]), depth, out),
        "timeout" => {
            let after = skip_options(rest, &["-s", "-k", "--signal", "--kill-after"]);
            inner(after.get(1..).unwrap_or_default(), depth, out);
        }
        "stdbuf" => inner(skip_options(rest, &["-i", "-o", "-e"]), depth, out),
        "xargs" => inner(
            skip_options(
                rest,
                &[
                    "-I",
                    "-L",
                    "-n",
                    "-P",
                    "-s",
                    "-d",
                    "-E",
                    "-a",
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                    "--max-lines",
                    "--replace",
                ],
            ),
            depth,
            out,
        ),
        "watch" => {
            // watch runs its words through `sh -c`.
            let after = skip_options(rest, &["-n", "-d", "--interval", "-q", "--equexit"]);
            if !after.is_empty() {
                out.nested(parse::script(&after.join(" "), depth + 1));
            }
        }
        "eval" => out.nested(parse::script(&rest.join(" "), depth + 1)),
        "su" => {
            if let Some(at) = rest.iter().position(|w| w == "-c" || w == "--command") {
                if let Some(line) = rest.get(at + 1) {
                    out.nested(parse::script(line, depth + 1));
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
            // `bash -lc SCRIPT`, `sh -e -o pipefail -c SCRIPT`: the word
            // after a short-option cluster holding `c` is the script.
            let cluster = |w: &String| w.len() > 1 && w.starts_with('-') && !w.starts_with("--") && w.contains('c');
            if let Some(script) = rest.iter().position(cluster).and_then(|at| rest.get(at + 1)) {
                out.nested(parse::script(script, depth + 1));
            }
        }
        _ => {}
    }
}

fn inner(words: &[String], depth: usize, out: &mut Found) {
    found(words, depth + 1, out);
}

/// `NAME=value`, as `env` and `sudo` take before the command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=')
        .is_some_and(|(name, _)| !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

/// The words after a wrapper's own options: every word starting with `-`
/// (up to `--`), the ones in `with_value` taking the next word too, and any
/// `NAME=value` assignments before the command.
fn skip_options<'a>(words: &'a [String], with_value: &[&str]) -> &'a [String] {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        if word == "--" {
            i += 1;
            break;
        }
        if !word.starts_with('-') || word == "-" {
            if is_assignment(word) {
                i += 1;
                continue;
            }
            break;
        }
        let takes_value = with_value.iter().any(|o| word == o);
        i += if takes_value { 2 } else { 1 };
    }
    words.get(i..).unwrap_or_default()
}
