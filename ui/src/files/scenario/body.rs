//! Scripted tool bodies.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tether_tools::{BoxError, ToolBody, ToolContext};

/// What a scripted tool does when it runs.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Body {
    Return {
        #[serde(rename = "return")]
        value: Value,
    },
    Echo {
        echo: bool,
    },
    Fail {
        fail: String,
    },
    Panic {
        panic: String,
    },
    Sleep {
        sleep_ms: u64,
        then: Box<Body>,
    },
    WaitForCancel {
        wait_for_cancel: bool,
    },
    /// Not in files: a journal's recorded results, by batch and call id.
    #[serde(skip)]
    Recorded(super::RecordedMap),
}

/// A result a journal recorded for one call.
#[derive(Clone, Debug)]
pub enum Recorded {
    Value(Value),
    Failed(String),
    /// The body never ran in the recording (denied, unknown, cancelled…).
    NotRun,
}

impl Body {
    /// The engine body that runs this script.
    pub fn into_body(self) -> impl ToolBody {
        let script = Arc::new(self);
        move |args: Value, ctx: ToolContext| {
            let script = Arc::clone(&script);
            async move { run(&script, args, &ctx).await }
        }
    }
}

fn run<'a>(
    body: &'a Body,
    args: Value,
    ctx: &'a ToolContext,
) -> futures::future::BoxFuture<'a, Result<Value, BoxError>> {
    Box::pin(async move {
        match body {
            Body::Return { value } => Ok(value.clone()),
            Body::Echo { .. } => Ok(args),
            Body::Fail { fail } => Err(fail.clone().into()),
            Body::Panic { panic } => panic!("{panic}"),
            Body::Sleep { sleep_ms, then } => {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(*sleep_ms)) => run(then, args, ctx).await,
                    () = ctx.cancellation().cancelled() => Err("cancelled while sleeping".into()),
                }
            }
            Body::WaitForCancel { .. } => {
                ctx.cancellation().cancelled().await;
                Err("cancelled".into())
            }
            Body::Recorded(map) => {
                match journal_batch(ctx).and_then(|batch| map.get(&(batch, ctx.execution().call_id().to_owned()))) {
                    Some(Recorded::Value(value)) => Ok(value.clone()),
                    Some(Recorded::Failed(message)) => Err(message.clone().into()),
                    Some(Recorded::NotRun) | None => Ok(Value::Null),
                }
            }
        }
    })
}

/// The journal batch a replayed call came from (set by `CallSpec::to_call`).
fn journal_batch(ctx: &ToolContext) -> Option<usize> {
    let batch = ctx.execution().invocation_context()?.get("journal_batch")?.as_u64()?;
    usize::try_from(batch).ok()
}
