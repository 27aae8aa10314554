//! The pipeline inside the gateway, for when the console is not running and
//! `--policy FILE` was given: the same policy install code as the console,
//! no human to ask (so `ask` becomes a deny), no screen.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};
use tether_tools::{
    AgentPipelineScope, ApprovalAnswer, ApprovalRequest, BoxError, ListenerOrder, PreExecuteNext, Registration, Tool,
    ToolCall, ToolContext, ToolExecution, ToolPreDecision, ToolRegistry,
};
use tokio_util::sync::CancellationToken;

use super::console::{Invoke, NOT_RUNNING};
use crate::files::policy::Policy;
use crate::files::scenario::{Concurrency, NamedConcurrency};
use crate::session::provenance::{DecisionLog, decided_by};

/// What the model reads when the gateway's own policy asks and the
/// console that could ask a human is not running.
fn nobody_to_ask(reason: Option<&str>) -> String {
    let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
    format!(
        "{NOT_RUNNING}; the gateway's own policy asks a human about this call{why}, and with nobody to ask, it is denied"
    )
}

/// The embedded engine: one registry, one scope for the upstream server.
pub struct Embedded {
    registry: ToolRegistry,
    scope: AgentPipelineScope,
    log: DecisionLog,
    invoke: Invoke,
    tools: Mutex<HashMap<String, Registration>>,
    _policy: Vec<Registration>,
}

impl Embedded {
    /// # Errors
    /// When the scope cannot be built.
    pub fn new(server: &str, policy: &Policy, invoke: Invoke) -> anyhow::Result<Self> {
        let registry = ToolRegistry::new();
        let log = DecisionLog::default();
        let mut handles = crate::session::policy::install(&registry, policy, &log);
        // With nobody to ask, an `ask` is a deny, decided here, before the
        // approval stage: an answerer's refusal would read "rejected by the
        // approver", and no one rejected anything.
        handles.push(registry.register_pre_execute(
            None,
            ListenerOrder::Prepend,
            |_e: ToolExecution, next: PreExecuteNext| async move {
                Ok::<_, BoxError>(match next.run().await? {
                    ToolPreDecision::Ask(reason) => ToolPreDecision::Deny(nobody_to_ask(reason.as_deref())),
                    decided => decided,
                })
            },
        ));
        handles.push(registry.set_approval_answerer(|_request: ApprovalRequest| async {
            Ok::<_, BoxError>(ApprovalAnswer::Unavailable {
                reason: nobody_to_ask(None),
            })
        }));
        let scope = AgentPipelineScope::builder().label(server).build()?;
        Ok(Self {
            registry,
            scope,
            log,
            invoke,
            tools: Mutex::default(),
            _policy: handles,
        })
    }

    /// Registers (or replaces) an upstream tool with its real schema.
    pub fn register(&self, name: &str, description: &str, schema: Value, metadata: Value, parallel: bool) {
        let invoke = std::sync::Arc::clone(&self.invoke);
        let body = move |arguments: Value, ctx: ToolContext| {
            let execution = ctx.execution();
            let call = invoke(
                execution.call_id().to_owned(),
                execution.name().to_owned(),
                arguments,
                // No human here, so nobody edits.
                false,
                ctx.cancellation().clone(),
            );
            async move { call.await.map_err(BoxError::from) }
        };
        let concurrency = parallel.then_some(Concurrency::Named(NamedConcurrency::Always));
        let options = || Concurrency::options_for(concurrency.as_ref(), metadata.clone(), Some(&self.scope), name);
        let tool = Tool::new(name, description, schema, body.clone());
        let registration = match self.registry.register(tool, Some(&self.scope), options()) {
            Ok(registration) => registration,
            Err(error) => {
                tracing::warn!(%error, name, "schema refused by the engine; registered with a permissive one");
                let tool = Tool::new(name, description, json!({"type": "object"}), body);
                match self.registry.register(tool, Some(&self.scope), options()) {
                    Ok(registration) => registration,
                    Err(error) => {
                        tracing::warn!(%error, name, "tool not registered");
                        return;
                    }
                }
            }
        };
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), registration);
    }

    pub fn unregister(&self, name: &str) {
        self.tools.lock().unwrap_or_else(PoisonError::into_inner).remove(name);
    }

    /// Runs one call through the pipeline: the outcome as the link reports it.
    /// `cwd` is where the client works: path rules judge from it.
    pub async fn run(
        &self,
        call_id: &str,
        name: &str,
        arguments: &str,
        cwd: Option<&str>,
        cancel: &CancellationToken,
    ) -> Value {
        let view = self.registry.seal(Some(&self.scope));
        let mut call = ToolCall::new(call_id, name, arguments);
        call.invocation_context = cwd.map(|cwd| json!({ "cwd": cwd }));
        let batch = self
            .registry
            .execute_batch(vec![call], &view, NonZeroUsize::MIN, None, cancel)
            .await;
        let Some(outcome) = batch.outcomes.first() else {
            return json!({"code": "UNAVAILABLE", "value": {"message": "the pipeline gave no outcome"}, "decided_by": "gateway"});
        };
        let trail = self.log.take_of(outcome);
        json!({
            "code": outcome.code().map(|c| c.as_str()),
            "value": outcome.value(),
            "decided_by": decided_by(outcome, &trail),
        })
    }
}
