//! The scratch repositories `leaks_git.rs` judges commands in: how a
//! secret came into each (committed, staged, configured, only named by a
//! file in `.git` …), and running a command there as the agent would.

use std::path::Path;
use std::process::Stdio;

pub const SECRET: &str = "SECRET-4747-git";

/// How the secret came into the repository.
#[derive(Clone, Copy, Debug)]
pub enum Scene {
    /// `.env` committed at HEAD, then removed from the disk (not from git).
    CommittedAtHead,
    /// `.env` committed, then `git rm`-ed in a later commit.
    DeletedLater,
    /// `.env` staged (`git add .env`), never committed.
    StagedOnly,
    /// `config/Credentials.json` and `.ENV` committed, then `git rm`-ed.
    OtherSpellings,
    /// A remote URL holding a token (`https://user:TOKEN@host/…`).
    TokenInRemote,
    /// A commit holding `.env` whose id only files in `.git` name
    /// (`info/X`, `rebase-merge/onto`: review F11); no ref reaches it.
    CommitInGitDir,
    /// `.env` committed, marked assume-unchanged, removed from the disk:
    /// `git grep` reads it from the index (review F10).
    AssumeUnchanged,
    /// A submodule whose index holds a staged `.env` removed from the disk
    /// (review F10).
    SubmoduleStaged,
    /// A remote URL carrying a token in its query (review F13).
    TokenInQuery,
    /// A remote URL carrying a token in its path (review F13).
    TokenInPath,
    /// Secret files under names the review found missing (F9), and a bare
    /// mirror whose configuration holds a token (F12); none tracked.
    NamedFiles,
    /// A history with no secret: `src/x.rs` edited over two commits, `.env`
    /// on disk but ignored.
    Clean,
}

/// A scratch repository in `scene`.
pub struct Repo {
    pub dir: tempfile::TempDir,
    /// The id of the blob holding the secret, where there is one.
    pub blob: String,
}

impl Repo {
    pub fn new(scene: Scene) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = Self {
            dir,
            blob: String::new(),
        };
        let p = repo.path().to_owned();
        std::fs::create_dir_all(p.join("src")).unwrap();
        std::fs::create_dir_all(p.join("config")).unwrap();
        let write = |name: &str, text: &str| std::fs::write(p.join(name), text).unwrap();
        write("src/x.rs", "fn main() {}\n");
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["add", "src/x.rs"]);
        repo.commit("start");
        let secret = format!("KEY={SECRET}\n");
        let blob = |repo: &Repo| repo.output(&["hash-object", ".env"]);
        let blob = match scene {
            Scene::CommittedAtHead => {
                write(".env", &secret);
                repo.git(&["add", ".env"]);
                repo.commit("add env");
                let id = blob(&repo);
                std::fs::remove_file(p.join(".env")).unwrap();
                id
            }
            Scene::DeletedLater => {
                write(".env", &secret);
                repo.git(&["add", ".env"]);
                repo.commit("add env");
                let id = blob(&repo);
                repo.git(&["rm", "-q", ".env"]);
                repo.commit("remove env");
                id
            }
            Scene::StagedOnly => {
                write(".env", &secret);
                repo.git(&["add", ".env"]);
                blob(&repo)
            }
            Scene::OtherSpellings => {
                write("config/Credentials.json", &format!("{{\"k\": \"{SECRET}\"}}\n"));
                write(".ENV", &secret);
                repo.git(&["add", "config/Credentials.json", ".ENV"]);
                repo.commit("add credentials");
                repo.git(&["rm", "-q", "config/Credentials.json", ".ENV"]);
                repo.commit("remove credentials");
                String::new()
            }
            Scene::TokenInRemote => {
                repo.git(&[
                    "remote",
                    "add",
                    "origin",
                    &format!("https://bot:{SECRET}@example.com/x.git"),
                ]);
                String::new()
            }
            Scene::AssumeUnchanged => {
                write(".env", &secret);
                repo.git(&["add", ".env"]);
                repo.commit("add env");
                repo.git(&["update-index", "--assume-unchanged", ".env"]);
                std::fs::remove_file(p.join(".env")).unwrap();
                String::new()
            }
            Scene::SubmoduleStaged => {
                let sub = Repo::new(Scene::Clean);
                let from = sub.path().to_str().unwrap().to_owned();
                repo.git(&[
                    "-c",
                    "protocol.file.allow=always",
                    "submodule",
                    "add",
                    "-q",
                    &from,
                    "sub",
                ]);
                let inner = p.join("sub");
                std::fs::write(inner.join(".env"), &secret).unwrap();
                let add = std::process::Command::new("git")
                    .args(["add", "-f", ".env"])
                    .current_dir(&inner)
                    .status()
                    .unwrap();
                assert!(add.success());
                std::fs::remove_file(inner.join(".env")).unwrap();
                String::new()
            }
            Scene::CommitInGitDir => {
                write(".env", &secret);
                repo.git(&["add", ".env"]);
                let tree = repo.output(&["write-tree"]);
                repo.git(&["rm", "-q", "--cached", ".env"]);
                std::fs::remove_file(p.join(".env")).unwrap();
                let commit = repo.output(&["commit-tree", &tree, "-p", "HEAD", "-m", "x"]);
                for name in ["info/X", "rebase-merge/onto"] {
                    let file = p.join(".git").join(name);
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(file, format!("{commit}\n")).unwrap();
                }
                String::new()
            }
            Scene::TokenInQuery | Scene::TokenInPath => {
                let url = match scene {
                    Scene::TokenInQuery => format!("https://example.com/x.git?access_token={SECRET}"),
                    _ => format!("https://example.com/glpat-{SECRET}/x.git"),
                };
                repo.git(&["remote", "add", "origin", &url]);
                String::new()
            }
            Scene::NamedFiles => {
                for name in SECRET_NAMES {
                    if let Some(dir) = Path::new(name).parent() {
                        std::fs::create_dir_all(p.join(dir)).unwrap();
                    }
                    write(name, &secret);
                }
                repo.git(&["clone", "-q", "--bare", ".", "mirror.git"]);
                let url = format!("https://bot:{SECRET}@example.com/x.git");
                repo.git(&["--git-dir=mirror.git", "config", "remote.origin.url", &url]);
                String::new()
            }
            Scene::Clean => {
                write("src/x.rs", "fn main() { println!(\"x\"); }\n");
                repo.git(&["add", "src/x.rs"]);
                repo.commit("edit");
                write(".gitignore", ".env\n");
                write(".env", &secret);
                write("src/x.rs", "fn main() { println!(\"y\"); }\n");
                repo.git(&["add", "src/x.rs"]);
                String::new()
            }
        };
        Self { blob, ..repo }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn git(&self, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(self.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    pub fn output(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(self.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    pub fn commit(&self, message: &str) {
        self.git(&["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", message]);
    }

    /// The command with `@BLOB@` naming the secret's blob.
    pub fn command(&self, template: &str) -> String {
        template.replace("@BLOB@", &self.blob)
    }

    /// Runs a command as the agent would (bash -c in the repository, with
    /// no pager and no configuration but the repository's) and says what it
    /// printed.
    pub fn run(&self, command: &str) -> String {
        let output = std::process::Command::new("bash")
            .args(["-c", command])
            .current_dir(self.path())
            .env("GIT_PAGER", "cat")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }
}

/// Secret files' names a demanding user expects asked (review F9).
pub const SECRET_NAMES: &[&str] = &[
    "prod.env",
    ".env_prod",
    ".env-prod",
    "service-account.json",
    "gcp-key.json",
    "firebase-adminsdk-x1.json",
    "terraform.tfstate",
    "prod.tfvars",
    "private.asc",
    "id.ppk",
    ".htpasswd",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".vault-token",
    ".terraformrc",
    ".yarnrc.yml",
    ".config/gh/hosts.yml",
    ".gradle/gradle.properties",
    // Review N9 and N17.
    ".env~",
    "client_secret_1.apps.googleusercontent.com.json",
    "token.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".dev.vars",
    ".bash_history",
    "prod.kubeconfig",
    ".config/github-copilot/hosts.json",
    ".git/rr-cache/0a1b/preimage",
];
