//! The real zsh as the zsh differential runs it: a scratch project
//! holding secrets and a link out, logging stubs for the programs, and the
//! options a user's config may set.
// Each test crate uses part of it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tether_console::shell::{Script, catalogue};

/// Programs the corpus runs, each a logging stub.
pub const STUBS: &[&str] = &[
    "cat", "head", "grep", "wc", "ls", "rg", "tail", "sort", "echo", "printf", "test", "[", "hash", "python3", "nl",
    "more", "pager",
];

/// Programs that read only names and metadata: a secret's name is theirs
/// to list (the catalogue covers `ls -l .env`), never a path outside.
pub const NAMES_ONLY: &[&str] = &["ls"];

/// Builtins zsh would run itself: turned off, so that their stubs log.
pub const BUILTINS: &str = "disable echo printf test '[' hash";

/// The options a user's config may set that change a word, alone and
/// together.
pub const SETTINGS: &[&[&str]] = &[
    &[],
    &["extendedglob"],
    &["globdots"],
    &["nullglob"],
    &["cshnullglob"],
    &["nocaseglob"],
    &["globstarshort"],
    &["magicequalsubst"],
    &["rcquotes"],
    &["braceccl"],
    &["extendedglob", "globdots"],
    &["extendedglob", "globdots", "nullglob"],
    &["extendedglob", "nocaseglob", "globdots"],
    &["globstarshort", "globdots"],
    &[
        "extendedglob",
        "globdots",
        "nocaseglob",
        "globstarshort",
        "magicequalsubst",
        "braceccl",
        "rcquotes",
        "nonomatch",
    ],
];

/// What the control commands print when they leak (a stub's own text is
/// a file outside the project).
pub const MARKS: &[&str] = &["TOPSECRET", "DEEP_CRED", "OUTSIDE", "TETHER_ZSH_LOG"];

pub struct Scene {
    _root: tempfile::TempDir,
    pub project: PathBuf,
    stubs: PathBuf,
    logs: PathBuf,
    zsh: PathBuf,
}

pub fn scene() -> Option<Scene> {
    let Some(zsh) = ["/usr/bin/zsh", "/bin/zsh"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the zsh differential (.ci/run installs zsh)"
        );
        eprintln!("skipped: no zsh at /usr/bin/zsh");
        return None;
    };
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    let outside = root.path().join("outside");
    let stubs = root.path().join("stubs");
    let logs = root.path().join("logs");
    for dir in [&project, &outside, &stubs, &logs] {
        fs::create_dir_all(dir).unwrap();
    }
    fs::create_dir_all(project.join("a/b")).unwrap();
    fs::create_dir_all(project.join("src")).unwrap();
    fs::write(project.join("a/b/credentials.json"), "DEEP_CRED\n").unwrap();
    fs::write(project.join(".env"), "KEY=TOPSECRET\n").unwrap();
    fs::write(project.join("x.txt"), "k\n").unwrap();
    fs::write(project.join("fn"), "fn\n").unwrap();
    fs::write(project.join("src/main.rs"), "fn main() {}\n").unwrap();
    fs::write(outside.join("secret.txt"), "OUTSIDE\n").unwrap();
    std::os::unix::fs::symlink(&outside, project.join("out")).unwrap();
    for name in STUBS {
        // Each invocation appends its program and words, NUL-separated,
        // then a record separator, and prints the files it was given so a
        // control can show the leak.
        let prints = if NAMES_ONLY.contains(name) {
            ""
        } else {
            "for a in \"$@\"; do [ -f \"$a\" ] && /bin/cat -- \"$a\"; done\n[ $# -eq 0 ] && /bin/cat\n"
        };
        let text = format!(
            "#!/bin/sh\nprintf '%s\\0' '{name}' \"$@\" >> \"$TETHER_ZSH_LOG/$$\"\nprintf '\\036' >> \"$TETHER_ZSH_LOG/$$\"\n{prints}exit 0\n"
        );
        let path = stubs.join(name);
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    Some(Scene {
        _root: root,
        project,
        stubs,
        logs,
        zsh,
    })
}

/// One program a stub saw run: its name and words.
pub type Ran = Vec<String>;

impl Scene {
    /// Runs `command` under zsh with `options`: what the stubs saw, and
    /// what was printed.
    pub fn run(&self, command: &str, options: &[&str]) -> (Vec<Ran>, String) {
        let log = tempfile::tempdir_in(&self.logs).unwrap();
        let mut zsh = Command::new(&self.zsh);
        zsh.arg("-f");
        for option in options {
            zsh.args(["-o", option]);
        }
        let out = zsh
            .args(["-c", &format!("{BUILTINS}\n{command}")])
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", &self.stubs)
            .env("HOME", self.project.join("a"))
            .env("LC_ALL", "C")
            .env("TETHER_ZSH_LOG", log.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let mut ran = Vec::new();
        for entry in fs::read_dir(log.path()).unwrap() {
            let bytes = fs::read(entry.unwrap().path()).unwrap();
            for record in bytes.split(|b| *b == 0x1e).filter(|r| !r.is_empty()) {
                let mut words: Vec<String> = record
                    .split(|b| *b == 0)
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect();
                words.pop();
                ran.push(words);
            }
        }
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (ran, printed)
    }

    /// Why a word a stub saw names something Tether must never let run
    /// unasked, if it does.
    pub fn harm(&self, program: &str, word: &str) -> Option<String> {
        // An option's value too (`--regexp=/path/of/ls`).
        if let Some(why) = word.split_once('=').and_then(|(_, value)| self.harm(program, value)) {
            return Some(why);
        }
        let path = self.project.join(word);
        fs::symlink_metadata(&path).ok()?;
        let resolved = fs::canonicalize(&path).ok()?;
        let project = fs::canonicalize(&self.project).unwrap();
        if !resolved.starts_with(&project) {
            return Some(format!("`{word}` is outside the project ({})", resolved.display()));
        }
        let inside = resolved.strip_prefix(&project).unwrap();
        let reads = !NAMES_ONLY.contains(&program);
        [".env", "a/b/credentials.json"]
            .iter()
            .any(|s| reads && inside == Path::new(s))
            .then(|| format!("`{word}` is a secret"))
    }
}

/// The programs of each segment when the catalogue covers every one.
pub fn covered(command: &str, cwd: &Path) -> Option<Vec<String>> {
    let segments = Script::parse(command).segments.ok()?;
    let all = !segments.is_empty() && segments.iter().all(|s| catalogue::covers(s, Some(cwd)).is_ok());
    all.then(|| {
        segments
            .iter()
            .filter_map(|s| s.words.first())
            .map(|w| w.value.clone())
            .collect()
    })
}
