//! What a replayed call reports: its outcome, who decided it, whether it met
//! its expectation, and the JSON line headless replay prints for it.

use serde_json::Value;
use tether_tools::{ToolExecutionMode, ToolExecutionOutcome};

use crate::session::journal::Decision;
use crate::session::provenance::TrailEntry;

/// One call's result, with what decided it and whether it met its expectation.
#[derive(Clone, Debug)]
pub struct CallReport {
    pub batch: usize,
    pub call_id: String,
    pub name: String,
    pub mode: ToolExecutionMode,
    pub outcome: ToolExecutionOutcome,
    pub decided_by: String,
    pub trail: Vec<TrailEntry>,
    /// `None`: no expectation; `Some(Err(..))`: what differed.
    pub expectation: Option<Result<(), String>>,
    /// For a journal replay: the outcome the journal recorded.
    pub recorded: Option<ToolExecutionOutcome>,
    /// Who decided the call now, in full (as a journal would record it).
    pub decision: Decision,
    /// For a journal replay: who the journal says decided the call; `None`
    /// for a journal written before decisions were recorded.
    pub recorded_decision: Option<Decision>,
    /// The call's arguments, as the model wrote them.
    pub arguments: String,
    /// For a journal replay: the journal holds the call but no result (the
    /// console stopped before the call ended).
    pub unfinished: bool,
    /// For a journal replay: the approval was answered with the answer the
    /// journal recorded from a human, not by a script or nobody.
    pub answered_as_recorded: bool,
}

impl CallReport {
    /// The decider to show beside the recorded one. A replay has no human:
    /// an approval answered by its script is shown as the rule that asked,
    /// which is what the new policy decided.
    pub fn now_decider(&self) -> String {
        if self.decided_by == RECORDED_BLOCK {
            return self.decided_by.clone();
        }
        if self.answered_as_recorded
            && let Some(recorded) = &self.recorded_decision
        {
            return format!("{} (recorded answer)", recorded.deciders());
        }
        match (&*self.decision.stage, &self.decision.asked_by) {
            ("approval", Some(rule)) => format!("rule:{rule}"),
            _ => self.decision.decided_by.clone(),
        }
    }
}

/// What a journal replay says of a call the journal holds without a result.
pub const NO_RECORDED_OUTCOME: &str = "none: the console stopped before the call ended";

/// What decided a call whose recorded block stands.
pub(super) const RECORDED_BLOCK: &str = "recorded block (result withheld)";

pub(super) fn check_expectation(
    expect: &crate::files::scenario::Expect,
    outcome: &ToolExecutionOutcome,
    decided_by: &str,
) -> Result<(), String> {
    let mut differences = Vec::new();
    let code = |c: Option<tether_tools::ToolFailureCode>| c.map_or("success".to_owned(), |c| c.as_str().to_owned());
    if expect.code != outcome.code() {
        differences.push(format!(
            "expected {}, got {} ({})",
            code(expect.code),
            code(outcome.code()),
            outcome
                .failure()
                .map_or_else(|| outcome.value().to_string(), |f| f.message.clone())
        ));
    }
    if let Some(value) = &expect.value {
        if value != outcome.value() {
            differences.push(format!("expected value {value}, got {}", outcome.value()));
        }
    }
    if let Some(expected) = &expect.decided_by {
        if expected != decided_by {
            differences.push(format!("expected decided_by {expected}, got {decided_by}"));
        }
    }
    if differences.is_empty() {
        Ok(())
    } else {
        Err(differences.join("; "))
    }
}

/// The JSON line headless replay prints for one call: `decision` is who
/// decided it now, in full; a journal replay adds what was recorded, with
/// who decided then (`null` in a journal from before decisions were kept).
pub fn report_json(report: &CallReport) -> Value {
    let mut line = serde_json::json!({
        "batch": report.batch,
        "call_id": report.call_id,
        "name": report.name,
        "arguments": report.arguments,
        "mode": report.mode.as_str(),
        "code": report.outcome.code().map(|c| c.as_str()),
        "value": report.outcome.value(),
        "decided_by": report.decided_by,
        "decision": report.decision,
    });
    if report.unfinished {
        line["now_decided_by"] = Value::String(report.now_decider());
        line["recorded"] = serde_json::json!({"code": null, "outcome": NO_RECORDED_OUTCOME, "decided_by": null});
    }
    if let Some(recorded) = &report.recorded {
        line["now_decided_by"] = Value::String(report.now_decider());
        line["recorded"] = serde_json::json!({
            "code": recorded.code().map(|c| c.as_str()),
            "value": recorded.value(),
            "decided_by": report.recorded_decision.as_ref().map(|d| &d.decided_by),
            "decision": report.recorded_decision,
        });
    }
    line
}
