//! `tether replay --headless`: every batch through `execute_batch`, one line
//! per outcome in declared order, then a summary. Exit 0 when every
//! expectation holds, 1 when one fails, 2 on bad input.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use super::{EXIT_BAD_INPUT, EXIT_FAILED};
use crate::cli::ReplayArgs;
use crate::files::inputs;
use crate::files::source::FileErrors;
use crate::sanitize;
use crate::session::journal;
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
    }
    let mut reports = Vec::new();
    for index in 0..session.scenario.batches.len() {
        let sink = journal.as_ref().map(|j| j as &dyn tether_tools::ToolBatchSink);
        reports.extend(session.run_batch(index, sink).await);
    }
    print_reports(&reports, args.json, loaded.from_journal, out)?;
    let failed = reports.iter().any(|r| matches!(r.expectation, Some(Err(_))));
    Ok(if failed {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

fn code_name(report: &CallReport) -> &'static str {
    report.outcome.code().map_or("ok", |c| c.as_str())
}

fn print_reports(reports: &[CallReport], json: bool, from_journal: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for report in reports {
        *counts.entry(code_name(report)).or_default() += 1;
    }
    let checked = reports.iter().filter(|r| r.expectation.is_some()).count();
    let failures: Vec<&CallReport> = reports
        .iter()
        .filter(|r| matches!(r.expectation, Some(Err(_))))
        .collect();
    // A journal's expectations are its recording: a failure is an outcome the new policy changes.
    let failure_word = if from_journal { "changed" } else { "failed" };

    if json {
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
        let summary = json!({ "summary": {
            "calls": reports.len(),
            "codes": counts,
            "expectations": { "checked": checked, "passed": checked - failures.len(), failure_word: failures.len() },
        }});
        writeln!(out, "{}", sanitize::json_line(&summary))?;
        return Ok(());
    }

    let rows: Vec<[String; 8]> = reports
        .iter()
        .map(|r| {
            let mode = if r.mode == tether_tools::ToolExecutionMode::Parallel {
                "PAR"
            } else {
                "EXCL"
            };
            let value: String = crate::sanitize::escape(&r.outcome.value().to_string())
                .chars()
                .take(60)
                .collect();
            [
                (r.batch + 1).to_string(),
                crate::sanitize::escape(&r.call_id),
                crate::sanitize::escape(&r.name),
                mode.to_owned(),
                r.recorded
                    .as_ref()
                    .map_or("", |o| o.code().map_or("ok", |c| c.as_str()))
                    .to_owned(),
                code_name(r).to_owned(),
                r.decided_by.clone(),
                value,
            ]
        })
        .collect();
    let header = [
        "BATCH",
        "CALL",
        "TOOL",
        "MODE",
        "RECORDED",
        "OUTCOME",
        "DECIDED BY",
        "VALUE",
    ]
    .map(str::to_owned);
    // Only a journal replay has a recorded outcome to show.
    let shown = |i: usize| i != 4 || from_journal;
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .filter(|(i, _)| shown(*i))
            .map(|(i, (cell, width))| {
                if i == 7 {
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
        let Some(Err(difference)) = &r.expectation else {
            continue;
        };
        if let Some(recorded) = &r.recorded {
            let reason = r
                .outcome
                .failure()
                .map(|f| format!(" ({})", crate::sanitize::escape(&f.message)))
                .unwrap_or_default();
            writeln!(
                out,
                "CHANGED batch {} call {} ({}): recorded {} → now {} by {}{reason}",
                r.batch + 1,
                crate::sanitize::escape(&r.call_id),
                crate::sanitize::escape(&r.name),
                recorded.code().map_or("ok", |c| c.as_str()),
                code_name(r),
                r.decided_by
            )?;
            continue;
        }
        writeln!(
            out,
            "{} batch {} call {} ({}): {difference}",
            failure_word.to_uppercase(),
            r.batch + 1,
            r.call_id,
            r.name
        )?;
    }
    let codes: Vec<String> = counts.iter().map(|(code, n)| format!("{n} {code}")).collect();
    writeln!(
        out,
        "{}: {}; expectations: {} checked, {} passed, {} {failure_word}",
        crate::tui::app::plural(reports.len(), "call"),
        codes.join(", "),
        checked,
        checked - failures.len(),
        failures.len()
    )?;
    Ok(())
}
