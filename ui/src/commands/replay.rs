//! `tether replay --headless`: every batch through `execute_batch`, one line
//! per outcome in declared order, then a summary. Exit 0 when every
//! expectation holds, 1 when one fails, 2 on bad input.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use super::{EXIT_BAD_INPUT, EXIT_FAILED};
use crate::cli::{ReplayArgs, ReplayFilter};
use crate::files::inputs;
use crate::files::source::FileErrors;
use crate::sanitize;
use crate::session::journal::{self, Decision, JournalHeader};
use crate::session::replay::{CallReport, Session, report_json};

pub async fn run(args: &ReplayArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let loaded = match inputs::load(args.scenario.as_deref(), args.policy.as_deref()) {
        Ok(loaded) => loaded,
        Err(errors) if args.json => {
            let error = json!({ "error": {
                "message": FileErrors(errors.clone()).to_string(),
                "errors": errors.iter().map(|e| json!({
                    "path": e.path, "line": e.line, "column": e.column, "message": e.message,
                })).collect::<Vec<_>>(),
            }});
            writeln!(out, "{}", sanitize::json_line(&error))?;
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(errors) => {
            writeln!(out, "{}", FileErrors(errors))?;
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    // On stderr, so the table and the JSON lines on stdout stay as they were.
    if let Some(note) = loaded.policy_note() {
        writeln!(std::io::stderr(), "{note}")?;
    }
    let session = match Session::new(loaded.scenario, loaded.policy.as_ref()) {
        Ok(session) => session,
        Err(error) if args.json => {
            let error = json!({ "error": { "message": format!("{error:#}"), "errors": [] } });
            writeln!(out, "{}", sanitize::json_line(&error))?;
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(error) => return Err(error),
    };
    let _answerer = session.install_scripted_answerer(args.answer);
    let journal = match &args.journal {
        Some(path) => Some(
            journal::JournalWriter::open(
                path,
                args.history.journal_max_bytes(),
                journal::JournalHeader::new(args.policy.as_deref(), session.approval_timeout()),
            )
            .with_context(|| format!("opening {}", path.display()))?,
        ),
        None => None,
    };
    if let Some(journal) = &journal {
        journal.record_decisions_from(&session.log);
        journal.record_declarations_from(&session.registry);
    }
    let mut reports = Vec::new();
    for index in 0..session.scenario.batches.len() {
        let sink = journal.as_ref().map(|j| j as &dyn tether_tools::ToolBatchSink);
        reports.extend(session.run_batch(index, sink).await);
    }
    let recorded_under = match (&args.scenario, loaded.from_journal) {
        (Some(path), true) => journal::headers(path),
        _ => Vec::new(),
    };
    let shown: Vec<&CallReport> = reports.iter().filter(|r| args.filter.shows(r)).collect();
    let printed = Printed {
        all: reports.len(),
        from_journal: loaded.from_journal,
        recorded_under: &recorded_under,
    };
    // `… | head` closes the pipe early: what was printed stands, and the
    // exit status is the replay's, without "Broken pipe".
    quiet_on_closed_pipe(printed.print(&shown, args.json, out))?;
    let failed = shown.iter().any(|r| matches!(r.expectation, Some(Err(_))));
    Ok(if failed {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// An error that is only the reader having gone away is no error.
fn quiet_on_closed_pipe(result: anyhow::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(error)
            if error
                .chain()
                .filter_map(|e| e.downcast_ref::<std::io::Error>())
                .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        other => other,
    }
}

impl ReplayFilter {
    /// Whether a call is shown: every filter given matches what was
    /// recorded or what happened now.
    fn shows(&self, report: &CallReport) -> bool {
        // The deciders the table shows: recorded and now for a journal.
        let decided = |filter: &str| match &report.recorded {
            Some(_) => {
                let recorded = report.recorded_decision.as_ref().map(|d| d.decided_by.as_str());
                [Some(report.now_decider().as_str()), recorded]
                    .into_iter()
                    .flatten()
                    .any(|decider| Decision::decider_matches(decider, filter))
            }
            None => Decision::decider_matches(&report.decided_by, filter),
        };
        let tool = |glob: &str| {
            globset::Glob::new(glob)
                .map(|g| g.compile_matcher().is_match(&report.name))
                .unwrap_or(glob == report.name)
        };
        let code = |wanted: &str| {
            let recorded = report.recorded.as_ref().map(|o| code_of(o.code()));
            [Some(code_of(report.outcome.code())), recorded]
                .into_iter()
                .flatten()
                .any(|c| c.eq_ignore_ascii_case(wanted))
        };
        self.decided_by.as_deref().is_none_or(decided)
            && self.tool.as_deref().is_none_or(tool)
            && self.code.as_deref().is_none_or(code)
    }
}

fn code_of(code: Option<tether_tools::ToolFailureCode>) -> &'static str {
    code.map_or("ok", |c| c.as_str())
}

fn code_name(report: &CallReport) -> &'static str {
    code_of(report.outcome.code())
}

/// The longest VALUE the table shows; a longer one is cut and ends in "…".
const VALUE_WIDTH: usize = 60;

/// `text` cut to `width` characters, the cut marked with "…".
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut kept: String = text.chars().take(width.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

/// What the printout says besides the calls it shows.
struct Printed<'a> {
    /// Calls replayed, shown or not.
    all: usize,
    from_journal: bool,
    /// The journal's headers: the policies it was recorded under.
    recorded_under: &'a [JournalHeader],
}

impl Printed<'_> {
    fn print(&self, reports: &[&CallReport], json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
        if json {
            self.print_json(reports, out)
        } else {
            self.print_table(reports, out)
        }
    }

    fn failure_word(&self) -> &'static str {
        // A journal's expectations are its recording: a failure is an outcome the new policy changes.
        if self.from_journal { "changed" } else { "failed" }
    }

    fn print_json(&self, reports: &[&CallReport], out: &mut dyn Write) -> anyhow::Result<()> {
        let (counts, checked, failures) = tally(reports);
        for report in reports {
            writeln!(out, "{}", sanitize::json_line(&report_json(report)))?;
        }
        for report in &failures {
            let Some(Err(difference)) = &report.expectation else {
                continue;
            };
            let line = json!({ "expectation_failed": {
                "batch": report.batch, "call_id": report.call_id, "name": report.name, "difference": difference,
            }});
            writeln!(out, "{}", sanitize::json_line(&line))?;
        }
        let mut summary = json!({
            "calls": reports.len(),
            "codes": counts,
            "expectations": { "checked": checked, "passed": checked - failures.len(), self.failure_word(): failures.len() },
        });
        if reports.len() != self.all {
            summary["replayed"] = json!(self.all);
        }
        if self.from_journal {
            summary["recorded_under"] = json!(self.recorded_under);
        }
        writeln!(out, "{}", sanitize::json_line(&json!({ "summary": summary })))?;
        Ok(())
    }

    fn print_table(&self, reports: &[&CallReport], out: &mut dyn Write) -> anyhow::Result<()> {
        let (counts, checked, failures) = tally(reports);
        for header in self.recorded_under {
            writeln!(out, "recorded under {}", sanitize::escape(&header.describe()))?;
        }
        let mut header = vec!["BATCH", "CALL", "TOOL", "MODE"];
        header.extend(if self.from_journal {
            ["RECORDED", "RECORDED BY", "NOW", "NOW BY"].as_slice()
        } else {
            ["OUTCOME", "DECIDED BY"].as_slice()
        });
        header.push("VALUE");
        let rows: Vec<Vec<String>> = reports.iter().map(|r| self.row(r)).collect();
        let header: Vec<String> = header.into_iter().map(str::to_owned).collect();
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let last = header.len() - 1;
        for row in std::iter::once(&header).chain(&rows) {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, &width))| {
                    if i == last {
                        cell.clone()
                    } else {
                        format!("{cell:<width$}")
                    }
                })
                .collect();
            writeln!(out, "{}", cells.join("  ").trim_end())?;
        }
        writeln!(out)?;
        for r in &failures {
            self.print_failure(r, out)?;
        }
        let codes: Vec<String> = counts.iter().map(|(code, n)| format!("{n} {code}")).collect();
        let shown = if reports.len() == self.all {
            String::new()
        } else {
            format!(" (shown of {} replayed)", self.all)
        };
        writeln!(
            out,
            "{}{shown}: {}; expectations: {} checked, {} passed, {} {}",
            crate::tui::app::plural(reports.len(), "call"),
            codes.join(", "),
            checked,
            checked - failures.len(),
            failures.len(),
            self.failure_word()
        )?;
        Ok(())
    }

    /// One call's cells, in the header's order.
    fn row(&self, r: &CallReport) -> Vec<String> {
        let mode = if r.mode == tether_tools::ToolExecutionMode::Parallel {
            "PAR"
        } else {
            "EXCL"
        };
        let mut row = vec![
            (r.batch + 1).to_string(),
            sanitize::escape(&r.call_id),
            sanitize::escape(&r.name),
            mode.to_owned(),
        ];
        if self.from_journal {
            row.push(r.recorded.as_ref().map_or("", |o| code_of(o.code())).to_owned());
            row.push(recorded_decider(r));
            row.push(code_name(r).to_owned());
            row.push(sanitize::escape(&r.now_decider()));
        } else {
            row.push(code_name(r).to_owned());
            row.push(sanitize::escape(&r.decided_by));
        }
        row.push(cut(&sanitize::escape(&r.outcome.value().to_string()), VALUE_WIDTH));
        row
    }

    fn print_failure(&self, r: &CallReport, out: &mut dyn Write) -> anyhow::Result<()> {
        let Some(Err(difference)) = &r.expectation else {
            return Ok(());
        };
        if let Some(recorded) = &r.recorded {
            let reason = r
                .outcome
                .failure()
                .map(|f| format!(" ({})", sanitize::escape(&f.message)))
                .unwrap_or_default();
            let by = r
                .recorded_decision
                .as_ref()
                .map(|_| format!(" by {}", recorded_decider(r)))
                .unwrap_or_default();
            writeln!(
                out,
                "CHANGED batch {} call {} ({}): recorded {}{by} → now {} by {}{reason}",
                r.batch + 1,
                sanitize::escape(&r.call_id),
                sanitize::escape(&r.name),
                code_of(recorded.code()),
                code_name(r),
                sanitize::escape(&r.now_decider())
            )?;
            return Ok(());
        }
        writeln!(
            out,
            "{} batch {} call {} ({}): {difference}",
            self.failure_word().to_uppercase(),
            r.batch + 1,
            r.call_id,
            r.name
        )?;
        Ok(())
    }
}

/// Who the journal says decided a call; "-" in a journal from before
/// decisions were recorded.
fn recorded_decider(r: &CallReport) -> String {
    r.recorded_decision
        .as_ref()
        .map_or_else(|| "-".to_owned(), |d| sanitize::escape(&d.decided_by))
}

/// The codes counted, the expectations checked, and the calls that failed theirs.
fn tally<'a>(reports: &[&'a CallReport]) -> (BTreeMap<&'static str, usize>, usize, Vec<&'a CallReport>) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for report in reports {
        *counts.entry(code_name(report)).or_default() += 1;
    }
    let checked = reports.iter().filter(|r| r.expectation.is_some()).count();
    let failures = reports
        .iter()
        .copied()
        .filter(|r| matches!(r.expectation, Some(Err(_))))
        .collect();
    (counts, checked, failures)
}
