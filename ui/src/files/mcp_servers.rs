//! The upstream servers of `tether mcp serve --config FILE`: Claude Code's
//! `.mcp.json` shape (`{"mcpServers": {"<name>": {"command", "args", "env",
//! "cwd"}}}`), every error with its file, line and column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde::Deserialize;

use crate::files::source::{Document, FileError, Format, escape_segment};

/// The format as JSON Schema.
pub const FORMAT: &str = include_str!("mcp_servers.schema.json");

static FORMAT_CHECK: LazyLock<Format> = LazyLock::new(|| Format::new(FORMAT, "MCP server list"));

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileSpec {
    mcp_servers: BTreeMap<String, EntrySpec>,
}

#[derive(Debug, Deserialize)]
struct EntrySpec {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    url: Option<String>,
}

/// One upstream server started as a child process on stdio.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StdioServer {
    /// Its name: its scope in the console, its pin file, its tools' prefix.
    pub name: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Set in the child's environment, on top of the gateway's own.
    pub env: BTreeMap<String, String>,
    /// The child's working directory (relative to the config file's).
    pub cwd: Option<PathBuf>,
}

/// Whether `name` can name a server: letters, digits, `-` and `_`, and no
/// `__` (the separator of `<server>__<tool>`, which must stay unambiguous).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
}

/// Reads and checks a server list; every problem is returned.
pub fn load(path: &Path) -> Result<Vec<StdioServer>, Vec<FileError>> {
    let document = Document::read(path)?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    from_document(&document, &base)
}

/// Checks a parsed server list; relative `cwd`s are taken from `base`.
pub fn from_document(document: &Document, base: &Path) -> Result<Vec<StdioServer>, Vec<FileError>> {
    let spec: FileSpec = FORMAT_CHECK.read(document)?;
    let mut errors = Vec::new();
    let mut servers = Vec::new();
    for (name, entry) in spec.mcp_servers {
        let at = format!("/mcpServers/{}", escape_segment(&name));
        if !valid_name(&name) {
            errors.push(document.error_at(
                &at,
                format!("server name {name:?}: use letters, digits, '-' and '_', and no \"__\" (it separates server and tool)"),
            ));
            continue;
        }
        if entry.url.is_some() {
            errors.push(document.error_at(
                &format!("{at}/url"),
                "Streamable HTTP upstreams are not supported yet; run the server on stdio (\"command\")",
            ));
            continue;
        }
        let Some(command) = entry.command else {
            errors.push(document.error_at(&at, "a server needs a \"command\""));
            continue;
        };
        servers.push(StdioServer {
            name,
            command: std::iter::once(command).chain(entry.args).collect(),
            env: entry.env,
            cwd: entry.cwd.map(|cwd| base.join(cwd)),
        });
    }
    errors.sort_by_key(|e| (e.line, e.column));
    if errors.is_empty() { Ok(servers) } else { Err(errors) }
}
