//! `tether replay --headless`: every batch through `execute_batch`, one line
//! per outcome in declared order, then a summary. Exit 0 when every
//! expectation holds, 1 when one fails, 2 on bad input.

mod print;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use super::{EXIT_BAD_INPUT, EXIT_FAILED};
use crate::cli::{ReplayArgs, ReplayFilter, ReviewReplay};
use crate::files::inputs;
use crate::files::source::{FileError, FileErrors};
use crate::sanitize;
use crate::session::journal::{self, Decision, JournalHeader, PolicyRecord};
use crate::session::replay::{CallReport, Session};
use crate::session::review::Reviewing;
use print::{Printed, code_of};

/// The policy file the journal at `path` was last recorded under: its last
/// run's header, or a later reload that took.
fn last_recorded_policy(records: &[PolicyRecord]) -> Option<PathBuf> {
    records
        .iter()
        .rev()
        .find_map(|r| match r {
            PolicyRecord::Header(h) => Some(h.policy_path.clone()),
            PolicyRecord::Reload(r) if r.error.is_none() => Some(Some(r.policy_path.clone())),
            PolicyRecord::Reload(_) => None,
        })?
        .map(PathBuf::from)
}

/// The policy `--policy-from-journal` asks for, or why there is none. A
/// journal replayed with no `--policy` runs under the policy it was last
/// recorded under while that file is there: what a replay of the record
/// answers by default ("who let this run?").
fn policy_from_journal(args: &ReplayArgs, records: &[PolicyRecord]) -> Result<Option<PathBuf>, Vec<FileError>> {
    if !args.policy_from_journal {
        if args.policy.is_none() {
            // Only a file that is there and loads: a default never turns a
            // replay into an error.
            let loads = |p: &PathBuf| p.is_file() && crate::files::policy::Policy::load(p).is_ok();
            return Ok(last_recorded_policy(records).filter(loads));
        }
        return Ok(args.policy.clone());
    }
    let shown = args
        .scenario
        .as_ref()
        .map_or_else(|| "<no journal>".to_owned(), |p| p.display().to_string());
    let refuse = |message: &str| {
        Err(vec![FileError {
            path: shown.clone(),
            line: 1,
            column: 1,
            message: message.to_owned(),
        }])
    };
    if records.is_empty() {
        return refuse("--policy-from-journal needs a journal that names its policy (journal/header records)");
    }
    match last_recorded_policy(records) {
        Some(path) => Ok(Some(path)),
        None => refuse("the journal was recorded without a policy file; pass --policy FILE"),
    }
}

pub async fn run(args: &ReplayArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let recorded_under = match &args.scenario {
        Some(path) if inputs::is_journal_file(path) => journal::policy_records(path),
        _ => Vec::new(),
    };
    let policy = policy_from_journal(args, &recorded_under);
    let loaded = match policy
        .and_then(|policy| inputs::load(args.scenario.as_deref(), policy.as_deref()).map(|l| (l, policy)))
    {
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
    let (mut loaded, policy) = loaded;
    let policy = policy.or_else(|| loaded.policy_beside.clone());
    if loaded.from_journal {
        answer_as_recorded(&mut loaded.scenario);
        if args.policy.is_none() && !args.policy_from_journal {
            if let Some(path) = &policy {
                let note = format!(
                    "now under the policy the journal was recorded under, {} (--policy FILE for another)",
                    path.display()
                );
                writeln!(std::io::stderr(), "{}", sanitize::escape(&note))?;
            }
        }
    }
    // On stderr, so the table and the JSON lines on stdout stay as they were.
    if let Some(note) = loaded.policy_note() {
        writeln!(std::io::stderr(), "{note}")?;
    }
    if loaded.from_journal && policy.is_none() {
        let offer = match last_recorded_policy(&recorded_under) {
            Some(path) => format!("pass --policy FILE, or --policy-from-journal to use {}", path.display()),
            None => "pass --policy FILE (the journal names no policy file)".to_owned(),
        };
        let note = format!("now: no policy (every call is asked) — {offer}");
        writeln!(std::io::stderr(), "{}", sanitize::escape(&note))?;
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
    if args.review == ReviewReplay::Recorded {
        session.set_reviewing(Reviewing {
            mode: session.recorded_reviews(),
            ..Reviewing::default()
        });
    }
    let _answerer = session.install_scripted_answerer(args.answer);
    let journal = match &args.console.journal {
        Some(path) => Some(
            journal::JournalWriter::open(
                path,
                args.console.history.journal_max_bytes(),
                journal::JournalHeader::new(policy.as_deref(), session.approval_timeout()),
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
    let now_under = loaded
        .from_journal
        .then(|| JournalHeader::new(policy.as_deref(), session.approval_timeout()));
    let shown: Vec<&CallReport> = reports.iter().filter(|r| args.filter.shows(r)).collect();
    if let Some(note) = args.filter.matches_no_decider(&reports) {
        writeln!(std::io::stderr(), "{}", sanitize::escape(&note))?;
    }
    let printed = Printed {
        with_arguments: args.filter.decided_by.is_some(),
        all: reports.len(),
        from_journal: loaded.from_journal,
        recorded_under: &recorded_under,
        now_under: now_under.as_ref(),
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

/// A call a human answered in the recording gets the same answer when the
/// replay asks it: a replay has no human, and the record says what the
/// human said. Calls the recording never asked a human about get
/// `--answer`.
fn answer_as_recorded(scenario: &mut crate::files::scenario::Scenario) {
    use crate::files::scenario::{ApprovalScript, NamedAnswer};
    for call in scenario.batches.iter_mut().flat_map(|b| b.calls.iter_mut()) {
        let Some(decision) = call.recorded.as_ref().and_then(|r| Decision::recorded(&r.decision)) else {
            continue;
        };
        let by_human = decision
            .answered_by
            .as_deref()
            .is_some_and(|by| by != crate::session::provenance::SCRIPTED);
        call.approval = match decision.answer.as_deref() {
            _ if !by_human => continue,
            Some(answer) if answer.starts_with("approved") => Some(ApprovalScript::Named(NamedAnswer::Approve)),
            Some("rejected") => Some(ApprovalScript::Reject {
                reject: decision.reason.unwrap_or_else(|| "rejected".to_owned()),
            }),
            _ => continue,
        };
    }
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
    /// When `--decided-by` matches no call: which deciders there are.
    fn matches_no_decider(&self, reports: &[CallReport]) -> Option<String> {
        let filter = self.decided_by.as_deref()?;
        let only_deciders = ReplayFilter {
            decided_by: Some(filter.to_owned()),
            ..ReplayFilter::default()
        };
        if reports.iter().any(|r| only_deciders.shows(r)) {
            return None;
        }
        let deciders: BTreeSet<String> = reports
            .iter()
            .flat_map(|r| match &r.recorded {
                Some(_) => {
                    let recorded = r.recorded_decision.as_ref().map(|d| d.decided_by.clone());
                    [Some(r.now_decider()), recorded]
                }
                None => [Some(r.decided_by.clone()), None],
            })
            .flatten()
            .collect();
        let deciders: Vec<String> = deciders.into_iter().collect();
        Some(format!(
            "--decided-by {filter} matches no call; the deciders here are: {}",
            if deciders.is_empty() {
                "none".to_owned()
            } else {
                deciders.join(", ")
            }
        ))
    }

    /// Whether a call is shown: every filter given matches what was
    /// recorded or what happened now.
    fn shows(&self, report: &CallReport) -> bool {
        // The deciders the table shows: recorded and now for a journal.
        let decided = |filter: &str| match &report.recorded {
            Some(_) => {
                let recorded = report.recorded_decision.as_ref().map(|d| d.decided_by.clone());
                // The rule that asked now counts, even when the recorded
                // answer then decided.
                let asked = report.decision.asked_by.as_ref().map(|rule| format!("rule:{rule}"));
                [Some(report.now_decider()), recorded, asked]
                    .into_iter()
                    .flatten()
                    .any(|decider| Decision::decider_matches(&decider, filter))
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
