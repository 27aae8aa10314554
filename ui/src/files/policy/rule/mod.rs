//! Rules: what they match and what they do. A rule's stage and action and
//! the compiled rule are here; the match as written is in `spec`, compiled
//! in `matcher`; compound shell commands covered by several rules in
//! `compound`; tools read as the command they run in `as_command`.

mod as_command;
mod compound;
mod matcher;
mod spec;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use tether_tools::ToolExecution;

pub use self::as_command::AsCommand;
pub use self::compound::{allowed_by_segments, uncovered_commands};
pub use self::matcher::{CommandRule, Matcher, Predicate};
pub use self::spec::{MatchSpec, Roots, ValueMatchSpec};

/// What happens to a call no pre-execute rule decides (a policy's
/// top-level `"default"`): asked unless the policy says otherwise.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Unmatched {
    Allow,
    #[default]
    Ask,
    Deny,
    /// Sent to the policy's only reviewer.
    Review,
}

impl Unmatched {
    pub fn as_str(self) -> &'static str {
        match self {
            Unmatched::Allow => "allow",
            Unmatched::Ask => "ask",
            Unmatched::Deny => "deny",
            Unmatched::Review => "review",
        }
    }
}

/// The pipeline stage a rule acts in.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    PreExecute,
    Guard,
    Execute,
    PostExecute,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::PreExecute => "pre-execute",
            Stage::Guard => "guard",
            Stage::Execute => "execute",
            Stage::PostExecute => "post-execute",
        }
    }

    /// The actions that make sense in this stage.
    pub fn actions(self) -> &'static [&'static str] {
        match self {
            Stage::PreExecute => &["allow", "deny", "ask", "review"],
            Stage::Guard => &["veto"],
            Stage::Execute => &["timeout"],
            Stage::PostExecute => &["accept", "replace", "block"],
        }
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    Allow,
    Deny {
        reason: String,
    },
    Ask {
        reason: Option<String>,
        /// How long a call this rule asks waits for a human (`"10m"`),
        /// instead of the console's `--approval-timeout`; when it runs out
        /// the call fails UNAVAILABLE, never approved.
        #[serde(default, deserialize_with = "wait")]
        timeout: Option<std::time::Duration>,
        /// How many distinct answerers must approve a call this rule asks
        /// (`"approvals": 2`, the two-person rule), 1 to [`MAX_APPROVALS`];
        /// any one rejection rejects.
        #[serde(default, deserialize_with = "approvals")]
        approvals: Option<Approvals>,
    },
    /// Sends the call to the named reviewer of the policy, which allows,
    /// denies or asks the human (docs/policy.md, "Reviewers").
    Review {
        reviewer: String,
    },
    Veto {
        reason: String,
    },
    Timeout {
        ms: u64,
    },
    Accept,
    Replace {
        value: Value,
    },
    Block {
        reason: String,
    },
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny { .. } => "deny",
            Action::Ask { .. } => "ask",
            Action::Review { .. } => "review",
            Action::Veto { .. } => "veto",
            Action::Timeout { .. } => "timeout",
            Action::Accept => "accept",
            Action::Replace { .. } => "replace",
            Action::Block { .. } => "block",
        }
    }
}

/// A compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    pub id: Arc<str>,
    pub stage: Stage,
    pub matcher: Matcher,
    pub result: Option<Predicate>,
    pub action: Action,
}

impl Rule {
    /// The reason an ask rule gives for `execution`: its own, and, where
    /// its match reads the tool as a command (`as_command`), that command
    /// and why the read-only catalogue does not cover it.
    pub fn ask_reason(&self, execution: &ToolExecution) -> Option<String> {
        let Action::Ask { reason, .. } = &self.action else {
            return None;
        };
        let Some(reading) = self.matcher.as_command else {
            return reason.clone();
        };
        let arguments = execution.arguments();
        let mut detail = reading.describe(arguments);
        if let Ok(argv) = reading.argv(arguments) {
            let segment = crate::shell::Segment::of(argv.iter().map(crate::shell::Word::literal).collect(), 0..0);
            let cwd = crate::paths::cwd_of(execution);
            if let Err(why) = crate::shell::catalogue::covers(&segment, cwd.as_deref()) {
                detail.push_str(&format!(", which the read-only catalogue does not cover: {why}"));
            }
        }
        Some(match reason {
            Some(reason) => format!("{reason} ({detail})"),
            None => detail,
        })
    }
}

/// A duration: `90s`, `2m`, `1h`, `500ms`, or whole seconds.
pub fn duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (90s, 2m, 1h)"))?;
    let millis = match unit {
        "" | "s" => n.checked_mul(1000),
        "ms" => Some(n),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        _ => None,
    }
    .filter(|ms| *ms > 0)
    .ok_or_else(|| format!("{text:?} is not a duration above zero (90s, 2m, 1h)"))?;
    Ok(std::time::Duration::from_millis(millis))
}

/// The most approvals an ask may need (`"approvals"`).
pub const MAX_APPROVALS: u8 = 5;

/// How many distinct answerers must approve a call: 1 to [`MAX_APPROVALS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Approvals(u8);

impl Approvals {
    /// One answerer: what every ask needs unless it says more.
    pub const ONE: Self = Self(1);

    /// `n` approvals, when `n` is 1 to [`MAX_APPROVALS`].
    pub fn new(n: u64) -> Option<Self> {
        u8::try_from(n)
            .ok()
            .filter(|n| (1..=MAX_APPROVALS).contains(n))
            .map(Self)
    }

    pub fn get(self) -> u8 {
        self.0
    }

    /// Why `value` is not a number of approvals, when it is not.
    pub fn refused(value: &Value) -> Option<String> {
        match value.as_u64().and_then(Self::new) {
            Some(_) => None,
            None => Some(format!(
                "\"approvals\": {value} is not a number of approvers: an ask needs from 1 to {MAX_APPROVALS} distinct people to approve"
            )),
        }
    }
}

fn approvals<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Approvals>, D::Error> {
    let value = Value::deserialize(d)?;
    match Approvals::refused(&value) {
        None => Ok(value.as_u64().and_then(Approvals::new)),
        Some(why) => Err(serde::de::Error::custom(why)),
    }
}

fn wait<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<std::time::Duration>, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    text.map(|t| duration(&t).map_err(serde::de::Error::custom)).transpose()
}
