//! `tether check FILE...`: validates scenarios, policies, journals, batch
//! files and MCP server lists, printing every error with file, line and
//! column.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use tether_tools::journal::Journal;

use crate::files::inputs::is_journal;
use crate::files::mcp_servers::{self, McpServer, Transport};
use crate::files::policy::{Policy, References};
use crate::files::scenario::{Names, Scenario, undeclared_tools};
use crate::files::source::{Document, FileError, parse_journal, read_text};
use crate::tui::app::plural;

/// What one file turned out to be.
pub enum Checked {
    Scenario(Scenario),
    /// A batch for `tether send`.
    Batch(crate::agents::link::client::BatchFile),
    Policy(Policy),
    Journal(Journal),
    /// The upstreams of `tether mcp serve --config`.
    Servers(Vec<McpServer>),
}

/// One file as checked: its document when it is JSON that parsed, and
/// what it turned out to be or every error found in it.
struct Report {
    document: Option<Document>,
    result: Result<Checked, Vec<FileError>>,
}

impl Report {
    /// Adds errors found by a later check (cross-checks), keeping every
    /// error of the file in position order.
    fn add(&mut self, more: Vec<FileError>) {
        if more.is_empty() {
            return;
        }
        let errors = match &mut self.result {
            Ok(_) => {
                self.result = Err(more);
                return;
            }
            Err(errors) => errors,
        };
        errors.extend(more);
        errors.sort_by_key(|e| (e.line, e.column));
        errors.dedup();
    }

    fn is(&self, kind: Kind) -> bool {
        self.document.as_ref().is_some_and(|d| Kind::of(&d.value) == kind)
    }
}

/// What a JSON file is, by its top-level fields.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Batch,
    Policy,
    Scenario,
    Servers,
    Unknown,
}

impl Kind {
    fn of(value: &Value) -> Kind {
        match value {
            // First: Claude Code's user config has "mcpServers" among many
            // other fields, any of which might look like another kind's.
            Value::Object(map) if map.contains_key("mcpServers") => Kind::Servers,
            Value::Object(map) if map.contains_key("session") => Kind::Batch,
            Value::Object(map) if map.contains_key("rules") => Kind::Policy,
            Value::Object(map) if map.contains_key("tools") || map.contains_key("batches") => Kind::Scenario,
            _ => Kind::Unknown,
        }
    }
}

/// Checks one file on its own; every problem is returned.
fn check_one(path: &Path) -> Report {
    let failed = |errors| Report {
        document: None,
        result: Err(errors),
    };
    let (shown, text) = match read_text(path) {
        Ok(read) => read,
        Err(errors) => return failed(errors),
    };
    if is_journal(&text) {
        return Report {
            document: None,
            result: parse_journal(&shown, &text).map(Checked::Journal),
        };
    }
    let document = match Document::parse(shown, text) {
        Ok(document) => document,
        Err(errors) => return failed(errors),
    };
    let result = match Kind::of(&document.value) {
        Kind::Batch => match crate::files::batch::check(&document) {
            errors if !errors.is_empty() => Err(errors),
            // What the format does not state, `tether send` still refuses.
            _ => serde_json::from_str(&document.text).map(Checked::Batch).map_err(|e| {
                vec![FileError {
                    path: document.path.clone(),
                    line: e.line().max(1),
                    column: e.column().max(1),
                    message: format!("not a batch file: {e}"),
                }]
            }),
        },
        Kind::Policy => Policy::from_document(&document).map(Checked::Policy),
        Kind::Scenario => Scenario::from_document(&document).map(Checked::Scenario),
        // Read in this environment, exactly as `tether mcp serve` reads it:
        // a `${VAR}` that is not set and has no default is an error (its
        // message says the file is not at fault), because "ok" here must
        // mean that the gateway started from this shell accepts the file.
        // A list checked where its secrets are absent (CI) can give the
        // reference a default, `${TOKEN:-}`.
        Kind::Servers => mcp_servers::from_document(
            &document,
            path.parent().unwrap_or(Path::new("")),
            |name| std::env::var(name).ok(),
        )
        .map(Checked::Servers),
        Kind::Unknown => Err(vec![document.error_at(
            "",
            "expected a scenario (an object with \"tools\" and \"batches\"), a policy (an object with \"rules\"), a batch for tether send (an object with \"session\") or an MCP server list (an object with \"mcpServers\")",
        )]),
    };
    Report {
        document: Some(document),
        result,
    }
}

/// Checks across files, on every file whose JSON parsed, broken or not:
/// a scenario's calls must name tools it declares, and a policy given
/// together with scenarios must name only their scopes (by id or label) and
/// tools. Files given alone are not cross-checked against anything. Where
/// a scenario's scope or tool list cannot be read (a shape error there),
/// that half of the policy check is skipped: any name might be the one
/// that could not be read.
fn cross_check(reports: &mut [Report]) {
    for report in reports.iter_mut().filter(|r| r.is(Kind::Scenario)) {
        let errors = report.document.as_ref().map(undeclared_tools).unwrap_or_default();
        report.add(errors);
    }
    let names: Vec<Names> = reports
        .iter()
        .filter(|r| r.is(Kind::Scenario))
        .filter_map(|r| r.document.as_ref().map(|d| Names::of(&d.value)))
        .collect();
    if names.is_empty() {
        return;
    }
    let union = |pick: fn(&Names) -> &Option<Vec<String>>| -> Option<Vec<String>> {
        let mut all: Vec<String> = Vec::new();
        for n in &names {
            all.extend(pick(n).clone()?);
        }
        all.sort();
        all.dedup();
        Some(all)
    };
    let scopes = union(|n| &n.scopes);
    let tools = union(|n| &n.tools);
    for report in reports.iter_mut().filter(|r| r.is(Kind::Policy)) {
        let Some(document) = &report.document else { continue };
        let refs = References::of(document);
        let mut errors = Vec::new();
        if let Some(tools) = &tools {
            errors.extend(refs.unknown_tools(&tools.iter().map(String::as_str).collect::<Vec<_>>()));
        }
        if let Some(scopes) = &scopes {
            errors.extend(refs.unknown_scopes(&scopes.iter().map(String::as_str).collect::<Vec<_>>()));
        }
        report.add(errors);
    }
}

/// Runs the command: exit 0 when every file is valid, 1 otherwise.
pub fn run(files: &[std::path::PathBuf], out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let mut reports: Vec<Report> = files.iter().map(|path| check_one(path)).collect();
    cross_check(&mut reports);
    let mut bad = 0;
    for (path, report) in files.iter().zip(reports) {
        match report.result {
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
                "{}: ok (policy: {}{})",
                path.display(),
                plural(p.rules.len(), "rule"),
                match p.reviewers.as_slice() {
                    [] => String::new(),
                    reviewers => format!(
                        ", {}: {}",
                        plural(reviewers.len(), "reviewer"),
                        reviewers.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                }
            )?,
            Ok(Checked::Journal(j)) => writeln!(
                out,
                "{}: ok (journal: {}{})",
                path.display(),
                plural(j.batches.len(), "batch"),
                j.truncated_line
                    .map_or_else(String::new, |l| format!("; line {l} is truncated and ignored"))
            )?,
            Ok(Checked::Servers(servers)) => {
                let stdio = servers
                    .iter()
                    .filter(|s| matches!(s.transport, Transport::Stdio { .. }))
                    .count();
                writeln!(
                    out,
                    "{}: ok (MCP server list: {}, {stdio} on stdio, {} over HTTP)",
                    path.display(),
                    plural(servers.len(), "server"),
                    servers.len() - stdio
                )?;
            }
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
