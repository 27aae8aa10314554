//! A policy's `reviewers`: who answers a call a `review` rule routes to
//! them before the human is asked (docs/policy.md, "Reviewers"). This is the
//! file side only: what a reviewer is and how it is checked; running one is
//! the session's (`session::review`).

use std::num::NonZeroUsize;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::rule::{Action, Rule};
use super::{PolicySpec, Unmatched};
use crate::files::source::{Document, FileError};

/// How long a reviewer may take when the policy does not say: long enough
/// for a model's answer, far shorter than the minutes a human prompt waits.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// How many calls one reviewer reviews at once when the policy does not
/// say: a batch's parallel calls are reviewed side by side, and a flood
/// waits its turn instead of starting a process (or a request) per call.
pub const DEFAULT_MAX_CONCURRENT: NonZeroUsize = match NonZeroUsize::new(4) {
    Some(n) => n,
    None => NonZeroUsize::MIN,
};

/// One reviewer as written (checked field by field in [`compile`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewerSpec {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    model: Option<ModelSpec>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    max_concurrent: Option<usize>,
    #[serde(default)]
    instructions: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelSpec {
    api: ModelApi,
    model: String,
    #[serde(default)]
    base_url: Option<String>,
    api_key_env: String,
}

/// The model APIs a reviewer can call.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ModelApi {
    /// The Anthropic Messages API (`POST {base_url}/v1/messages`).
    Anthropic,
    /// The OpenAI Responses API (`POST {base_url}/v1/responses`).
    Openai,
}

impl ModelApi {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelApi::Anthropic => "anthropic",
            ModelApi::Openai => "openai",
        }
    }

    /// Where the API is when the policy names no `base_url`.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ModelApi::Anthropic => "https://api.anthropic.com",
            ModelApi::Openai => "https://api.openai.com",
        }
    }
}

/// A model a reviewer asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelReviewer {
    pub api: ModelApi,
    pub model: String,
    /// Without a trailing slash; `/v1/messages` or `/v1/responses` follows.
    pub base_url: String,
    /// The environment variable holding the key (the key itself is never
    /// part of the policy, and never written anywhere by Tether).
    pub api_key_env: String,
    /// The policy's own words for the model, added to Tether's.
    pub instructions: Option<String>,
}

/// What a reviewer runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReviewerKind {
    /// `sh -c COMMAND`: the call as one JSON object on stdin, the answer as
    /// one JSON object on stdout.
    Command(String),
    /// A model over its HTTP API.
    Model(ModelReviewer),
}

/// A checked reviewer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reviewer {
    pub name: String,
    pub kind: ReviewerKind,
    /// Past this the reviewer is killed (or its request dropped) and the
    /// call goes to the human; the wait for a free slot counts.
    pub timeout: Duration,
    pub max_concurrent: NonZeroUsize,
}

/// Every reviewer of the file, each error at its place.
pub(super) fn compile(doc: &Document, errors: &mut Vec<FileError>) -> Vec<Reviewer> {
    let Some(Value::Object(map)) = doc.value.get("reviewers") else {
        return Vec::new();
    };
    let mut reviewers = Vec::new();
    for (name, spec) in map {
        let at = format!("/reviewers/{}", crate::files::source::escape_segment(name));
        if let Some(reviewer) = compile_one(name, spec, doc, &at, errors) {
            reviewers.push(reviewer);
        }
    }
    reviewers
}

fn compile_one(name: &str, spec: &Value, doc: &Document, at: &str, errors: &mut Vec<FileError>) -> Option<Reviewer> {
    if name.is_empty() || name.contains(char::is_whitespace) {
        errors.push(doc.error_at(
            at,
            format!("reviewer name {name:?}: expected a name without spaces, such as \"gate\""),
        ));
    }
    // The schema reports shape errors; only a well-shaped spec is checked on.
    let spec = ReviewerSpec::deserialize(spec).ok()?;
    let kind = match (spec.command, spec.model) {
        (Some(command), None) if !command.trim().is_empty() => ReviewerKind::Command(command),
        (Some(_), None) => {
            errors.push(doc.error_at(
                &format!("{at}/command"),
                "an empty command: expected a shell command that reads the call on stdin and prints {\"decision\": ..}",
            ));
            return None;
        }
        (None, Some(model)) => {
            let env_ok = !model.api_key_env.is_empty()
                && model.api_key_env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !env_ok {
                errors.push(doc.error_at(
                    &format!("{at}/model/api_key_env"),
                    format!(
                        "expected the name of an environment variable holding the key (such as \"ANTHROPIC_API_KEY\"), got {:?}; never the key itself",
                        model.api_key_env
                    ),
                ));
            }
            let base_url = model
                .base_url
                .unwrap_or_else(|| model.api.default_base_url().to_owned());
            if !(base_url.starts_with("https://") || base_url.starts_with("http://")) {
                errors.push(doc.error_at(
                    &format!("{at}/model/base_url"),
                    format!("expected an http:// or https:// URL, got {base_url:?}"),
                ));
            }
            ReviewerKind::Model(ModelReviewer {
                api: model.api,
                model: model.model,
                base_url: base_url.trim_end_matches('/').to_owned(),
                api_key_env: model.api_key_env,
                instructions: spec.instructions.clone(),
            })
        }
        _ => {
            errors.push(doc.error_at(
                at,
                "expected exactly one of \"command\" (a shell command) or \"model\" ({\"api\": \"anthropic\" | \"openai\", \"model\": .., \"api_key_env\": ..})",
            ));
            return None;
        }
    };
    if spec.instructions.is_some() && matches!(kind, ReviewerKind::Command(_)) {
        errors.push(doc.error_at(
            &format!("{at}/instructions"),
            "\"instructions\" are for a model reviewer; a command reviewer has its own",
        ));
    }
    let max_concurrent = match spec.max_concurrent.map(NonZeroUsize::new) {
        None => DEFAULT_MAX_CONCURRENT,
        Some(Some(n)) => n,
        Some(None) => {
            errors.push(doc.error_at(&format!("{at}/max_concurrent"), "expected at least 1"));
            DEFAULT_MAX_CONCURRENT
        }
    };
    Some(Reviewer {
        name: name.to_owned(),
        kind,
        timeout: spec.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis),
        max_concurrent,
    })
}

/// The names of the reviewers written in the file (also those with
/// errors), for checking what `review` actions name.
fn names(doc: &Document) -> Vec<String> {
    match doc.value.get("reviewers") {
        Some(Value::Object(map)) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Checks that every `review` action names a reviewer of the file, and
/// that `"default": "review"` has exactly one to go to; returns that one.
pub(super) fn routing(
    doc: &Document,
    rules: Option<&[Rule]>,
    spec: Option<&PolicySpec>,
    errors: &mut Vec<FileError>,
) -> Option<String> {
    let names = names(doc);
    let known = if names.is_empty() {
        "the policy has no \"reviewers\"".to_owned()
    } else {
        format!("the policy's reviewers are {}", names.join(", "))
    };
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        if let Action::Review { reviewer } = &rule.action
            && !names.contains(reviewer)
        {
            errors.push(doc.error_at(
                &format!("/rules/{i}/action/reviewer"),
                format!("unknown reviewer {reviewer:?}: {known}"),
            ));
        }
    }
    // Read from the file itself, so a policy with shape errors elsewhere
    // still hears about this one.
    let default = spec
        .and_then(|s| s.default)
        .or_else(|| (doc.value.get("default").and_then(Value::as_str) == Some("review")).then_some(Unmatched::Review));
    if default != Some(Unmatched::Review) {
        return None;
    }
    match names.as_slice() {
        [only] => Some(only.clone()),
        _ => {
            errors.push(doc.error_at(
                "/default",
                format!(
                    "\"default\": \"review\" sends every call no rule decides to the policy's only reviewer, and {known}; name one with a rule's {{\"type\": \"review\", \"reviewer\": ..}} action instead"
                ),
            ));
            None
        }
    }
}
