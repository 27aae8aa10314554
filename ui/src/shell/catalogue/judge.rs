//! A command judged whole: its program found by name, its file-name
//! patterns expanded as bash would, its words read by the grammar, every
//! input path inside the working directory and no secret, and what a
//! recursive read would reach checked before it runs.

use std::path::Path;

use super::glob::{Shopts, has_globstar, has_meta, matches};
use super::grammar::{self, Notes};
use super::grepwalk::GrepFilters;
use super::inputs::{input_path, inputs, meta_path};
use super::order::{Block, argv, same_role};
use super::shadow::shadowed;
use super::table::{Program, Reads, Walk};
use super::walk::walk;
use super::{Segment, Word, program, zsh};
use crate::paths;
use crate::shell::Zsh;

/// `cwd`: where the command runs; `project`: what its paths must stay in
/// (the same, unless an earlier `cd` moved it).
pub(super) fn judge(
    segment: &Segment,
    cwd: Option<&Path>,
    project: Option<&Path>,
    notes: &mut Notes,
) -> Result<(), String> {
    whole(segment, cwd, project, notes)?;
    braced(segment, cwd, project)
}

/// [`judge`] for the words as bash reads them (and zsh, but for
/// `BRACE_CCL`).
fn whole(segment: &Segment, cwd: Option<&Path>, project: Option<&Path>, notes: &mut Notes) -> Result<(), String> {
    let Some(first) = segment.words.first() else {
        return Err("an empty command".into());
    };
    inputs(segment, cwd, project, notes)?;
    let name = &first.value;
    if first.glob {
        return Err(format!("`{name}`: a program named by a file-name pattern"));
    }
    if name.contains('/') {
        return Err(format!(
            "`{name}` is a program given as a path, which may be anything: the catalogue covers programs found by name"
        ));
    }
    let program = program(name).ok_or_else(|| format!("`{name}` is not in the read-only catalogue"))?;
    shadowed(name, project)?;
    notes.note(name, || format!("the program `{}`: {}", program.name, program.about));
    // Read once for every argv the words may become.
    let configured = program.config.map(configured).transpose()?.flatten();
    let before = configured.as_deref();
    let words = &segment.words[1..];
    if !words.iter().any(|w| w.glob) {
        let argv: Vec<&str> = words.iter().map(|w| w.value.as_str()).collect();
        return reading(program, before, &argv, &[], cwd, project, notes);
    }
    // bash drops the matches `GLOBIGNORE` names, which moves every word
    // after them to another place (and another role): not modelled. The
    // console's environment is the user's, as the agent's shell is.
    if std::env::var_os("GLOBIGNORE").is_some_and(|v| !v.is_empty()) {
        return Err(
            "GLOBIGNORE is set in the environment: bash drops the file names it matches from a pattern's matches, which the catalogue does not model"
                .into(),
        );
    }
    // The words bash or zsh passes depend on shell options the user's
    // config may set: each distinct reading is judged (notes from bash's
    // defaults).
    let globstar = words
        .iter()
        .any(|w| w.glob && w.pattern.as_deref().is_some_and(has_globstar));
    let starshort = words
        .iter()
        .any(|w| w.pattern.as_deref().is_some_and(|p| p.contains("**")));
    let extended = words.iter().any(|w| matches!(w.zsh, Zsh::Extended(_)));
    let changes = |s: &Shopts| match s.zsh {
        false => globstar || !s.globstar,
        true => (starshort || !s.globstar) && (extended || !s.extendedglob),
    };
    let mut judged: Vec<Vec<&str>> = Vec::new();
    let mut expansions = Vec::new();
    let root = project.and_then(|c| paths::root("cwd", Some(c)));
    for shopts in Shopts::every().filter(|s| !s.nullglob && changes(s)) {
        let mut silent = Notes::off();
        let notes: &mut Notes = if shopts == Shopts::default() {
            notes
        } else {
            &mut silent
        };
        let matches = expand(words, (cwd, root.as_deref()), shopts, notes).map_err(|why| shopts.explain(why))?;
        expansions.push((shopts, matches));
    }
    for (shopts, matches) in &expansions {
        // With `nullglob` a pattern that matches nothing is no word at all.
        let none_matched = matches.iter().any(|m| m.as_ref().is_some_and(Vec::is_empty));
        let nullglob = Shopts {
            nullglob: true,
            ..*shopts
        };
        for shopts in std::iter::once(*shopts).chain(none_matched.then_some(nullglob)) {
            let (argv, blocks) = argv(words, matches, shopts.nullglob);
            if judged.contains(&argv) {
                continue;
            }
            let mut silent = Notes::off();
            let notes: &mut Notes = if shopts == Shopts::default() {
                notes
            } else {
                &mut silent
            };
            reading(program, before, &argv, &blocks, cwd, project, notes).map_err(|why| shopts.explain(why))?;
            judged.push(argv);
        }
    }
    Ok(())
}

/// zsh with `BRACE_CCL` passes a word ending in a reflog's `@{N}` without
/// its braces (`git log HEAD@{1}` runs `git log HEAD@1`): that reading is
/// judged whole too, as any command is (`cat notes@{1}` reads `notes@1`,
/// which may be a link to a secret).
fn braced(segment: &Segment, cwd: Option<&Path>, project: Option<&Path>) -> Result<(), String> {
    if segment.brace_ccl_values().is_none() {
        return Ok(());
    }
    let words = segment
        .words
        .iter()
        .map(|w| match &w.zsh {
            Zsh::Braces(word) => Word::literal(word.clone()),
            _ => w.clone(),
        })
        .collect();
    let braced = Segment {
        words,
        ..segment.clone()
    };
    whole(&braced, cwd, project, &mut Notes::off())
        .map_err(|why| format!("when zsh runs it with `setopt braceccl` (a user's .zshenv may set it): {why}"))
}

/// One argv as a program receives it (after the arguments its configuration
/// file gives, `before`), judged. `blocks` are where a file-name pattern's
/// matches stand in `argv` (see [`same_role`]).
fn reading(
    program: &'static Program,
    before: Option<&[String]>,
    argv: &[&str],
    blocks: &[Block],
    cwd: Option<&Path>,
    project: Option<&Path>,
    notes: &mut Notes,
) -> Result<(), String> {
    let joined: Vec<&str>;
    let (argv, shift) = match before {
        Some(before) => {
            joined = before.iter().map(String::as_str).chain(argv.iter().copied()).collect();
            (&joined[..], before.len())
        }
        None => (argv, 0),
    };
    let mut parsed = grammar::read(program, argv, notes)?;
    // A match another order of its pattern's matches puts in a path's or a
    // walk's place is judged there too (see `same_role`).
    let mut elsewhere = Vec::new();
    for block in blocks {
        let also = same_role(
            &parsed,
            &argv[block.at.start + shift..block.at.end + shift],
            block.word,
            program.judge.is_some(),
        )?;
        elsewhere.extend(also.paths);
        parsed.starts.extend(also.starts);
    }
    // The working directory is resolved only for a command that names a
    // path or walks one (most commands name none: `git status`).
    let recursive = parsed.program.recurses || parsed.effects.recurses;
    let root = if parsed.paths.iter().any(|p| *p != "-") || !parsed.metas.is_empty() || recursive {
        project.and_then(|c| paths::root("cwd", Some(c)))
    } else {
        None
    };
    for path in parsed.paths.iter().chain(&elsewhere) {
        input_path(path, cwd, root.as_deref())?;
    }
    for path in &parsed.metas {
        meta_path(path, cwd, root.as_deref())?;
    }
    if let Some(own) = program.judge {
        let argv: Vec<String> = argv.iter().map(|w| (*w).to_owned()).collect();
        own(&argv, cwd)?;
    }
    if !recursive {
        return Ok(());
    }
    let root = root.ok_or("a recursive read with no working directory to keep it in")?;
    match parsed.program.reads {
        Reads::Names if parsed.effects.follows_links || parsed.program.follows => Err(format!(
            "`{}` follows links while it descends, which can lead out of the project",
            parsed.program.name
        )),
        Reads::Names => Ok(()),
        Reads::Contents => {
            let starts: Vec<&str> = if parsed.starts.is_empty() {
                vec!["."]
            } else {
                parsed.starts.clone()
            };
            for start in starts.into_iter().filter(|s| *s != "-") {
                let from = paths::resolve(start, cwd).ok_or_else(|| format!("`{start}` cannot be resolved"))?;
                // Where an operand naming nothing on disk is a revision
                // (`git grep KEY HEAD`: a commit's tree may hold a secret
                // the working tree does not) or a pathspec (`:/`, the
                // repository's top), nothing says what it reaches. (For
                // grep and rg such an operand is only an error.)
                if parsed.program.walk == Walk::OutsideGit && std::fs::symlink_metadata(&from).is_err() {
                    return Err(format!(
                        "`{start}` names nothing in the working directory (a revision or a pathspec?): what a recursive read of it reaches is not known"
                    ));
                }
                let walk_as = if parsed.effects.sees_all {
                    Walk::Everything
                } else {
                    parsed.program.walk
                };
                let follows = parsed.effects.follows_links || parsed.program.follows;
                let hidden = parsed.effects.sees_hidden;
                // grep's own filters, where its walk is read exactly: not
                // through links, not beside filters read from a file.
                let grep = if walk_as == Walk::Everything && !follows && !parsed.effects.filters_unread {
                    GrepFilters::of(&parsed.filters)?
                } else {
                    None
                };
                let arg = (!parsed.starts.is_empty()).then_some(start);
                walk(
                    &from,
                    &root,
                    (follows, hidden),
                    walk_as,
                    &parsed.filters,
                    grep.as_ref().map(|g| (g, arg)),
                )?;
            }
            Ok(())
        }
    }
}

/// The arguments a program reads from the file the environment variable
/// `var` names, before its own (one a line, trimmed; blank lines and `#`
/// comments skipped, as ripgrep reads them). The console's environment is the
/// user's: an agent started from the same shell has the same variable.
fn configured(var: &str) -> Result<Option<Vec<String>>, String> {
    let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{var} names {}, whose arguments the program reads first, and it cannot be read ({e})",
            Path::new(&path).display()
        )
    })?;
    Ok(Some(
        // ripgrep trims each line's blanks on both sides.
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect(),
    ))
}

/// Each file-name pattern's matches in `cwd` under `shopts`, sorted
/// (`None`: the word is not a pattern).
fn expand(
    words: &[Word],
    (cwd, root): (Option<&Path>, Option<&Path>),
    shopts: Shopts,
    notes: &mut Notes,
) -> Result<Vec<Option<Vec<String>>>, String> {
    let mut expanded = vec![None; words.len()];
    for (at, word) in words.iter().enumerate() {
        // A word only zsh's EXTENDED_GLOB makes a pattern (`^fn`) is
        // passed as written by bash.
        let Some(pattern) = word
            .pattern
            .as_deref()
            .filter(|p| word.glob && (shopts.zsh || has_meta(p)))
        else {
            continue;
        };
        // Expanding lists a directory's names: one outside the working
        // directory is a read outside it, whatever the program does with
        // them (`echo ../*`, `printf '%s\n' ~/*`).
        if pattern.starts_with(['/', '~']) || leaves(pattern) {
            return Err(format!(
                "`{}` lists the names of a directory outside the working directory",
                word.value
            ));
        }
        let (Some(cwd), Some(root)) = (cwd, root) else {
            return Err(format!(
                "`{}`: no working directory to expand the pattern in",
                word.value
            ));
        };
        let matches = match shopts.zsh {
            false => matches(pattern, cwd, root, shopts)?,
            true => match zsh::expand(word, cwd, root, shopts) {
                Some(matches) => matches?,
                None => continue,
            },
        };
        notes.note(&word.value, || match matches.len() {
            0 => "a file-name pattern that matches nothing (bash passes it as written)".into(),
            n => format!("a file-name pattern: {n} match{}", if n == 1 { "" } else { "es" }),
        });
        expanded[at] = Some(matches);
    }
    Ok(expanded)
}

/// Whether a relative path climbs above where it starts (`../x`,
/// `src/../../x`; `src/../x` does not), read as written.
fn leaves(path: &str) -> bool {
    let mut depth = 0usize;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match depth.checked_sub(1) {
                Some(up) => depth = up,
                None => return true,
            },
            _ => depth += 1,
        }
    }
    false
}
