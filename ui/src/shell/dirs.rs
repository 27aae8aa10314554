//! Where each segment of a plain script runs: `cd DIR` changes the
//! directory the commands after it are judged from, while the project they
//! must stay inside is still the directory the agent started in.
//!
//! A segment runs in one of several directories when an earlier `cd` may
//! or may not have run (`cd src; ls` runs `ls` in `src`, or where it
//! started if `cd` failed): it is judged from each. `&&` and `||` weigh the
//! and-or list before them, as bash does (`cd src && ls` only in `src`,
//! `cd src || ls` only where it started); every part of a pipeline runs in
//! a subshell of its own, so a `cd` there changes nothing after it. Where
//! the directory is not known for certain — `cd` with no operand, `cd -`,
//! `~`, a `CDPATH` that may send a relative name elsewhere, a name whose
//! logical and physical readings differ (`link/..`), a directory outside
//! the project or not there — every later segment is not covered.

use std::path::{Component, Path, PathBuf};

use super::{Joint, Segment};

/// Where one segment of a plain script runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// In each of these directories (as bash's `PWD` would name them).
    In(Vec<PathBuf>),
    /// A `cd`: it only changes the directory, whatever its words.
    Cd,
    /// Somewhere an earlier `cd` left it, which is not known.
    Unknown(String),
}

/// Where each segment runs when the agent started in `cwd`, or `None` when
/// no segment is a `cd` (each runs where the agent started: the common
/// case, decided without a look at the disk). The policy's rules and
/// `tether explain` both judge a segment from here.
pub fn places(segments: &[Segment], cwd: Option<&Path>) -> Option<Vec<Place>> {
    if !segments.iter().any(is_cd) {
        return None;
    }
    let Some(start) = cwd else {
        let unknown = Place::Unknown("a `cd` with no working directory to judge it from".into());
        return Some(
            segments
                .iter()
                .map(|s| if is_cd(s) { Place::Cd } else { unknown.clone() })
                .collect(),
        );
    };
    let project = Project::new(start);
    let mut places = Vec::with_capacity(segments.len());
    // The directories the and-or list so far may leave on success and on
    // failure; `lost`: a `cd` went where this reader cannot follow.
    let (mut ok, mut failed): (Vec<PathBuf>, Vec<PathBuf>) = (vec![start.to_path_buf()], Vec::new());
    let mut pipeline_start = Vec::new();
    let mut lost: Option<String> = None;
    for (k, segment) in segments.iter().enumerate() {
        let in_pipeline = segment.joint == Joint::Pipe || segments.get(k + 1).is_some_and(|s| s.joint == Joint::Pipe);
        let starts: Vec<PathBuf> = match segment.joint {
            Joint::Pipe => pipeline_start.clone(),
            Joint::Seq => union(&ok, &failed),
            Joint::And => ok.clone(),
            Joint::Or => failed.clone(),
        };
        if segment.joint != Joint::Pipe {
            pipeline_start = starts.clone();
        }
        let cd = is_cd(segment);
        places.push(match (&lost, cd) {
            (_, true) => Place::Cd,
            (Some(why), false) => Place::Unknown(why.clone()),
            (None, false) => Place::In(starts.clone()),
        });
        if segment.joint == Joint::Pipe {
            continue;
        }
        // What this element of the and-or list leaves: a `cd` outside a
        // pipeline moves on success and stays on failure.
        let (element_ok, element_failed) = if cd && !in_pipeline && lost.is_none() {
            let mut moved = Vec::new();
            for dir in &starts {
                match project.cd(dir, &segment.values()[1..]) {
                    Ok(to) => moved.push(to),
                    Err(why) => {
                        lost = Some(format!("after `{}`, {why}", super::join(&segment.values())));
                        break;
                    }
                }
            }
            (moved, starts)
        } else {
            (starts.clone(), starts)
        };
        (ok, failed) = match segment.joint {
            Joint::And => (element_ok, union(&failed, &element_failed)),
            Joint::Or => (union(&ok, &element_ok), element_failed),
            Joint::Seq | Joint::Pipe => (element_ok, element_failed),
        };
    }
    Some(places)
}

/// A `cd` of plain words (no here-document, no redirected input), and
/// bash's own: no function of that name exported to it.
fn is_cd(segment: &Segment) -> bool {
    segment.words.first().is_some_and(|w| w.value == "cd" && !w.glob)
        && !segment.here
        && segment.inputs.is_empty()
        && ["BASH_FUNC_cd%%", "BASH_FUNC_cd()"]
            .iter()
            .all(|f| std::env::var_os(f).is_none())
}

fn union(a: &[PathBuf], b: &[PathBuf]) -> Vec<PathBuf> {
    let mut all = a.to_vec();
    for dir in b {
        if !all.contains(dir) {
            all.push(dir.clone());
        }
    }
    all
}

/// The project a `cd` must stay inside: the directory the agent started
/// in, as given and as resolved.
struct Project {
    given: PathBuf,
    real: Option<PathBuf>,
}

impl Project {
    fn new(start: &Path) -> Self {
        Self {
            given: lexical(Path::new("/"), start),
            real: std::fs::canonicalize(start).ok(),
        }
    }

    /// Where `cd ARGS` run in `dir` goes, if it is known for certain and
    /// inside the project.
    fn cd(&self, dir: &Path, args: &[String]) -> Result<PathBuf, String> {
        let mut operands = args.iter().map(String::as_str);
        let mut physical = false;
        let target = loop {
            match operands.next() {
                None => return Err("which goes to the home directory".into()),
                Some("--") => break operands.next().ok_or("which goes to the home directory")?,
                Some("-") => return Err("which goes back to a directory this reader does not know".into()),
                Some(option) if option.starts_with('-') => {
                    for letter in option[1..].chars() {
                        match letter {
                            'L' => physical = false,
                            'P' => physical = true,
                            'e' => {}
                            _ => return Err(format!("whose option -{letter} this reader does not model")),
                        }
                    }
                }
                Some(target) => break target,
            }
        };
        if operands.next().is_some() {
            return Err("which has more than one operand".into());
        }
        if target.is_empty() || target.starts_with('~') || target.contains(['*', '?', '[']) {
            return Err(format!("`{target}` is not a plain directory name"));
        }
        let relative_name = !target.starts_with('/')
            && !matches!(target, "." | "..")
            && !target.starts_with("./")
            && !target.starts_with("../");
        if relative_name && std::env::var_os("CDPATH").is_some_and(|p| !p.is_empty()) {
            return Err(format!(
                "CDPATH is set in the environment, so `{target}` may be a directory elsewhere"
            ));
        }
        let logical = lexical(dir, Path::new(target));
        let real = self.real.as_deref().ok_or("the working directory cannot be resolved")?;
        let through_logical = std::fs::canonicalize(&logical).ok();
        let through_physical = std::fs::canonicalize(dir.join(target)).ok();
        let Some(resolved) = through_physical.filter(|p| Some(p) == through_logical.as_ref()) else {
            return Err(format!(
                "`{target}` is not a directory whose logical and physical paths agree"
            ));
        };
        if !resolved.is_dir() {
            return Err(format!("`{target}` is not a directory"));
        }
        if !resolved.starts_with(real) || !logical.starts_with(&self.given) {
            return Err(format!("`{target}` is outside the working directory"));
        }
        Ok(if physical { resolved } else { logical })
    }
}

/// `path` taken from `base` with `.` and `..` resolved by name, as bash's
/// logical `cd` does.
fn lexical(base: &Path, path: &Path) -> PathBuf {
    let mut out = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    for part in path.components() {
        match part {
            Component::RootDir | Component::Prefix(_) => out = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}
