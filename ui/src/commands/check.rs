//! `tether check FILE...`: validates scenarios, policies and journals,
//! printing every error with file, line and column.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use tether_tools::journal::Journal;

use crate::files::inputs::is_journal;
use crate::files::policy::Policy;
use crate::files::scenario::Scenario;
use crate::files::source::{Document, FileError, parse_journal, read_text};
use crate::tui::app::plural;

/// What one file turned out to be.
pub enum Checked {
    Scenario(Scenario),
    /// A batch for `tether send`.
    Batch(crate::agents::link::client::BatchFile),
    Policy(Policy),
    Journal(Journal),
}

/// Checks one file; every problem is returned.
pub fn check_file(path: &Path) -> Result<Checked, Vec<FileError>> {
    let (shown, text) = read_text(path)?;
    if is_journal(&text) {
        return parse_journal(&shown, &text).map(Checked::Journal);
    }
    let document = Document::parse(shown, text)?;
    match &document.value {
        Value::Object(map) if map.contains_key("session") => {
            serde_json::from_str(&document.text).map(Checked::Batch).map_err(|e| {
                vec![FileError {
                    path: document.path.clone(),
                    line: e.line().max(1),
                    column: e.column().max(1),
                    message: format!("not a batch file: {e}"),
                }]
            })
        }
        Value::Object(map) if map.contains_key("rules") => Policy::from_document(&document).map(Checked::Policy),
        Value::Object(map) if map.contains_key("tools") || map.contains_key("batches") => {
            Scenario::from_document(&document).map(Checked::Scenario)
        }
        _ => Err(vec![document.error_at(
            "",
            "expected a scenario (an object with \"tools\" and \"batches\") or a policy (an object with \"rules\")",
        )]),
    }
}

/// A policy given together with scenarios must name only their scopes (by
/// id or label) and tools; files given alone are not cross-checked.
fn cross_check(checked: &mut [Result<Checked, Vec<FileError>>]) {
    let scenarios: Vec<&Scenario> = checked
        .iter()
        .filter_map(|c| match c {
            Ok(Checked::Scenario(s)) => Some(s),
            _ => None,
        })
        .collect();
    if scenarios.is_empty() {
        return;
    }
    let mut scopes: Vec<String> = Vec::new();
    let mut tools: Vec<String> = Vec::new();
    for scenario in &scenarios {
        for scope in &scenario.scopes {
            scopes.push(scope.id.clone());
            scopes.extend(scope.label.clone());
        }
        tools.extend(scenario.tools.iter().map(|t| t.name.clone()));
    }
    for list in [&mut scopes, &mut tools] {
        list.sort();
        list.dedup();
    }
    let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    for entry in checked.iter_mut() {
        if let Ok(Checked::Policy(policy)) = entry {
            let mut errors = policy.unknown_tools(&tools);
            errors.extend(policy.unknown_scopes(&scopes));
            if !errors.is_empty() {
                errors.sort_by_key(|e| (e.line, e.column));
                *entry = Err(errors);
            }
        }
    }
}

/// Runs the command: exit 0 when every file is valid, 1 otherwise.
pub fn run(files: &[std::path::PathBuf], out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let mut checked: Vec<_> = files.iter().map(|path| check_file(path)).collect();
    cross_check(&mut checked);
    let mut bad = 0;
    for (path, result) in files.iter().zip(checked) {
        match result {
            Ok(Checked::Scenario(s)) => writeln!(
                out,
                "{}: ok (scenario: {}, {}, {}, {})",
                path.display(),
                plural(s.scopes.len(), "scope"),
                plural(s.tools.len(), "tool"),
                plural(s.batches.len(), "batch"),
                plural(s.batches.iter().map(|b| b.calls.len()).sum::<usize>(), "call")
            )?,
            Ok(Checked::Batch(b)) => writeln!(
                out,
                "{}: ok (batch for tether send: {}, {})",
                path.display(),
                plural(b.tools.len(), "tool"),
                plural(b.calls.len(), "call")
            )?,
            Ok(Checked::Policy(p)) => writeln!(
                out,
                "{}: ok (policy: {})",
                path.display(),
                plural(p.rules.len(), "rule")
            )?,
            Ok(Checked::Journal(j)) => writeln!(
                out,
                "{}: ok (journal: {}{})",
                path.display(),
                plural(j.batches.len(), "batch"),
                j.truncated_line
                    .map_or_else(String::new, |l| format!("; line {l} is truncated and ignored"))
            )?,
            Err(errors) => {
                bad += 1;
                for error in errors {
                    writeln!(out, "{error}")?;
                }
            }
        }
    }
    Ok(if bad == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
