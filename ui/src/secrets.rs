//! The one list of file names that usually hold secrets (keys, tokens,
//! passwords), read the same way by the file tools' `secret` condition and
//! by the shell catalogue: case-insensitive (`.ENV` is `.env` on a
//! case-insensitive file system, and a user who names `Credentials.json`
//! means the same file), on every component of a path.

use std::path::Path;

/// One kind of secret file: how a path component is recognised, and why it
/// is one (said to the human when a call is asked for it).
struct Kind {
    matches: fn(&str) -> bool,
    why: &'static str,
}

const KINDS: &[Kind] = &[
    Kind {
        // `.env.example` and its kin are committed templates, not secrets.
        matches: |c| {
            c == ".env"
                || c == ".envrc"
                || c.strip_prefix(".env.")
                    .is_some_and(|rest| !matches!(rest, "example" | "sample" | "template" | "dist"))
        },
        why: "an environment file (.env, .envrc): it usually holds API keys and passwords",
    },
    Kind {
        matches: |c| {
            matches!(
                c,
                ".git-credentials" | ".netrc" | "_netrc" | ".npmrc" | ".pypirc" | ".pgpass"
            )
        },
        why: "a credentials file (.git-credentials, .netrc, .npmrc, .pypirc, .pgpass): it holds tokens or passwords",
    },
    Kind {
        matches: |c| {
            matches!(
                c,
                ".ssh" | ".gnupg" | ".aws" | ".kube" | ".docker" | ".azure" | ".gcloud"
            )
        },
        why: "a directory of keys or cloud credentials (.ssh, .gnupg, .aws, .kube, .docker)",
    },
    Kind {
        // A compiled language's source file or a document named so
        // (`secrets.rs`, `credentials.go`, `credentials.md`) holds code or
        // prose about secrets, read all day; a data file, or a script an
        // interpreter runs as configuration (`secrets.py`, `secrets.js`),
        // still counts.
        matches: |c| {
            (c.starts_with("credentials") || c.starts_with("secrets."))
                && !c.rsplit_once('.').is_some_and(|(_, ext)| CODE_OR_PROSE.contains(&ext))
        },
        why: "a credentials file (credentials*, secrets.*)",
    },
    Kind {
        matches: |c| {
            [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore"]
                .iter()
                .any(|ext| c.ends_with(ext))
        },
        why: "a key or certificate file (*.pem, *.key, *.p12, *.pfx)",
    },
    Kind {
        matches: |c| {
            [
                "id_rsa",
                "id_dsa",
                "id_ecdsa",
                "id_ed25519",
                "id_ecdsa_sk",
                "id_ed25519_sk",
            ]
            .iter()
            .any(|key| c.starts_with(key))
        },
        why: "an SSH private key (id_rsa, id_ed25519 …)",
    },
];

/// Extensions of compiled languages' sources and of documents.
const CODE_OR_PROSE: &[&str] = &[
    "rs", "go", "c", "h", "cc", "cpp", "hpp", "java", "kt", "swift", "cs", "scala", "zig", "md", "rst", "adoc",
];

/// Why `path` names a secret, if any of its components is one. The path is
/// read as written (`~` and `..` included) and also split where a word may
/// hold a path after `=` or `:` (`--file=.env`, `HEAD:.env`).
pub fn why(path: &str) -> Option<&'static str> {
    path.split(['=', ':']).find_map(|piece| {
        let parts = piece.split(['/', '\\']);
        parts.clone().find_map(component).or_else(|| git_config(parts))
    })
}

/// [`why`] for a path already resolved on disk.
pub fn why_path(path: &Path) -> Option<&'static str> {
    let parts = path.iter().map(|c| c.to_string_lossy());
    parts.clone().find_map(|c| component(&c)).or_else(|| git_config(parts))
}

/// A repository's own configuration (`.git/config`, a submodule's
/// `.git/modules/NAME/config`, a worktree's `config.worktree`): always a
/// secret, since what it holds is not known without reading it — remote
/// URLs with a token (`https://user:TOKEN@host/…`), and the
/// `http.extraHeader` with a token that CI checkouts (GitHub's
/// `actions/checkout`) write there.
fn git_config<S: AsRef<str>>(parts: impl Iterator<Item = S>) -> Option<&'static str> {
    let mut in_git = false;
    for part in parts {
        let part = part.as_ref().to_lowercase();
        if part == ".git" {
            in_git = true;
        } else if in_git && (part == "config" || part == "config.worktree") {
            return Some(
                "a repository's git configuration (.git/config): remote URLs and HTTP headers there can hold tokens",
            );
        }
    }
    None
}

fn component(component: &str) -> Option<&'static str> {
    if component.is_empty() || component == "." || component == ".." {
        return None;
    }
    let lower = component.to_lowercase();
    KINDS.iter().find(|k| (k.matches)(&lower)).map(|k| k.why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_found_in_any_case_and_in_any_component() {
        for secret in [
            ".env",
            ".ENV",
            "sub/.Env.local",
            ".envrc",
            "config/Credentials.json",
            "config/secrets.yml",
            "settings/secrets.py",
            "credentials",
            "x.PEM",
            "server.key",
            "~/.ssh/id_rsa",
            "/home/u/.aws/config",
            "/home/u/.kube/config",
            "/home/u/.docker/config.json",
            ".git-credentials",
            ".netrc",
            ".npmrc",
            ".pypirc",
            "keys/id_ed25519.pub",
            "--file=.env",
            "HEAD:.env",
            "a\\.env",
            ".git/config",
            "sub/.GIT/modules/lib/config",
            ".git/worktrees/w/config.worktree",
        ] {
            assert!(why(secret).is_some(), "{secret:?} is a secret");
        }
        for plain in [
            "src/env.rs",
            "environment.md",
            ".editorconfig",
            "keyboard.rs",
            "monkey",
            "README.md",
            "docs/credentialing.md.bak/..",
            ".env.example",
            ".ENV.sample",
            "src/config/mod.rs",
            "ui/src/secrets.rs",
            "auth/credentials.go",
            "docs/Credentials.md",
            ".github/config.yml",
            ".git/HEAD",
        ] {
            assert_eq!(why(plain), None, "{plain:?} is not a secret");
        }
        assert!(why_path(Path::new("/p/.SSH/known_hosts")).is_some());
        assert!(why_path(Path::new("/p/.git/config")).is_some());
    }
}
