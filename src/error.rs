//! Error types of the engine. Failures that belong to a call are outcomes with
//! codes ([`crate::ToolFailureCode`]), never these.

use thiserror::Error;

/// A boxed error, as returned by tool bodies, listeners, guards, answerers and sinks.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a tool could not be registered (SPEC §2). Nothing is registered when
/// this is returned.
#[derive(Debug, Error)]
pub enum RegistrationError {
    /// The name does not match `^[A-Za-z0-9_.-]{1,64}$`.
    #[error("invalid tool name {name:?}: expected 1 to 64 characters from A-Z, a-z, 0-9, '_', '.', '-'")]
    InvalidName {
        /// The rejected name.
        name: String,
    },
    /// The parameter schema is not a JSON object.
    #[error("parameter schema of tool {name:?} must be a JSON object, found {found}")]
    SchemaNotObject {
        /// The tool's name.
        name: String,
        /// The JSON type that was found instead.
        found: &'static str,
    },
    /// The parameter schema does not compile.
    #[error("parameter schema of tool {name:?} does not compile: {message}")]
    InvalidSchema {
        /// The tool's name.
        name: String,
        /// What the schema compiler said.
        message: String,
    },
}

/// Why a scope could not be built (SPEC §3).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ScopeError {
    /// A child tried to set an owner different from one an ancestor carries.
    #[error("scope owner {requested:?} conflicts with the owner {inherited:?} inherited from an ancestor")]
    OwnerConflict {
        /// The owner the ancestor chain already carries.
        inherited: String,
        /// The owner the child asked for.
        requested: String,
    },
}

/// The JSON type name of a value, for error messages.
pub(crate) fn json_type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
