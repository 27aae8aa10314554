//! Where each segment runs after a `cd`.

use std::path::Path;

use crate::shell::Script;
use crate::shell::dirs::{Place, places};

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("src/inner")).unwrap();
    std::fs::create_dir_all(p.join("sub")).unwrap();
    std::os::unix::fs::symlink("src/inner", p.join("deep")).unwrap();
    std::os::unix::fs::symlink("/", p.join("out")).unwrap();
    std::fs::write(p.join("file"), "").unwrap();
    dir
}

fn placed(text: &str, cwd: &Path) -> Option<Vec<Place>> {
    places(&Script::parse(text).segments.unwrap(), Some(cwd))
}

fn at(dirs: &[&Path]) -> Place {
    Place::In(dirs.iter().map(|d| d.to_path_buf()).collect())
}

#[test]
fn a_cd_moves_what_runs_after_it_as_bash_joins_it() {
    let dir = project();
    let p = dir.path().to_path_buf();
    let src = p.join("src");
    assert_eq!(placed("ls && cat x", &p), None);
    assert_eq!(placed("cd src && ls", &p), Some(vec![Place::Cd, at(&[&src])]));
    assert_eq!(placed("cd src; ls", &p), Some(vec![Place::Cd, at(&[&src, &p])]));
    assert_eq!(placed("cd src\nls", &p), Some(vec![Place::Cd, at(&[&src, &p])]));
    assert_eq!(placed("cd src || ls", &p), Some(vec![Place::Cd, at(&[&p])]));
    // `ls` runs when cd failed or when it succeeded and `true` failed.
    assert_eq!(
        placed("cd src && true || ls", &p),
        Some(vec![Place::Cd, at(&[&src]), at(&[&p, &src])])
    );
    // A pipeline's parts run in subshells: its cd moves nothing after it.
    assert_eq!(
        placed("cd src | cat && ls", &p),
        Some(vec![Place::Cd, at(&[&p]), at(&[&p])])
    );
    assert_eq!(
        placed("cd src && ls | wc -l", &p),
        Some(vec![Place::Cd, at(&[&src]), at(&[&src])])
    );
    assert_eq!(
        placed("cd src && cd .. && ls", &p),
        Some(vec![Place::Cd, Place::Cd, at(&[&p])])
    );
    assert_eq!(
        placed("cd src/../sub && ls", &p),
        Some(vec![Place::Cd, at(&[&p.join("sub")])])
    );
    assert_eq!(
        placed("cd -P -- src && ls", &p),
        Some(vec![Place::Cd, at(&[&src.canonicalize().unwrap()])])
    );
    // `if … fi && x`: the `if` decides, not its last command.
    assert_eq!(
        placed("if cd src; then ls; fi && pwd", &p),
        Some(vec![Place::Cd, at(&[&src, &p]), at(&[&src, &p])])
    );
}

#[test]
fn after_a_cd_this_reader_cannot_follow_nothing_is_placed() {
    let dir = project();
    let p = dir.path().to_path_buf();
    for text in [
        "cd .. && ls",
        "cd out && ls",
        "cd / && ls",
        "cd && ls",
        "cd - && ls",
        "cd ~ && ls",
        "cd src sub && ls",
        "cd file && ls",
        "cd missing && ls",
        "cd sr? && ls",
        "cd -@ src && ls",
        // Logically `deep/..` is the project, physically `src`.
        "cd deep/.. && ls",
    ] {
        let places = placed(text, &p).unwrap();
        assert_eq!(places[0], Place::Cd, "{text}");
        assert!(matches!(places[1], Place::Unknown(_)), "{text}: {places:?}");
    }
    assert_eq!(
        placed("cd deep && ls", &p),
        Some(vec![Place::Cd, at(&[&p.join("deep")])])
    );
}
