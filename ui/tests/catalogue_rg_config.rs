//! ripgrep reads the arguments of the file `RIPGREP_CONFIG_PATH` names
//! before its own: a user's ripgreprc holding `--hidden` makes a plain
//! `rg KEY` print `.env`. The catalogue judges `rg` with those arguments
//! (from the console's environment, the user's), and the real `rg` shows
//! what is at stake.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

const MARK: &str = "TOPSECRET";

/// `tether explain --cwd DIR -- COMMAND`: whether the catalogue covers it.
fn covered(dir: &Path, command: &str, config: Option<&Path>) -> bool {
    let mut explain = Command::new(env!("CARGO_BIN_EXE_tether"));
    explain.args(["explain", "--cwd"]).arg(dir).args(["--", command]);
    explain.env_remove("RIPGREP_CONFIG_PATH");
    if let Some(config) = config {
        explain.env("RIPGREP_CONFIG_PATH", config);
    }
    explain.output().unwrap().status.success()
}

/// What the real `rg` prints for `args` in `dir`.
fn rg(dir: &Path, args: &[&str], config: &Path) -> Option<String> {
    let out = Command::new("rg")
        .args(args)
        .current_dir(dir)
        .env("RIPGREP_CONFIG_PATH", config)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn rg_is_judged_with_the_arguments_of_the_users_ripgreprc() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join(".env"), format!("KEY={MARK}\n")).unwrap();
    std::fs::write(project.join("a.txt"), "KEY=plain\n").unwrap();
    let hidden = home.path().join("ripgreprc");
    std::fs::write(&hidden, "# search everything\n--hidden\n").unwrap();
    let smart = home.path().join("smart");
    std::fs::write(&smart, "--smart-case\n\n").unwrap();
    let missing = home.path().join("none");
    // ripgrep trims each line (review finding N10).
    let indented = home.path().join("indented");
    std::fs::write(&indented, "  --hidden\t\n").unwrap();

    // The control: with that configuration the real rg prints the secret.
    match rg(&project, &["KEY"], &hidden) {
        Some(out) => assert!(out.contains(MARK), "rg --hidden through its config: {out}"),
        None if std::env::var_os("CI").is_some() => panic!("rg is not installed"),
        None => eprintln!("skipped the control: rg is not installed"),
    }
    assert!(
        covered(&project, "rg KEY", None),
        "no configuration: rg skips hidden files"
    );
    assert!(
        !covered(&project, "rg KEY", Some(&hidden)),
        "a ripgreprc with --hidden: rg reads .env"
    );
    assert!(covered(&project, "rg KEY", Some(&smart)), "a harmless configuration");
    if let Some(out) = rg(&project, &["KEY"], &indented) {
        assert!(out.contains(MARK), "rg trims `  --hidden`: {out}");
    }
    assert!(
        !covered(&project, "rg KEY", Some(&indented)),
        "an indented --hidden is --hidden"
    );
    // `--no-config` is not looked for (a word's role is the grammar's to
    // say: `rg -e --no-config` reads the file): asked, never wrongly allowed.
    assert!(!covered(&project, "rg -e --no-config", Some(&hidden)));
    assert!(
        !covered(&project, "rg KEY", Some(&missing)),
        "a configuration that cannot be read is not known"
    );
}
