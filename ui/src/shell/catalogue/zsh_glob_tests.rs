//! zsh's file-name generation as [`super::matches`] reads it, against the
//! real zsh: generated patterns over a directory with hidden files, a link
//! to a directory, names holding `^`, `#` and `~`, under each option that
//! changes a match. Where both expand a pattern, they must agree; where the
//! reader refuses one, it is not covered (never a wrong reading).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::Path;
use std::process::Command;

use super::{Shopts, has_meta, matches};

const FILES: &[&str] = &[
    "a",
    "b",
    "ab",
    "aab",
    "ba",
    "abb",
    ".env",
    ".ab",
    "A.TXT",
    "a.txt",
    "x~",
    "a#b",
    "^x",
    "src/main.rs",
    "src/sub/k.rs",
    "src/.hid.rs",
    ".hid/h.rs",
    "Src2/q.rs",
];

const PIECES: &[&str] = &[
    "a", "b", ".", "*", "?", "^", "#", "##", "~", "/", "**/", "x", "\\^", "\\#", "src", "rs", "**", "t",
];

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in FILES {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    std::os::unix::fs::symlink("src", dir.path().join("lnk")).unwrap();
    dir
}

fn zsh() -> Option<&'static str> {
    let found = ["/usr/bin/zsh", "/bin/zsh"].into_iter().find(|p| Path::new(p).exists());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have zsh (.ci/run installs it)"
        );
        eprintln!("skipped: no zsh at /usr/bin/zsh");
    }
    found
}

/// Patterns made of [`PIECES`], from a fixed seed: each with a pattern
/// character, none starting where zsh reads something else (`#`, `~`, `=`).
fn patterns(count: usize) -> Vec<String> {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % n as u64).unwrap()
    };
    let mut out = Vec::new();
    while out.len() < count {
        let len = 1 + next(5);
        let p: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
        if p.starts_with(['#', '~', '=', '/']) || !p.contains(['*', '?', '^', '#']) || out.contains(&p) {
            continue;
        }
        out.push(p);
    }
    out
}

/// What zsh makes of each pattern under `options` (`NULL_GLOB` on, so a
/// pattern that matches nothing is no word): its words, or `None` where
/// zsh refused the pattern (a bad pattern: nothing runs).
fn real(zsh: &str, cwd: &Path, options: &[&str], patterns: &[String]) -> Vec<Option<Vec<String>>> {
    let script: String = patterns
        .iter()
        .map(|p| format!("( print -rN -- {p} ) 2>/dev/null || print -rn -- $'\\x01'\nprint -rn -- $'\\x02'\n"))
        .collect();
    let mut zsh = Command::new(zsh);
    zsh.arg("-f").args(["-o", "nullglob"]);
    for option in options {
        zsh.args(["-o", option]);
    }
    let out = zsh
        .args(["-c", &script])
        .current_dir(cwd)
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut results: Vec<Option<Vec<String>>> = text
        .split('\x02')
        .map(|one| {
            (!one.contains('\x01')).then(|| {
                let mut words: Vec<String> = one.split('\0').filter(|w| !w.is_empty()).map(str::to_owned).collect();
                words.sort();
                words
            })
        })
        .collect();
    results.pop();
    assert_eq!(results.len(), patterns.len(), "zsh answered every pattern: {text:?}");
    results
}

#[test]
fn patterns_expand_as_the_real_zsh_expands_them_or_are_refused() {
    let Some(zsh) = zsh() else {
        return;
    };
    let dir = scratch();
    let patterns = patterns(400);
    let mut compared = 0;
    let mut wrong = Vec::new();
    for bits in 0..16u8 {
        let shopts = Shopts {
            zsh: true,
            dotglob: bits & 1 != 0,
            nocaseglob: bits & 2 != 0,
            globstar: bits & 4 != 0,
            extendedglob: bits & 8 != 0,
            nullglob: true,
        };
        let options: Vec<&str> = [
            (shopts.dotglob, "globdots"),
            (shopts.nocaseglob, "nocaseglob"),
            (shopts.globstar, "globstarshort"),
            (shopts.extendedglob, "extendedglob"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, o)| *o)
        .collect();
        let real = real(zsh, dir.path(), &options, &patterns);
        for (pattern, real) in patterns.iter().zip(real) {
            // A word with no pattern character is no pattern: zsh passes it.
            if !has_meta(pattern, shopts.extendedglob) {
                continue;
            }
            // Every directory is inside `/`: only the matching is compared here.
            let Ok(ours) = matches(pattern, shopts.extendedglob, (dir.path(), Path::new("/")), shopts) else {
                continue;
            };
            match real {
                Some(real) if real == ours => compared += 1,
                Some(real) => wrong.push(format!("`{pattern}` with {options:?}: zsh {real:?}, read {ours:?}")),
                // zsh refused it: nothing runs, whatever was read.
                None => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
    assert!(compared > 2_000, "only {compared} patterns compared");
}
