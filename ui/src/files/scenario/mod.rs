//! Scenario files: scopes, tools with scripted bodies, and batches of calls
//! (CONSOLE.md, "Files"). Loaded into the engine through its public API only.

mod body;
mod check;
pub mod declared;
pub mod journal;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tether_tools::{
    AgentPipelineScope, Registration, Tool, ToolCall, ToolFailureCode, ToolRegistrationOptions, ToolRegistry,
};

pub use body::{Body, Recorded};
pub use check::{Names, is_pointer, undeclared_tools};

use crate::files::source::{Document, FileError, Format};

/// The scenario format as JSON Schema: validation and documentation at once.
pub const FORMAT: &str = include_str!("scenario.schema.json");

static FORMAT_CHECK: LazyLock<Format> = LazyLock::new(|| Format::new(FORMAT, "scenario"));

/// A scenario, checked.
#[derive(Clone, Debug, Deserialize)]
pub struct Scenario {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// How long a scripted "timeout" answer keeps a call waiting.
    #[serde(default)]
    pub approval_timeout_ms: Option<u64>,
    #[serde(default)]
    pub scopes: Vec<ScopeSpec>,
    pub tools: Vec<ToolSpec>,
    pub batches: Vec<BatchSpec>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ScopeSpec {
    pub id: String,
    #[serde(default)]
    pub parent: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "object_schema")]
    pub parameters: Value,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub concurrency: Option<Concurrency>,
    pub body: Body,
    #[serde(default)]
    pub metadata: Value,
}

/// `{"type": "object"}`: the schema of a tool that does not give one.
pub fn object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

/// A declarative concurrency rule.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Concurrency {
    Named(NamedConcurrency),
    When { pointer: String, equals: Value },
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NamedConcurrency {
    Always,
    Never,
}

impl Concurrency {
    /// The engine's registration options for this rule.
    pub fn options(rule: Option<&Concurrency>, metadata: Value) -> ToolRegistrationOptions {
        let options = ToolRegistrationOptions::default().with_metadata(metadata);
        match rule {
            None | Some(Concurrency::Named(NamedConcurrency::Never)) => options,
            Some(Concurrency::Named(NamedConcurrency::Always)) => options.with_concurrency(|_| true),
            Some(Concurrency::When { pointer, equals }) => {
                let (pointer, equals) = (pointer.clone(), equals.clone());
                options.with_concurrency(move |args| Value::Object(args.clone()).pointer(&pointer) == Some(&equals))
            }
        }
    }

    /// [`Concurrency::options`] for the tool `name` registered in `scope`,
    /// the rule also noted for the journal's `tool/declared` record.
    pub fn options_for(
        rule: Option<&Concurrency>,
        metadata: Value,
        scope: Option<&AgentPipelineScope>,
        name: &str,
    ) -> ToolRegistrationOptions {
        declared::remember(scope.map(AgentPipelineScope::id), name, rule);
        Self::options(rule, metadata)
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct BatchSpec {
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub max_parallelism: Option<usize>,
    #[serde(default)]
    pub cancel_after_ms: Option<u64>,
    pub calls: Vec<CallSpec>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct CallSpec {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: Option<Value>,
    #[serde(default)]
    pub approval: Option<ApprovalScript>,
    #[serde(default)]
    pub expect: Option<Expect>,
    /// Not in files: where a journal recorded this call, and its outcome.
    #[serde(skip)]
    pub recorded: Option<RecordedCall>,
}

/// A call as a journal recorded it.
#[derive(Clone, Debug)]
pub struct RecordedCall {
    /// The batch's position in the journal: call ids repeat across batches
    /// (models number them per step), so a recording is found by both.
    pub batch: usize,
    /// The recorded outcome; `None` when the journal ends before it.
    pub outcome: Option<tether_tools::ToolExecutionOutcome>,
    /// What the `tool/result` line said decided the call (`decided_by`,
    /// `stage`, …, see docs/journal.md), as written; empty in a journal from
    /// before decisions were recorded.
    pub decision: serde_json::Map<String, serde_json::Value>,
    /// The call's invocation context as recorded (its working directory,
    /// the subagent that made it), so rules that read them decide the
    /// replayed call as they would the real one.
    pub context: Option<Value>,
}

impl CallSpec {
    /// The call as a model would have sent it: a string is the raw text,
    /// an object is serialized, nothing is `{}`.
    pub fn to_call(&self) -> ToolCall {
        let arguments = match &self.arguments {
            Some(Value::String(raw)) => raw.clone(),
            Some(other) => other.to_string(),
            None => "{}".to_owned(),
        };
        let mut call = ToolCall::new(&self.id, &self.name, arguments);
        if let Some(recorded) = &self.recorded {
            let mut context = match &recorded.context {
                Some(Value::Object(fields)) => fields.clone(),
                _ => serde_json::Map::new(),
            };
            context.insert("journal_batch".to_owned(), serde_json::json!(recorded.batch));
            call.invocation_context = Some(Value::Object(context));
        }
        call
    }
}

/// A scripted approval answer.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum ApprovalScript {
    Named(NamedAnswer),
    Reject { reject: String },
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum NamedAnswer {
    Approve,
    Reject,
    Timeout,
    None,
}

/// What a call is expected to end with.
#[derive(Clone, Debug, Deserialize)]
pub struct Expect {
    #[serde(default)]
    pub code: Option<ToolFailureCode>,
    #[serde(default, deserialize_with = "crate::files::source::present")]
    pub value: Option<Value>,
    #[serde(default)]
    pub decided_by: Option<String>,
}

impl Scenario {
    /// Reads and checks a scenario file; every problem is returned.
    pub fn load(path: &Path) -> Result<Scenario, Vec<FileError>> {
        Self::from_document(&Document::read(path)?)
    }

    /// Checks a parsed document: its shape, references and the rest, every
    /// error of both kinds at once, in file order.
    pub fn from_document(document: &Document) -> Result<Scenario, Vec<FileError>> {
        let shaped = FORMAT_CHECK.read::<Scenario>(document);
        let mut errors = check::check(&document.value, document);
        match shaped {
            Ok(scenario) if errors.is_empty() => return Ok(scenario),
            Ok(_) => {}
            Err(shape) => errors.extend(shape),
        }
        errors.sort_by_key(|e| (e.line, e.column));
        errors.dedup();
        Err(errors)
    }

    /// Builds the scope tree. Parents come first whatever the file order.
    ///
    /// # Errors
    /// Only on a scenario that did not pass [`Scenario::from_document`].
    pub fn build_scopes(&self) -> anyhow::Result<HashMap<String, AgentPipelineScope>> {
        let mut built: HashMap<String, AgentPipelineScope> = HashMap::new();
        while built.len() < self.scopes.len() {
            let before = built.len();
            for spec in &self.scopes {
                if built.contains_key(&spec.id) {
                    continue;
                }
                let parent = match &spec.parent {
                    Some(p) => match built.get(p) {
                        Some(parent) => Some(parent.clone()),
                        None => continue,
                    },
                    None => None,
                };
                let mut builder = AgentPipelineScope::builder().label(spec.label.clone().unwrap_or(spec.id.clone()));
                if let Some(parent) = &parent {
                    builder = builder.parent(parent);
                }
                if let Some(session) = &spec.session_id {
                    builder = builder.session_id(session);
                }
                if let Some(owner) = &spec.owner {
                    builder = builder.owner(owner);
                }
                built.insert(spec.id.clone(), builder.build()?);
            }
            anyhow::ensure!(
                built.len() > before,
                "scope parents form a cycle or name unknown scopes"
            );
        }
        Ok(built)
    }

    /// Registers every tool; returns the handles (dropping them unregisters).
    ///
    /// # Errors
    /// Only on a scenario that did not pass [`Scenario::from_document`].
    pub fn register_tools(
        &self,
        registry: &ToolRegistry,
        scopes: &HashMap<String, AgentPipelineScope>,
    ) -> anyhow::Result<Vec<Registration>> {
        let mut handles = Vec::with_capacity(self.tools.len());
        for spec in &self.tools {
            let scope = match &spec.scope {
                Some(id) => Some(scopes.get(id).ok_or_else(|| anyhow::anyhow!("unknown scope {id:?}"))?),
                None => None,
            };
            let tool = Tool::new(
                &spec.name,
                &spec.description,
                spec.parameters.clone(),
                spec.body.clone().into_body(),
            );
            let options = Concurrency::options_for(spec.concurrency.as_ref(), spec.metadata.clone(), scope, &spec.name);
            handles.push(registry.register(tool, scope, options)?);
        }
        Ok(handles)
    }

    /// A short name for headers.
    pub fn title(&self) -> &str {
        self.name.as_deref().unwrap_or("scenario")
    }

    /// Every call's scripted answer, by batch then call id.
    pub fn scripts(&self, batch: usize) -> HashMap<String, ApprovalScript> {
        self.batches.get(batch).map_or_else(HashMap::new, |b| {
            b.calls
                .iter()
                .filter_map(|c| c.approval.clone().map(|a| (c.id.clone(), a)))
                .collect()
        })
    }
}

/// Shared so bodies cloned per call stay cheap.
/// Keyed by the batch's position in the journal and the call id.
pub type RecordedMap = Arc<HashMap<(usize, String), Recorded>>;
