//! The client's requests that read what a server holds, `resources/read`
//! and `prompts/get`, run through the pipeline like `tools/call`: each is a
//! call of a tool the gateway registers in every server's scope that has
//! resources or prompts, `resources.read` with `{"uri": …}` and
//! `prompts.get` with `{"name": …, "arguments": {…}}`, so the policy and
//! the human decide them, the journal records them, and what was refused
//! never reaches the server. The body sends the server exactly the
//! arguments that were decided.

use rmcp::ErrorData as McpError;
use rmcp::model::{GetPromptResult, ReadResourceResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::super::upstream::Upstream;
use super::Gateway;

/// The tool a `resources/read` is a call of.
pub const READ_RESOURCE: &str = "resources.read";
/// The tool a `prompts/get` is a call of.
pub const GET_PROMPT: &str = "prompts.get";

/// What a call through the gateway's pipeline forwards upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::agents::mcp) enum Request {
    Tool,
    ReadResource,
    GetPrompt,
}

impl Request {
    /// The request a reserved tool name stands for; `None` for a server's own tool.
    pub fn reserved(name: &str) -> Option<Request> {
        match name {
            READ_RESOURCE => Some(Request::ReadResource),
            GET_PROMPT => Some(Request::GetPrompt),
            _ => None,
        }
    }

    fn method(self) -> &'static str {
        match self {
            Request::Tool => "tools/call",
            Request::ReadResource => "resources/read",
            Request::GetPrompt => "prompts/get",
        }
    }

    /// Sends the server the decided arguments; its answer as JSON.
    pub async fn forward(self, upstream: &Upstream, arguments: Value) -> Result<Value, String> {
        let gone = |e: rmcp::ServiceError| match e {
            rmcp::ServiceError::McpError(error) => error.message.into_owned(),
            other => format!("the MCP server {:?} failed: {other}", upstream.name),
        };
        let unrelayed = || {
            format!(
                "the MCP server {:?} asked for input, which the gateway does not relay",
                upstream.name
            )
        };
        match self {
            Request::Tool => Err("not a request of its own".into()),
            Request::ReadResource => {
                let params = serde_json::from_value(arguments).map_err(|e| e.to_string())?;
                match upstream.peer().read_resource_once(params).await.map_err(gone)? {
                    rmcp::model::ReadResourceResponse::Complete(result) => {
                        serde_json::to_value(result).map_err(|e| e.to_string())
                    }
                    _ => Err(unrelayed()),
                }
            }
            Request::GetPrompt => {
                let params = serde_json::from_value(arguments).map_err(|e| e.to_string())?;
                match upstream.peer().get_prompt_once(params).await.map_err(gone)? {
                    rmcp::model::GetPromptResponse::Complete(result) => {
                        serde_json::to_value(result).map_err(|e| e.to_string())
                    }
                    _ => Err(unrelayed()),
                }
            }
        }
    }
}

/// The client's answer from an outcome: the server's result, a post-execute
/// replacement as text (`replaced` gives it the result's shape), or an
/// error naming the failure and who decided it.
fn answer<T: serde::de::DeserializeOwned>(
    outcome: &Value,
    replaced: impl FnOnce(String) -> Value,
) -> Result<T, McpError> {
    let value = outcome["value"].clone();
    let Some(code) = outcome["code"].as_str() else {
        let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
        return serde_json::from_value(value)
            .or_else(|_| serde_json::from_value(replaced(text)))
            .map_err(|e| McpError::internal_error(format!("a result the client cannot read: {e}"), None));
    };
    let decided_by = outcome["decided_by"].as_str().unwrap_or("pipeline");
    let message = value["message"]
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    Err(McpError::invalid_request(
        format!("{message} (Tether: {code}, decided by {decided_by})"),
        None,
    ))
}

impl Gateway {
    /// The console's registrations of the reserved tools of one server:
    /// those of the requests it serves.
    pub(in crate::agents::mcp) fn request_registrations(&self, server: usize) -> Vec<Value> {
        let Some(upstream) = self.upstreams().ok().and_then(|u| u.get(server)) else {
            return Vec::new();
        };
        let scope = self.server_name(server);
        let mut registrations = Vec::new();
        if upstream.has(|c| c.resources.is_some()) {
            registrations.push(json!({
                "name": READ_RESOURCE,
                "description": "MCP resources/read: reads the resource at `uri` from this server.",
                "parameters": {"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]},
            }));
        }
        if upstream.has(|c| c.prompts.is_some()) {
            registrations.push(json!({
                "name": GET_PROMPT,
                "description": "MCP prompts/get: the prompt `name` of this server, filled with `arguments`.",
                "parameters": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
                }, "required": ["name"]},
            }));
        }
        for registration in &mut registrations {
            let method = Request::reserved(registration["name"].as_str().unwrap_or_default()).map(Request::method);
            registration["concurrency"] = json!("never");
            registration["metadata"] = json!({"mcp": {"server": scope, "request": method}});
            registration["scope"] = json!(scope);
        }
        registrations
    }

    /// The outcome of a `resources/read` of `uri` from `server`, through the pipeline.
    pub(in crate::agents::mcp) async fn read(&self, server: usize, uri: &str, cancel: &CancellationToken) -> Value {
        let arguments = json!({"uri": uri});
        self.run(
            server,
            Request::ReadResource,
            READ_RESOURCE,
            &arguments.to_string(),
            None,
            cancel,
            None,
        )
        .await
        .0
    }

    /// The client's answer to a `resources/read` of `uri` from its outcome.
    pub(in crate::agents::mcp) fn read_answer(outcome: &Value, uri: &str) -> Result<ReadResourceResult, McpError> {
        answer(outcome, |text| json!({"contents": [{"uri": uri, "text": text}]}))
    }

    /// A `prompts/get` of `name` with `arguments` from `server`, through the pipeline.
    pub(in crate::agents::mcp) async fn prompt(
        &self,
        server: usize,
        name: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        cancel: &CancellationToken,
    ) -> Result<GetPromptResult, McpError> {
        let mut call = json!({"name": name});
        if let Some(arguments) = arguments {
            call["arguments"] = Value::Object(arguments.clone());
        }
        let outcome = self
            .run(
                server,
                Request::GetPrompt,
                GET_PROMPT,
                &call.to_string(),
                None,
                cancel,
                None,
            )
            .await
            .0;
        answer(
            &outcome,
            |text| json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}),
        )
    }
}
