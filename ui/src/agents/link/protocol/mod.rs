//! JSON-RPC 2.0 over newline-delimited JSON: frames, error codes and the
//! parameters of each method (see docs/protocol.md). The frames written per
//! call are in `write`, each method's parameters in `params`, the hot frames
//! read without a tree in `hot`.

mod hot;
mod params;
mod write;

use serde_json::{Value, json};

pub use self::hot::{HotFrame, InvokeResult};
pub use self::params::{
    APPROVALS_NEEDED, CallParams, CancelBatch, ExecuteBatch, HookToolUse, OpenSession, RegisterTool, UnregisterTool,
};
pub use self::write::{batch_response, call_notification, invoke, json, result_notification};

/// The longest line the console reads; a longer one is refused and skipped.
pub const MAX_LINE: usize = 1 << 20;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
/// An application error: no session, a registration refused, …
pub const APPLICATION_ERROR: i64 = -32000;

pub fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error(id: &Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}
