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
        // `.env.example` and its kin are committed templates, not secrets;
        // `prod.env`, `.env-prod`, `.env_prod` are docker-compose's and
        // other tools' spellings of the same file.
        matches: |c| {
            c == ".env"
                || c == ".envrc"
                || c.strip_prefix(".env")
                    .and_then(|rest| rest.strip_prefix(['.', '-', '_']))
                    .is_some_and(|rest| !TEMPLATES.contains(&rest))
                || c.strip_suffix(".env").is_some_and(|rest| {
                    let last = rest.rsplit('.').next().unwrap_or(rest);
                    !TEMPLATES.contains(&rest) && !CODE_RECEIVERS.contains(&last)
                })
        },
        why: "an environment file (.env, .env.*, *.env, .envrc): it usually holds API keys and passwords",
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
            [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".p8"]
                .iter()
                .any(|ext| c.ends_with(ext))
        },
        why: "a key or certificate file (*.pem, *.key, *.p12, *.pfx, *.ppk, *.p8)",
    },
    Kind {
        matches: |c| [".asc", ".gpg", ".kdbx"].iter().any(|ext| c.ends_with(ext)),
        why: "a PGP key, a file encrypted with gpg, or a password database (*.asc, *.gpg, *.kdbx)",
    },
    Kind {
        // GCP's and Firebase's downloaded keys: `my-project-1234-abcd.json`
        // cannot be told by its name, the usual renamings can.
        matches: |c| {
            c.ends_with(".json")
                && (c.contains("service-account")
                    || c.contains("service_account")
                    || c.contains("adminsdk")
                    || c.ends_with("-key.json")
                    || c.ends_with("_key.json"))
        },
        why: "a cloud service account's key (*service-account*.json, *-key.json, *adminsdk*.json)",
    },
    Kind {
        matches: |c| c.contains(".tfstate") || c.ends_with(".tfvars") || c.ends_with(".tfvars.json"),
        why: "Terraform state or variables (*.tfstate, *.tfvars): they hold the infrastructure's passwords and keys",
    },
    Kind {
        matches: |c| {
            matches!(
                c,
                ".htpasswd"
                    | ".my.cnf"
                    | ".s3cfg"
                    | ".boto"
                    | ".vault-token"
                    | ".terraformrc"
                    | ".yarnrc.yml"
                    | ".dockercfg"
            )
        },
        why: "a tool's credentials file (.htpasswd, .my.cnf, .s3cfg, .boto, .vault-token, .terraformrc, .yarnrc.yml): it holds passwords or tokens",
    },
    Kind {
        // Google's downloaded OAuth client and its quickstarts' refresh
        // tokens, gcloud's application default credentials, Claude Code's
        // and Codex's own token files, Composer's `auth.json`, Wrangler's
        // `.dev.vars`.
        matches: |c| {
            (c.starts_with("client_secret") && c.ends_with(".json"))
                || c.starts_with("private_key")
                || matches!(
                    c,
                    "token.json"
                        | "token.pickle"
                        | "application_default_credentials.json"
                        | ".credentials.json"
                        | "auth.json"
                        | ".dev.vars"
                        | ".secret"
                        | ".secrets"
                        | "rclone.conf"
                        | "wp-config.php"
                        | "nuget.config"
                        | ".databrickscfg"
                        | "logins.json"
                        | "key4.db"
                )
                || c.strip_prefix("secret.").is_some_and(|ext| {
                    matches!(
                        ext,
                        "json" | "yaml" | "yml" | "toml" | "ini" | "conf" | "cfg" | "properties" | "xml"
                    )
                })
        },
        why: "a token or password file (client_secret*.json, token.json, auth.json, .credentials.json, .dev.vars, secret.json/yaml/toml …, private_key*, rclone.conf, wp-config.php …)",
    },
    Kind {
        matches: |c| c.contains("kubeconfig"),
        why: "a Kubernetes configuration (*kubeconfig*): it holds cluster credentials",
    },
    Kind {
        // `.bash_history`, `.zsh_history`, `.psql_history`, `.mysql_history`:
        // typed tokens and `mysql -pPASSWORD` sit there.
        matches: |c| c.ends_with("_history"),
        why: "a shell or client history (*_history): typed passwords and tokens sit there",
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

/// What a committed template of an environment file is called
/// (`.env.example`, `sample.env`).
const TEMPLATES: &[&str] = &["example", "sample", "template", "dist"];

/// What code reads an environment from (`process.env`, `import.meta.env`,
/// `Deno.env`): a word searched for all day, never a file's name.
const CODE_RECEIVERS: &[&str] = &["process", "meta", "this", "self", "deno", "bun", "ctx", "os", "std"];

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
        parts.clone().find_map(component).or_else(|| in_directory(parts))
    })
}

/// [`why`] for a path already resolved on disk.
pub fn why_path(path: &Path) -> Option<&'static str> {
    let parts = path.iter().map(|c| c.to_string_lossy());
    parts
        .clone()
        .find_map(|c| component(&c))
        .or_else(|| in_directory(parts))
}

const GIT_CONFIG: &str =
    "a repository's git configuration (.git/config): remote URLs and HTTP headers there can hold tokens";

/// A file that is a secret by the directory it is in:
/// - a repository's own configuration (`.git/config`, a submodule's
///   `.git/modules/NAME/config`, a worktree's `config.worktree`, a bare
///   repository's `NAME.git/config`): always a secret, since what it holds
///   is not known without reading it — remote URLs with a token
///   (`https://user:TOKEN@host/…`), and the `http.extraHeader` with a
///   token that CI checkouts (GitHub's `actions/checkout`) write there;
/// - gh's `gh/hosts.yml` and Gradle's `~/.gradle/gradle.properties`, which
///   hold tokens (a project's own `gradle.properties` is build settings).
fn in_directory<S: AsRef<str>>(parts: impl Iterator<Item = S>) -> Option<&'static str> {
    let mut in_git = false;
    let mut grand = String::new();
    let mut parent = String::new();
    for part in parts {
        let part = part.as_ref().to_lowercase();
        if (in_git || parent.ends_with(".git")) && (part == "config" || part == "config.worktree") {
            return Some(GIT_CONFIG);
        }
        if parent == "gh" && part == "hosts.yml" {
            return Some("gh's hosts.yml: it holds GitHub tokens");
        }
        if parent == ".gradle" && part == "gradle.properties" {
            return Some("Gradle's own gradle.properties (~/.gradle): it holds repository credentials");
        }
        if in_git && parent == ".git" && matches!(part.as_str(), "rr-cache" | "rebase-apply" | "rebase-merge" | "lfs") {
            return Some(
                "a directory where git keeps files' contents under other names (.git/rr-cache, rebase-apply, rebase-merge, lfs): a secret's text may be there",
            );
        }
        if let Some(why) = tool_directory(&parent, &part) {
            return Some(why);
        }
        if grand == ".config" && parent == "gcloud" {
            return Some("gcloud's state (~/.config/gcloud): it holds access tokens and credentials");
        }
        in_git |= part == ".git";
        grand = std::mem::replace(&mut parent, part);
    }
    None
}

/// A tool's credentials known by the directory they are in: Maven's
/// `.m2/settings.xml`, Bundler's `.bundle/config`, Hugging Face's and
/// Copilot's tokens, sops' age keys, the Stripe, doctl, fly and
/// 1Password CLIs' configurations, firebase-tools' configstore.
fn tool_directory(parent: &str, part: &str) -> Option<&'static str> {
    let known = matches!(
        (parent, part),
        (".m2", "settings.xml")
            | (".bundle", "config")
            | ("huggingface" | ".huggingface", "token")
            | ("github-copilot", "hosts.json" | "apps.json")
            | ("age", "keys.txt")
            | ("configstore", "firebase-tools.json")
            | ("stripe", "config.toml")
            | ("doctl", "config.yaml")
            | (".fly", "config.yml")
            | ("op", "config")
            | ("heroku", "config.json")
            | (".wrangler", "config")
    );
    known.then_some(
        "a tool's credentials (~/.m2/settings.xml, .bundle/config, huggingface/token, github-copilot/hosts.json …)",
    )
}

/// A bare repository's `config` under any name (`/srv/repo/config`): a
/// file `config` whose directory is a git directory (HEAD, objects/,
/// refs/, as git tells one). `path` is absolute, as the file is on disk.
pub fn bare_config(path: &Path) -> Option<&'static str> {
    let named = path.file_name().is_some_and(|n| n.eq_ignore_ascii_case("config"));
    let dir = path.parent()?;
    (named
        && std::fs::symlink_metadata(dir.join("HEAD")).is_ok()
        && dir.join("objects").is_dir()
        && dir.join("refs").is_dir())
    .then_some(GIT_CONFIG)
}

fn component(component: &str) -> Option<&'static str> {
    if component.is_empty() || component == "." || component == ".." {
        return None;
    }
    let lower = component.to_lowercase();
    // An editor's backup or autosave of a secret is the secret: `.env~`,
    // `#.env#`, `.netrc.bak`, `id_rsa.orig`.
    let unsaved = lower
        .strip_prefix('#')
        .and_then(|c| c.strip_suffix('#'))
        .or_else(|| lower.strip_suffix('~'))
        .or_else(|| {
            [".bak", ".orig", ".save", ".old", ".swp"]
                .iter()
                .find_map(|s| lower.strip_suffix(s))
        })
        .filter(|c| !c.is_empty());
    KINDS
        .iter()
        .find(|k| (k.matches)(&lower) || unsaved.is_some_and(|c| (k.matches)(c)))
        .map(|k| k.why)
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
            // Review F9: names a demanding user expects asked.
            "prod.env",
            "deploy/app.ENV",
            ".env_prod",
            ".env-prod",
            "service-account.json",
            "my-service-account-prod.json",
            "gcp-key.json",
            "keys/sa_key.json",
            "firebase-adminsdk-x1y2z.json",
            "terraform.tfstate",
            "terraform.tfstate.backup",
            "env/prod.tfvars",
            "prod.tfvars.json",
            "private.asc",
            "key.gpg",
            "id.ppk",
            "AuthKey_ABC123.p8",
            "vault.kdbx",
            ".htpasswd",
            ".my.cnf",
            ".s3cfg",
            ".boto",
            ".vault-token",
            ".terraformrc",
            "/home/u/.config/gh/hosts.yml",
            "/home/u/.gradle/gradle.properties",
            ".yarnrc.yml",
            ".dockercfg",
            // Review N9: backups, tokens, histories, tools' credentials.
            ".env~",
            "#.env#",
            ".netrc.bak",
            "id_rsa.orig",
            "client_secret.json",
            "client_secret_123.apps.googleusercontent.com.json",
            "token.json",
            "token.pickle",
            "application_default_credentials.json",
            "/home/u/.claude/.credentials.json",
            "/home/u/.codex/auth.json",
            ".dev.vars",
            "secret.yaml",
            ".secrets",
            "private_key.txt",
            "prod.kubeconfig",
            "rclone.conf",
            "/home/u/.m2/settings.xml",
            ".bundle/config",
            "NuGet.Config",
            "wp-config.php",
            ".bash_history",
            ".zsh_history",
            ".psql_history",
            "/home/u/.cache/huggingface/token",
            "/home/u/.config/github-copilot/hosts.json",
            "/home/u/.config/sops/age/keys.txt",
            "/home/u/.config/gcloud/access_tokens.db",
            "/home/u/.config/configstore/firebase-tools.json",
            "/home/u/.wrangler/config/default.toml",
            ".databrickscfg",
            // Review N17: git keeps files' contents there.
            ".git/rr-cache/0123/preimage",
            ".git/rebase-apply/patch",
            ".git/lfs/objects/ab/cd/abcdef",
            ".cargo/credentials",
            // Review F12: a bare repository's configuration, by its name.
            "mirror.git/config",
        ] {
            assert!(why(secret).is_some(), "{secret:?} is a secret");
        }
        for plain in [
            "src/secret.rs",
            "src/gcloud/client.py",
            "history.md",
            "README.md~",
            "docs/tokens.md",
            ".git/COMMIT_EDITMSG",
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
            ".env-example",
            ".env_sample",
            "example.env",
            "sample.env",
            "process.env",
            "import.meta.env",
            "Deno.env",
            "environment.rs",
            "keys.json",
            "package.json",
            "tsconfig.json",
            "src/monkey.json",
            "terraform.tfvars.example",
            "main.tf",
            "gradle.properties",
            "docs/hosts.yml",
            ".yarnrc",
            "src/config/mod.rs",
            "config",
            "x.git/HEAD",
        ] {
            assert_eq!(why(plain), None, "{plain:?} is not a secret");
        }
        assert!(why_path(Path::new("/p/.SSH/known_hosts")).is_some());
        assert!(why_path(Path::new("/p/.git/config")).is_some());
    }
}
