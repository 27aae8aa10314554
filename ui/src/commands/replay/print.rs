//! What a headless replay prints: a table or JSON lines, the policies the
//! journal was recorded under and the one in force now, then a summary.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::json;

use crate::sanitize;
use crate::session::journal::{JournalHeader, PolicyRecord};
use crate::session::replay::{CallReport, report_json};

pub(super) fn code_of(code: Option<tether_tools::ToolFailureCode>) -> &'static str {
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
pub(super) struct Printed<'a> {
    /// Whether each call's arguments are shown (a listing asked for by
    /// `--decided-by`: whose call was it, and what did it run?).
    pub with_arguments: bool,
    /// Calls replayed, shown or not.
    pub all: usize,
    pub from_journal: bool,
    /// The journal's headers and policy reloads: the policies it was
    /// recorded under.
    pub recorded_under: &'a [PolicyRecord],
    /// For a journal, the policy a replay runs under now (as a header would
    /// name it).
    pub now_under: Option<&'a JournalHeader>,
}

impl Printed<'_> {
    pub(super) fn print(&self, reports: &[&CallReport], json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
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
            let (headers, reloads): (Vec<_>, Vec<_>) = self
                .recorded_under
                .iter()
                .partition(|r| matches!(r, PolicyRecord::Header(_)));
            let headers: Vec<&JournalHeader> = headers
                .into_iter()
                .filter_map(|r| match r {
                    PolicyRecord::Header(h) => Some(h),
                    PolicyRecord::Reload(_) => None,
                })
                .collect();
            summary["recorded_under"] = json!(headers);
            if !reloads.is_empty() {
                let reloads: Vec<_> = reloads
                    .into_iter()
                    .filter_map(|r| match r {
                        PolicyRecord::Reload(r) => Some(r),
                        PolicyRecord::Header(_) => None,
                    })
                    .collect();
                summary["policy_reloads"] = json!(reloads);
            }
            if let Some(now) = self.now_under {
                summary["now_under"] = json!({ "policy_path": now.policy_path, "policy_sha256": now.policy_sha256 });
            }
        }
        writeln!(out, "{}", sanitize::json_line(&json!({ "summary": summary })))?;
        Ok(())
    }

    fn print_table(&self, reports: &[&CallReport], out: &mut dyn Write) -> anyhow::Result<()> {
        let (counts, checked, failures) = tally(reports);
        for record in self.recorded_under {
            let line = match record {
                PolicyRecord::Header(header) => format!("recorded under {}", header.describe()),
                PolicyRecord::Reload(reload) => reload.describe(),
            };
            writeln!(out, "{}", sanitize::escape(&line))?;
        }
        if let Some(now) = self.now_under {
            writeln!(out, "now under {}", sanitize::escape(&now.describe_policy()))?;
        }
        let mut header = vec!["BATCH", "CALL", "TOOL", "MODE"];
        header.extend(if self.from_journal {
            ["RECORDED", "RECORDED BY", "NOW", "NOW BY"].as_slice()
        } else {
            ["OUTCOME", "DECIDED BY"].as_slice()
        });
        if self.with_arguments {
            header.push("ARGUMENTS");
        }
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
        for r in reports {
            print_edit(r, out)?;
            print_unfinished(r, out)?;
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
        if self.from_journal && r.unfinished {
            row.push("none".to_owned());
            row.push("console stopped".to_owned());
            row.push(code_name(r).to_owned());
            row.push(sanitize::escape(&r.now_decider()));
        } else if self.from_journal {
            row.push(r.recorded.as_ref().map_or("", |o| code_of(o.code())).to_owned());
            row.push(recorded_decider(r));
            row.push(code_name(r).to_owned());
            row.push(sanitize::escape(&r.now_decider()));
        } else {
            row.push(code_name(r).to_owned());
            row.push(sanitize::escape(&r.decided_by));
        }
        if self.with_arguments {
            row.push(cut(&sanitize::escape(&r.arguments), VALUE_WIDTH));
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
            "{} batch {} call {} ({}): {}",
            self.failure_word().to_uppercase(),
            r.batch + 1,
            sanitize::escape(&r.call_id),
            sanitize::escape(&r.name),
            sanitize::escape(difference)
        )?;
        Ok(())
    }
}

/// Who the journal says decided a call; "-" in a journal from before
/// decisions were recorded; "(edited)" after a human who approved with edits.
fn recorded_decider(r: &CallReport) -> String {
    r.recorded_decision.as_ref().map_or_else(
        || "-".to_owned(),
        |d| match d.edited_arguments {
            Some(_) => format!("{} (edited)", sanitize::escape(&d.decided_by)),
            None => sanitize::escape(&d.deciders()),
        },
    )
}

/// A recorded approval with edits, said plainly: a replay has no human, so
/// it runs the call as the model wrote it (the `tool/call` line), and the
/// edit that ran then is shown, not replayed.
fn print_edit(r: &CallReport, out: &mut dyn Write) -> anyhow::Result<()> {
    let Some((decision, edited)) = r
        .recorded_decision
        .as_ref()
        .and_then(|d| d.edited_arguments.as_ref().map(|e| (d, e)))
    else {
        return Ok(());
    };
    let by = decision.answered_by.as_deref().unwrap_or("a human");
    writeln!(
        out,
        "EDITED batch {} call {} ({}): recorded approved with edits by human@{}, which ran {}; replayed as the model wrote it",
        r.batch + 1,
        sanitize::escape(&r.call_id),
        sanitize::escape(&r.name),
        sanitize::escape(by),
        cut(&sanitize::escape(&edited.to_string()), VALUE_WIDTH)
    )?;
    Ok(())
}

/// A call the journal holds without a result, said plainly: nothing was
/// recorded to compare with; what the replay did with it is its own.
fn print_unfinished(r: &CallReport, out: &mut dyn Write) -> anyhow::Result<()> {
    if !r.unfinished {
        return Ok(());
    }
    writeln!(
        out,
        "NO OUTCOME batch {} call {} ({}): the journal holds the call but no result: the console stopped before the call ended (replayed now: {} by {})",
        r.batch + 1,
        sanitize::escape(&r.call_id),
        sanitize::escape(&r.name),
        code_name(r),
        sanitize::escape(&r.now_decider())
    )?;
    Ok(())
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
