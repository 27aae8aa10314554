//! What a running console is made of, whatever drives it: the policy
//! installed as listeners, the approval answerer, the observer that reports
//! the pipeline's stages, the decision trail, the headless replay runner and
//! the journal file. Depends on `files`; never on `tui`, `agents` or `commands`.

pub mod always;
pub mod approval;
pub mod editing;
pub mod events;
pub mod journal;
pub mod notify;
pub mod observer;
pub mod policy;
pub mod process_group;
pub mod progress;
pub mod provenance;
pub mod replay;
pub mod review;
pub mod screens;
pub mod signals;
pub mod trails;
