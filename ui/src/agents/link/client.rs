//! `tether send`: a batch sent to a running console exactly as an agent
//! would send it, the tool bodies answered from the batch file's scripts.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::UnixStream;
use tokio_util::codec::{Framed, LinesCodec};

use super::protocol::{self, MAX_LINE};
use crate::files::scenario::{Body, Concurrency};

/// A batch file: who the agent is, its tools, and one batch of calls.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchFile {
    pub session: Value,
    #[serde(default)]
    pub tools: Vec<ToolFile>,
    #[serde(default)]
    pub max_parallelism: Option<usize>,
    #[serde(deserialize_with = "at_least_one_call")]
    pub calls: Vec<CallFile>,
}

/// A batch with no call would run nothing and report success: refused.
fn at_least_one_call<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<CallFile>, D::Error> {
    let calls = <Vec<CallFile> as Deserialize>::deserialize(d)?;
    if calls.is_empty() {
        return Err(serde::de::Error::custom("a batch needs at least one call"));
    }
    Ok(calls)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub parameters: Option<Value>,
    #[serde(default)]
    pub concurrency: Option<Concurrency>,
    pub body: Body,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallFile {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    /// The subagent that makes the call, sent with it (`batch/execute`).
    #[serde(default)]
    pub agent_type: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// Why a batch was not run to the end.
#[derive(Debug)]
pub enum SendError {
    /// The batch file cannot be read or is not a batch file, or the
    /// console refused it as malformed.
    BadBatch(anyhow::Error),
    /// No console could be reached; the reason in the user's words.
    NoConsole(String),
    /// The console refused a request or went away before the batch finished.
    Console(anyhow::Error),
}

/// What a batch came back with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// Outcomes printed.
    pub calls: usize,
    /// Those that did not succeed (a code other than success).
    pub failed: usize,
}

/// Sends the batch and prints one JSON line per outcome.
///
/// # Errors
/// See [`SendError`].
pub async fn send(socket: &Path, batch: &Path, out: &mut dyn Write) -> Result<Sent, SendError> {
    let text = std::fs::read_to_string(batch)
        .with_context(|| format!("reading {}", batch.display()))
        .map_err(SendError::BadBatch)?;
    let file: BatchFile = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a batch file", batch.display()))
        .map_err(SendError::BadBatch)?;
    let stream = super::socket::connect(socket)
        .await
        .map_err(|why| SendError::NoConsole(why.to_string()))?;
    exchange(stream, &file, out)
        .await
        .map_err(|error| match error.downcast::<Malformed>() {
            Ok(malformed) => SendError::BadBatch(anyhow::anyhow!(malformed.0)),
            Err(error) => SendError::Console(error),
        })
}

/// The console refused a request of the batch as malformed (invalid
/// params or request: a call id given twice, a schema that is not one):
/// the batch is bad input, not a console that failed.
#[derive(Debug)]
struct Malformed(String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Malformed {}

async fn exchange(stream: UnixStream, file: &BatchFile, out: &mut dyn Write) -> anyhow::Result<Sent> {
    let mut lines = Framed::new(stream, LinesCodec::new_with_max_length(MAX_LINE));
    let bodies: HashMap<String, Body> = file.tools.iter().map(|t| (t.name.clone(), t.body.clone())).collect();
    let mut requests = vec![protocol::request(1, "session/open", file.session.clone())];
    for (i, tool) in file.tools.iter().enumerate() {
        let mut params = json!({"name": tool.name, "description": tool.description});
        if let Some(parameters) = &tool.parameters {
            params["parameters"] = parameters.clone();
        }
        params["concurrency"] = match &tool.concurrency {
            Some(Concurrency::Named(named)) => json!(format!("{named:?}").to_lowercase()),
            Some(Concurrency::When { pointer, equals }) => json!({"pointer": pointer, "equals": equals}),
            None => json!("never"),
        };
        requests.push(protocol::request(10 + i as u64, "tools/register", params));
    }
    let calls: Vec<Value> = file
        .calls
        .iter()
        .map(|c| {
            let arguments = match &c.arguments {
                Value::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            let mut call = json!({"id": c.id, "name": c.name, "arguments": arguments});
            for (key, value) in [("agent_type", &c.agent_type), ("agent_id", &c.agent_id)] {
                if let Some(value) = value {
                    call[key] = json!(value);
                }
            }
            call
        })
        .collect();
    let execute_id = 1_000_000;
    requests.push(protocol::request(
        execute_id,
        "batch/execute",
        json!({"calls": calls, "max_parallelism": file.max_parallelism}),
    ));
    for request in requests {
        lines.send(request.to_string()).await?;
    }

    while let Some(line) = lines.next().await {
        let frame: Value = serde_json::from_str(&line?)?;
        if let Some(error) = frame.get("error") {
            // The console's words, as written (the code is for programs).
            let said = match error.get("message").and_then(Value::as_str) {
                Some(message) => format!("the console refused a request: {message}"),
                None => format!("the console refused a request: {error}"),
            };
            let code = error.get("code").and_then(Value::as_i64);
            if matches!(code, Some(protocol::INVALID_PARAMS | protocol::INVALID_REQUEST)) {
                return Err(Malformed(said).into());
            }
            bail!("{said}")
        }
        match frame.get("method").and_then(Value::as_str) {
            Some("tool/invoke") => {
                let id = frame["id"].clone();
                let params = &frame["params"];
                let reply = match bodies.get(params["name"].as_str().unwrap_or_default()) {
                    Some(body) => run_body(body, params["arguments"].clone()).await,
                    None => Err("no such tool in the batch file".to_owned()),
                };
                let frame = match reply {
                    Ok(value) => protocol::response(&id, json!({"value": value})),
                    Err(message) => protocol::error(&id, protocol::APPLICATION_ERROR, message),
                };
                lines.send(frame.to_string()).await?;
            }
            Some(_) => {} // tool/call, tool/result, tools/change notifications
            None if frame["id"] == json!(execute_id) => {
                let mut sent = Sent { calls: 0, failed: 0 };
                for outcome in frame["result"]["outcomes"].as_array().into_iter().flatten() {
                    writeln!(out, "{outcome}")?;
                    sent.calls += 1;
                    if !outcome["code"].is_null() {
                        sent.failed += 1;
                    }
                }
                return Ok(sent);
            }
            None => {}
        }
    }
    bail!("the console closed the connection before the batch finished")
}

fn run_body(body: &Body, arguments: Value) -> futures::future::BoxFuture<'_, Result<Value, String>> {
    Box::pin(async move {
        match body {
            Body::Return { value } => Ok(value.clone()),
            Body::Echo { .. } => Ok(arguments),
            Body::Fail { fail } => Err(fail.clone()),
            Body::Panic { panic } => Err(format!("the agent's tool crashed: {panic}")),
            Body::Sleep { sleep_ms, then } => {
                tokio::time::sleep(Duration::from_millis(*sleep_ms)).await;
                run_body(then, arguments).await
            }
            Body::WaitForCancel { .. } | Body::Recorded(_) => std::future::pending().await,
        }
    })
}
