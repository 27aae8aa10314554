//! The file formats a user writes or keeps: scenarios, policies, journals
//! read back, and `source` (JSON with file:line:column errors). Pure parsing
//! and checking: nothing here runs a pipeline or touches the terminal.

pub mod batch;
pub mod inputs;
pub mod journal_set;
pub mod mcp_servers;
pub mod policy;
pub mod scenario;
pub mod source;
