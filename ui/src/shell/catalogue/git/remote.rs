//! Remote URLs: `git remote -v` prints each as configured, and a URL can
//! carry a token (`https://user:TOKEN@host/…`). The answer is kept per
//! repository until one of the configuration files git read changes (a
//! spawn costs each call 1.5 ms); a configuration that includes other
//! files (`include.path`, `includeIf`) is read again at every call.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::repo::Repo;
use super::spawn;

/// How long `git remote -v` may take.
const QUICK: Duration = Duration::from_secs(2);

/// An answer, the configuration files it was read from and their state.
struct Kept {
    files: Vec<PathBuf>,
    state: u64,
    answer: Result<(), String>,
}

static CACHE: Mutex<Option<HashMap<PathBuf, Kept>>> = Mutex::new(None);

/// `git remote -v` prints each remote's URL as configured, rewritten by
/// `url.*.insteadOf`: covered only when none carries credentials.
pub(super) fn urls(repo: &Repo) -> Result<(), String> {
    let key = repo.git_dir.clone();
    if let Some(kept) = CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .get(&key)
        && state(&kept.files) == kept.state
    {
        return kept.answer.clone();
    }
    // The files git reads besides the usual places; nothing kept when one
    // includes another, whose condition (`includeIf "onbranch:…"`) or
    // target may change unseen, or when they change while git reads.
    let Some(origins) = origins(repo) else {
        return read(repo);
    };
    let mut files = candidates(repo);
    files.extend(origins.iter().cloned());
    files.sort();
    files.dedup();
    let before = state(&files);
    let answer = read(repo);
    if state(&files) == before && origins_now(repo, &origins) {
        let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        let cache = cache.get_or_insert_with(HashMap::new);
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(
            key,
            Kept {
                files,
                state: before,
                answer: answer.clone(),
            },
        );
    }
    answer
}

/// Whether git still reads from the same files.
fn origins_now(repo: &Repo, before: &[PathBuf]) -> bool {
    origins(repo).is_some_and(|now| now == before)
}

fn read(repo: &Repo) -> Result<(), String> {
    let out = spawn::git(repo, &["remote", "-v"], QUICK).map_err(|why| format!("the remotes cannot be read: {why}"))?;
    let out = String::from_utf8_lossy(&out);
    match out
        .lines()
        .filter_map(|l| l.split('\t').nth(1))
        .find(|url| url_holds_credentials(url))
    {
        Some(_) => Err(
            "a remote's URL holds credentials (`https://user:TOKEN@host`, a token in its query or path), which `git remote -v` prints"
                .into(),
        ),
        None => Ok(()),
    }
}

/// Where git reads configuration from, whether the files exist yet or not:
/// the repository's, the worktree's, the user's, the system's.
fn candidates(repo: &Repo) -> Vec<PathBuf> {
    let mut files = vec![
        repo.common_dir.join("config"),
        repo.git_dir.join("config.worktree"),
        PathBuf::from("/etc/gitconfig"),
    ];
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    files.extend(xdg.map(|x| x.join("git/config")));
    files.extend(home.map(|h| h.join(".gitconfig")));
    files
}

/// The files git read its configuration from (`git config --list
/// --show-origin`); `None` when one includes another, or the list cannot
/// be read.
fn origins(repo: &Repo) -> Option<Vec<PathBuf>> {
    let out = spawn::git(repo, &["config", "--list", "--show-origin", "--name-only", "-z"], QUICK).ok()?;
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut files = Vec::new();
    while let (Some(origin), Some(name)) = (fields.next(), fields.next()) {
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        if name.starts_with("include.") || name.starts_with("includeif.") {
            return None;
        }
        match String::from_utf8_lossy(origin).strip_prefix("file:") {
            Some(path) if Path::new(path).is_absolute() => files.push(PathBuf::from(path)),
            Some(_) => return None,
            // `-c` given to the spawn itself.
            None => {}
        }
    }
    Some(files)
}

/// A digest of the files' sizes, times and inodes (absent ones too).
fn state(files: &[PathBuf]) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for file in files {
        file.hash(&mut hasher);
        std::fs::metadata(file)
            .ok()
            .map(|m| (m.len(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino()))
            .hash(&mut hasher);
    }
    hasher.finish()
}

/// A URL with a password, or with a user name over HTTP (where a token is
/// often the user name: `https://TOKEN@github.com/…`), or a token
/// elsewhere: any query or fragment (`?access_token=…`), a path segment
/// starting as a forge's token does (`ghp_`, `glpat-` …) or long and random
/// like one. `ssh://git@host` and `git@host:path` name only a user.
fn url_holds_credentials(url: &str) -> bool {
    if url.contains(['?', '#']) || url.split(['/', ':', '@']).any(token_like) {
        return true;
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or("");
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return false;
    };
    let scheme = scheme.to_ascii_lowercase();
    userinfo.contains(':') || scheme.contains("http") || scheme.contains("ftp")
}

/// How GitHub's, GitLab's and Slack's tokens begin.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glptt-",
    "xoxb-",
    "xoxp-",
];

/// A piece of a URL that reads as a token: a forge's prefix, or 32 or more
/// letters and digits with no separator, both kinds present (a repository's
/// name has words; a token or a hex digest has none).
fn token_like(piece: &str) -> bool {
    let lower = piece.to_ascii_lowercase();
    TOKEN_PREFIXES.iter().any(|p| lower.starts_with(p))
        || (piece.len() >= 32
            && piece.bytes().all(|b| b.is_ascii_alphanumeric())
            && piece.bytes().any(|b| b.is_ascii_digit())
            && piece.bytes().any(|b| b.is_ascii_alphabetic()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_a_url_are_found() {
        for secret in [
            "https://user:tok@host/x.git",
            "https://ghp_token@github.com/x.git",
            "ssh://user:pw@host/x",
            "HTTP://a@h/",
            // Review F13: a token in the query or the path.
            "https://github.com/x/y.git?access_token=ghp_Q",
            "https://host/x.git?private_token=abc",
            "https://host/ghp_16C7e42F292c6912E7710c838347Ae178B4a/x.git",
            "https://gitlab.example.com/glpat-abcdefghij0123456789/x.git",
            "https://host/github_pat_11ABCDEFG0123456789_abcdefghij/x.git",
            "https://host/t/0123456789abcdef0123456789abcdef01234567/x.git",
            "https://host/x.git#token",
        ] {
            assert!(url_holds_credentials(secret), "{secret}");
        }
        for plain in [
            "https://github.com/x/y.git",
            "git@github.com:x/y.git",
            "ssh://git@github.com/x/y",
            "/srv/repo.git",
            "https://host/a@b",
            "https://github.com/rust-lang/rust-analyzer-long-repository-name-2024.git",
            "https://dev.azure.com/org/project/_git/repo",
            "git@gitlab.com:group/sub-group/project.git",
        ] {
            assert!(!url_holds_credentials(plain), "{plain}");
        }
    }
}
