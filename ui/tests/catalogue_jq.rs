//! jq in the read-only catalogue, against the real jq: every covered filter
//! of the corpus, run by bash with a secret in the environment and a
//! project holding `.env`, prints no secret; each refused form does print
//! it (the control: the corpus can fail).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

mod real_bash_support;
use real_bash_support::{bash_with, covered, have_bash};

const MARK: &str = "TOPSECRET";

fn have_jq() -> bool {
    let found = Command::new("jq")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "jq must be installed in CI");
        eprintln!("skipped: no jq on PATH");
    }
    found
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(".env"), format!("\"{MARK}\"\n")).unwrap();
    std::fs::write(
        p.join("package.json"),
        r#"{"name":"x","version":"1.0.0","env":"field","scripts":{"test":"jest","build":"tsc"},"dependencies":{"a":"1"}}"#,
    )
    .unwrap();
    std::fs::write(p.join("list.json"), r#"[{"id":1,"a":2},{"id":2,"a":0}]"#).unwrap();
    std::fs::write(p.join("prog.jq"), "env.SECRET_TOKEN\n").unwrap();
    std::fs::write(p.join("m.jq"), "def f: env.SECRET_TOKEN;\n").unwrap();
    std::fs::create_dir_all(p.join("home")).unwrap();
    std::fs::write(p.join("home/.jq"), "def keys: env.SECRET_TOKEN;\n").unwrap();
    dir
}

fn run(command: &str, cwd: &Path, home: &Path) -> String {
    bash_with(
        command,
        &[],
        cwd,
        &[("SECRET_TOKEN", OsStr::new(MARK)), ("HOME", home.as_os_str())],
    )
}

#[test]
fn covered_jq_filters_print_no_secret_and_refused_ones_do() {
    if !have_bash() || !have_jq() {
        return;
    }
    let dir = project();
    let cwd = dir.path();
    let home = tempfile::tempdir().unwrap();
    for ok in [
        "jq . package.json",
        "jq .name package.json",
        "jq .env package.json",
        "jq -r '.scripts | keys[]' package.json",
        "jq '.dependencies | length' package.json",
        "jq -c '.[] | select(.a > 1)' list.json",
        "jq '{name, version, env}' package.json",
        "jq '{env: .name}' package.json",
        "jq -r '\"\\(.name)@\\(.version)\"' package.json",
        "jq 'map(.id)' list.json",
        "jq -s add list.json list.json",
        "jq '.missing // \"none\"' package.json",
        "jq -r '.scripts | to_entries[] | \"\\(.key)=\\(.value)\"' package.json",
        "jq -n '[range(3)]'",
        "jq -rc '.[].id' list.json",
        "cat package.json | jq -r .version",
    ] {
        assert!(covered(ok, cwd), "{ok} is covered");
        let out = run(ok, cwd, home.path());
        assert!(!out.contains(MARK), "`{ok}` printed a secret: {out}");
        assert!(!out.contains("error"), "`{ok}` runs: {out}");
    }
    for refused in [
        "jq -n env",
        "jq -n env.SECRET_TOKEN",
        "jq -n '$ENV.SECRET_TOKEN'",
        "jq -n '$ ENV.SECRET_TOKEN'",
        "jq -n '\"\\(env.SECRET_TOKEN)\"'",
        "jq -n '{a: env.SECRET_TOKEN}'",
        "jq -n '{(env.SECRET_TOKEN): 1}'",
        "jq -n '[env][0].SECRET_TOKEN'",
        "jq -n 'def f: env; f.SECRET_TOKEN'",
        "jq -n '1 as $x | env.SECRET_TOKEN'",
        "jq --rawfile a .env -n '$a'",
        "jq -rf prog.jq package.json",
        "jq -n -L . 'import \"m\" as m; m::f'",
        "jq -n -L . 'include \"m\"; f'",
        "jq . .env",
    ] {
        assert!(!covered(refused, cwd), "{refused} is not covered");
        let out = run(refused, cwd, home.path());
        assert!(out.contains(MARK), "the control `{refused}` prints the secret: {out}");
    }
}

#[test]
fn a_home_jq_library_makes_jq_not_covered() {
    if !have_bash() || !have_jq() {
        return;
    }
    let dir = project();
    let cwd = dir.path();
    let home = cwd.join("home");
    // The control: `~/.jq` rebinds `keys`.
    assert!(run("jq keys package.json", cwd, &home).contains(MARK));
    let explain = |home: &Path| {
        Command::new(env!("CARGO_BIN_EXE_tether"))
            .args(["explain", "--cwd"])
            .arg(cwd)
            .args(["--", "jq keys package.json"])
            .env("HOME", home)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let with_library = explain(&home);
    assert!(!with_library.status.success(), "not covered with a ~/.jq");
    assert!(String::from_utf8_lossy(&with_library.stdout).contains(".jq exists"));
    let empty = tempfile::tempdir().unwrap();
    assert!(explain(empty.path()).status.success(), "covered without one");
}
