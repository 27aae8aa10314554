//! A rule's `match` as a policy file writes it, before it is compiled:
//! the conditions on the call, a value predicate, and directories.

use serde::Deserialize;
use serde_json::Value;

/// A rule's `match`, besides `tool`, `agent`, `agent_type` and `args`, which are read one by one
/// so that each is checked even when the other has the wrong shape.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct MatchSpec {
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub annotations: serde_json::Map<String, Value>,
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// How a tool's arguments become the command it runs
    /// (`"claude-code-grep"`), for `command` and an ask's reason.
    #[serde(default)]
    pub as_command: Option<String>,
    #[serde(default)]
    pub command_except: Option<Vec<String>>,
    #[serde(default)]
    pub command_paths_within: Option<Roots>,
    /// Directories the call's working directory must be (or be inside):
    /// `~/…` or absolute.
    #[serde(default)]
    pub cwd_within: Option<Roots>,
}

/// A predicate on a JSON value: at `pointer`, `exists`, `equals`, `regex`,
/// or (a path) `within` / `outside` directories.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ValueMatchSpec {
    #[serde(default)]
    pub pointer: Option<String>,
    #[serde(default)]
    pub exists: Option<bool>,
    #[serde(default, deserialize_with = "crate::files::source::present")]
    pub equals: Option<Value>,
    #[serde(default)]
    pub regex: Option<String>,
    #[serde(default)]
    pub within: Option<Roots>,
    #[serde(default)]
    pub outside: Option<Roots>,
    #[serde(default)]
    pub secret: Option<bool>,
}

/// Directories as a rule names them: `"cwd"`, `"~/notes"`, `"/srv"`, one or
/// a list.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Roots {
    One(String),
    Many(Vec<String>),
}

impl Roots {
    pub fn into_vec(self) -> Vec<String> {
        match self {
            Roots::One(root) => vec![root],
            Roots::Many(roots) => roots,
        }
    }
}
