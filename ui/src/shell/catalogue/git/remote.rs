//! Remote URLs: `git remote -v` prints each as configured, and a URL can
//! carry a token (`https://user:TOKEN@host/…`).

use std::time::Duration;

use super::repo::Repo;
use super::spawn;

/// How long `git remote -v` may take.
const QUICK: Duration = Duration::from_secs(2);

/// `git remote -v` prints each remote's URL as configured, rewritten by
/// `url.*.insteadOf`: covered only when none carries credentials.
pub(super) fn urls(repo: &Repo) -> Result<(), String> {
    let out = spawn::git(repo, &["remote", "-v"], QUICK).map_err(|why| format!("the remotes cannot be read: {why}"))?;
    let out = String::from_utf8_lossy(&out);
    match out
        .lines()
        .filter_map(|l| l.split('\t').nth(1))
        .find(|url| url_holds_credentials(url))
    {
        Some(_) => {
            Err("a remote's URL holds credentials (`https://user:TOKEN@host`), which `git remote -v` prints".into())
        }
        None => Ok(()),
    }
}

/// A URL with a password, or with a user name over HTTP (where a token is
/// often the user name: `https://TOKEN@github.com/…`). `ssh://git@host`
/// and `git@host:path` name only a user.
fn url_holds_credentials(url: &str) -> bool {
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
        ] {
            assert!(url_holds_credentials(secret), "{secret}");
        }
        for plain in [
            "https://github.com/x/y.git",
            "git@github.com:x/y.git",
            "ssh://git@github.com/x/y",
            "/srv/repo.git",
            "https://host/a@b",
        ] {
            assert!(!url_holds_credentials(plain), "{plain}");
        }
    }
}
