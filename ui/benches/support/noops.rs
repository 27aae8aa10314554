//! The batch the console benches run: `calls` calls of a no-op tool, at
//! most `max_parallelism` at once.

use serde_json::json;
use tether_console::files::scenario::Scenario;
use tether_console::files::source::Document;

pub fn noop_batch(calls: usize, max_parallelism: usize) -> Scenario {
    let calls: Vec<_> = (0..calls)
        .map(|i| json!({"id": format!("c{i}"), "name": "noop", "arguments": "{}"}))
        .collect();
    let text = json!({
        "tools": [{"name": "noop", "concurrency": "always", "body": {"return": null}}],
        "batches": [{"max_parallelism": max_parallelism, "calls": calls}]
    })
    .to_string();
    Scenario::from_document(&Document::parse("bench.json".into(), text).unwrap()).unwrap()
}
