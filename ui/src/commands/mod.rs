//! One module per subcommand of `tether`. A command parses its arguments,
//! builds a session and runs it; it may use every layer below it, but never
//! another command.

pub mod check;
pub mod replay;
pub mod serve;
