//! Finding and loading what a command was pointed at: a scenario, a journal,
//! a policy, or the bundled default demo.

use std::path::{Path, PathBuf};

use crate::files::policy::Policy;
use crate::files::scenario::{Scenario, journal::scenario_from_journal};
use crate::files::source::{Document, FileError, parse_journal, read_text};

/// The bundled default demo, compiled in so `tether` works from any directory.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../demos/quickstart.json");
/// The default demo's policy.
pub const DEFAULT_POLICY: &str = include_str!("../../../demos/quickstart.policy.json");

/// What the user asked to replay.
pub struct Replayable {
    pub scenario: Scenario,
    pub policy: Option<Policy>,
    /// Where it came from, for the header.
    pub source: String,
    /// Whether the expectations are a recording (journal replay).
    pub from_journal: bool,
    /// The policy file in force when it was not given with `--policy` but
    /// found beside the scenario (`X.policy.json` for `X.json`).
    pub policy_beside: Option<PathBuf>,
}

impl Replayable {
    /// What to tell the user about a policy found beside the scenario.
    pub fn policy_note(&self) -> Option<String> {
        self.policy_beside.as_ref().map(|path| {
            format!(
                "using the policy beside the scenario, {} (--policy FILE chooses another)",
                path.display()
            )
        })
    }
}

/// The policy that goes with a scenario or journal when none is given:
/// `X.policy.json` beside `X.json` (or `X.jsonl`), if it exists.
pub fn policy_beside(scenario: &Path) -> Option<PathBuf> {
    let stem = scenario.file_stem()?.to_str()?;
    let candidate = scenario.with_file_name(format!("{stem}.policy.json"));
    (candidate != scenario && candidate.is_file()).then_some(candidate)
}

/// The bundled default demo with its policy.
pub fn default_demo() -> Result<Replayable, Vec<FileError>> {
    let scenario = Scenario::from_document(&Document::parse(
        "<bundled quickstart.json>".into(),
        DEFAULT_SCENARIO.into(),
    )?)?;
    let mut policy = Policy::from_document(&Document::parse(
        "<bundled quickstart.policy.json>".into(),
        DEFAULT_POLICY.into(),
    )?)?;
    policy.path = Some("<bundled quickstart.policy.json>".into());
    Ok(Replayable {
        scenario,
        policy: Some(policy),
        source: "bundled quickstart demo".into(),
        from_journal: false,
        policy_beside: None,
    })
}

/// Whether a file looks like a journal: its first non-empty line is a whole
/// JSON object with an `event` field.
pub fn is_journal(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .is_some_and(|v| v.get("event").is_some())
}

/// Whether the file at `path` reads as a journal ([`is_journal`]); `false`
/// when it cannot be read (loading it then says why).
pub fn is_journal_file(path: &Path) -> bool {
    read_text(path).is_ok_and(|(_, text)| is_journal(&text))
}

/// Loads a scenario or a journal, and a policy; checks the policy's scope
/// references against the scenario. Nothing is half-loaded: any error and
/// the whole load fails.
pub fn load(scenario: Option<&Path>, policy: Option<&Path>) -> Result<Replayable, Vec<FileError>> {
    let mut loaded = match scenario {
        None => default_demo()?,
        Some(path) => load_scenario_or_journal(path)?,
    };
    if let Some(path) = policy {
        loaded.policy = Some(Policy::load(path)?);
    } else if let Some(path) = scenario.and_then(policy_beside) {
        loaded.policy = Some(Policy::load(&path)?);
        loaded.policy_beside = Some(path);
    }
    if let Some(policy) = &loaded.policy {
        let known: Vec<&str> = loaded.scenario.scopes.iter().map(|s| s.id.as_str()).collect();
        let errors = policy.unknown_scopes(&known);
        if !errors.is_empty() {
            return Err(errors);
        }
    }
    // Without a policy file the implicit rules still run, as in `tether
    // serve`: a tool whose metadata says it is a held MCP tool is denied,
    // and every other call is asked.
    loaded.policy.get_or_insert_with(Policy::implicit_only);
    Ok(loaded)
}

fn load_scenario_or_journal(path: &Path) -> Result<Replayable, Vec<FileError>> {
    let (shown, mut text) = read_text(path)?;
    if is_journal(&text) {
        // A journal rotated by size is read as one: every file of its set.
        if super::journal_set::newest_number(path) > 0 {
            text = super::journal_set::read_text(path).map_err(|e| {
                vec![FileError {
                    path: shown.clone(),
                    line: 1,
                    column: 1,
                    message: format!("cannot read the journal's rotated files: {e}"),
                }]
            })?;
        }
        let journal = parse_journal(&shown, &text)?;
        if let Some(line) = journal.truncated_line {
            tracing::warn!(path = %shown, line, "journal ends in a truncated line; it was ignored");
        }
        return Ok(Replayable {
            scenario: scenario_from_journal(&journal, &shown),
            policy: None,
            source: shown,
            from_journal: true,
            policy_beside: None,
        });
    }
    let document = Document::parse(shown.clone(), text)?;
    Ok(Replayable {
        scenario: Scenario::from_document(&document)?,
        policy: None,
        source: shown,
        from_journal: false,
        policy_beside: None,
    })
}
