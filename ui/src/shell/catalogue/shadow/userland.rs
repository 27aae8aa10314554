//! Which implementation of a program `PATH` finds. The grammars are GNU's
//! (coreutils, grep, sed, findutils, diffutils) and util-linux's; macOS
//! ships FreeBSD's tools under the same names, where `sed -l` is a flag
//! (GNU's takes a value) and options end at the first operand, and busybox
//! or uutils read options their own way too. So a program whose grammar
//! is GNU's is covered only where the one `PATH` finds says it is GNU's:
//! asked once per console process, `NAME --version` run with nothing of
//! the console's environment but `PATH`, from `/`, no input, for at most
//! two seconds. The console's environment is the user's, which the
//! agent's shell inherits.

use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

/// Whose option parser a catalogued program's grammar describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A bash builtin: bash reads its options, and stops at the first
    /// operand (`command rm x -v` runs `rm x -v`).
    Builtin,
    /// A program of a GNU package (`ls (GNU coreutils) 9.1`).
    Gnu(&'static str),
    /// A util-linux program (`column from util-linux 2.38.1`).
    UtilLinux,
    /// One implementation everywhere, reading options with the C
    /// library's `getopt_long` or `argp` (file, man): options follow
    /// operands unless `POSIXLY_CORRECT` is set.
    Getopt,
    /// One implementation everywhere, with a parser of its own that
    /// `POSIXLY_CORRECT` does not change (git, ripgrep, fd, tree, jq), or
    /// whose every word is a name either way (which, whereis).
    Own,
}

/// The origin of a catalogued program's grammar; `None` for a name the
/// table does not know, which is then not covered.
pub(crate) fn origin(name: &str) -> Option<Origin> {
    Some(match name {
        "echo" | "printf" | "pwd" | "true" | "false" | "test" | "[" | "type" | "command" | "hash" => Origin::Builtin,
        "ls" | "cat" | "head" | "tail" | "wc" | "sort" | "uniq" | "cut" | "nl" | "stat" | "du" | "df" | "basename"
        | "dirname" | "realpath" | "tr" | "tac" | "paste" | "comm" | "fold" | "base64" | "od" | "md5sum"
        | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "readlink" | "nproc" | "seq" | "date"
        | "whoami" | "id" | "uname" => Origin::Gnu("coreutils"),
        "grep" => Origin::Gnu("grep"),
        "sed" => Origin::Gnu("sed"),
        "find" => Origin::Gnu("findutils"),
        "diff" | "cmp" => Origin::Gnu("diffutils"),
        "column" | "rev" => Origin::UtilLinux,
        "file" | "man" => Origin::Getopt,
        "git" | "rg" | "fd" | "tree" | "jq" | "which" | "whereis" => Origin::Own,
        _ => return None,
    })
}

/// Whether `name`'s options end at its first operand: always for a bash
/// builtin, and for a program reading them with `getopt_long` when
/// `POSIXLY_CORRECT` is in the environment (glibc then stops permuting).
pub(crate) fn ends_at_operand(origin: Option<Origin>, posixly_correct: bool) -> bool {
    match origin {
        Some(Origin::Builtin) => true,
        Some(Origin::Gnu(_) | Origin::UtilLinux | Origin::Getopt) => posixly_correct,
        Some(Origin::Own) | None => false,
    }
}

/// Whether `POSIXLY_CORRECT` is set in the console's environment (any
/// value, empty too, as glibc reads it).
pub(crate) fn posixly_correct() -> bool {
    static SET: LazyLock<bool> = LazyLock::new(|| std::env::var_os("POSIXLY_CORRECT").is_some());
    *SET
}

/// Why the `name` `PATH` finds may not be the implementation its grammar
/// describes, if so (asked once per name and console process).
pub(super) fn implementation(name: &str) -> Result<(), String> {
    let origin = origin(name).ok_or_else(|| {
        format!("the catalogue does not know whose options `{name}` reads, so which implementation runs is not known")
    })?;
    if !matches!(origin, Origin::Gnu(_) | Origin::UtilLinux) {
        return Ok(());
    }
    static PROBED: LazyLock<Mutex<HashMap<String, Result<(), String>>>> = LazyLock::new(Default::default);
    let mut probed = PROBED.lock().map_err(|_| "the probe's cache is poisoned".to_owned())?;
    if let Some(known) = probed.get(name) {
        return known.clone();
    }
    let verdict = verdict(name, origin, &version(name));
    probed.insert(name.to_owned(), verdict.clone());
    verdict
}

/// What the first line of `--version` (or why there is none) says of the
/// implementation, for a program whose grammar is `origin`'s.
pub(crate) fn verdict(name: &str, origin: Origin, answer: &Result<String, String>) -> Result<(), String> {
    let (expected, shown) = match origin {
        Origin::Gnu(package) => (format!("{name} (GNU {package}) "), format!("GNU {package}'s")),
        Origin::UtilLinux => (format!("{name} from util-linux "), "util-linux's".to_owned()),
        Origin::Builtin | Origin::Getopt | Origin::Own => return Ok(()),
    };
    let said = match answer {
        Ok(line) if line.starts_with(&expected) => return Ok(()),
        Ok(line) => format!("it answers `--version` with `{line}`"),
        Err(why) => why.clone(),
    };
    Err(format!(
        "the `{name}` PATH finds is not {shown} ({said}): its options mean other things than the catalogue's grammar, which is {shown}, says (BSD and macOS, busybox and uutils read them their own way)"
    ))
}

/// How long `NAME --version` may take.
const LIMIT: Duration = Duration::from_secs(2);

/// The first line `name --version` prints, or why there is none.
fn version(name: &str) -> Result<String, String> {
    let mut command = Command::new(name);
    command
        .arg("--version")
        .env_clear()
        .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
        .env("LC_ALL", "C")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("`{name} --version` cannot be run: {e}"))?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let read = |from: Option<&mut dyn Read>| {
            let mut out = Vec::new();
            if let Some(from) = from {
                let _ = from.take(4096).read_to_end(&mut out);
            }
            first_line(&out)
        };
        let out = read(stdout.as_mut().map(|s| s as &mut dyn Read));
        let err = read(stderr.as_mut().map(|s| s as &mut dyn Read));
        let _ = done.send((out, err));
    });
    let read = finished.recv_timeout(LIMIT);
    if read.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| format!("`{name} --version`: {e}"))?;
    let (out, err) = read.map_err(|_| format!("`{name} --version` took more than {} s", LIMIT.as_secs()))?;
    match (status.success(), out) {
        (true, Some(line)) => Ok(line),
        (_, Some(line)) if err.is_none() => Err(format!("`{name} --version` failed ({status}): `{line}`")),
        (_, _) => Err(format!(
            "`{name} --version` says `{}` ({status})",
            err.unwrap_or_else(|| "nothing".into())
        )),
    }
}

fn first_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.chars().take(120).collect())
}
