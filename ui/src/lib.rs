//! The Tether console as a library: everything the `tether` binary runs, so
//! tests can drive it without a process.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod app;
pub mod approval;
pub mod check_files;
pub mod cli;
pub mod console;
pub mod headless;
pub mod hook;
pub mod inputs;
pub mod journal_file;
pub mod keys;
pub mod link;
pub mod observer;
pub mod policy;
pub mod provenance;
pub mod replay;
pub mod sanitize;
pub mod scenario;
pub mod serve;
pub mod source;
pub mod tui;
pub mod view;
