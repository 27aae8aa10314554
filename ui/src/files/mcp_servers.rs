//! The upstream servers of `tether mcp serve --config FILE`: Claude Code's
//! `.mcp.json` shape (`{"mcpServers": {"<name>": {"command", "args", "env",
//! "cwd"}}}` for a server on stdio, `{"url", "headers"}` for one over
//! Streamable HTTP), every error with its file, line and column.

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

/// Strict, so that an entry with a field of the wrong name is left out of
/// the checks after the shape (its shape error says all there is to say).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntrySpec {
    #[serde(default, rename = "type")]
    kind: Option<String>,
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
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// One upstream server of the gateway.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServer {
    /// Its name: its scope in the console, its pin file, its tools' prefix.
    pub name: String,
    /// How the gateway reaches it.
    pub transport: Transport,
}

/// How the gateway reaches an upstream server.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process on stdio.
    Stdio {
        /// The program and its arguments.
        command: Vec<String>,
        /// Set in the child's environment, on top of the gateway's own.
        env: BTreeMap<String, String>,
        /// The child's working directory (relative to the config file's).
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// `http://` or `https://`, environment references expanded.
        url: String,
        /// Sent with every request (a bearer token, say), references expanded.
        headers: BTreeMap<String, String>,
    },
}

/// Header values are often secrets: only their names are shown.
impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio { command, env, cwd } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            Self::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl McpServer {
    /// A server started as `command` on stdio, in the gateway's environment.
    pub fn stdio(name: String, command: Vec<String>) -> Self {
        Self {
            name,
            transport: Transport::Stdio {
                command,
                env: BTreeMap::new(),
                cwd: None,
            },
        }
    }
}

/// Headers the HTTP transport sets itself; a config may not override them.
const RESERVED_HEADERS: [&str; 4] = ["accept", "mcp-session-id", "mcp-protocol-version", "last-event-id"];

/// Whether `name` can name a server: letters, digits, `-` and `_`, and no
/// `__` (the separator of `<server>__<tool>`, which must stay unambiguous).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
}

/// `${VAR}` and `${VAR:-default}` in `text` replaced from `lookup` (the
/// syntax of Claude Code's `.mcp.json`); `$` anywhere else stays as it is.
///
/// # Errors
/// A variable that is not set and has no default, or a `${` left open.
pub fn expand(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("\"${{\" without a closing \"}}\" in {text:?}"))?;
        let reference = &after[..end];
        let (name, default) = match reference.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (reference, None),
        };
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "\"${{{reference}}}\": a variable name is letters, digits and '_'"
            ));
        }
        match (lookup(name).filter(|v| !v.is_empty()), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                // Said so that `tether check` is understood too: the text is
                // right, the environment it runs in is not.
                return Err(format!(
                    "the environment variable {name} is not set here: the reference is well-formed, but `tether mcp serve` refuses to start without a value (set {name}, or write ${{{name}:-default}} for a default)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Reads and checks a server list; every problem is returned.
pub fn load(path: &Path) -> Result<Vec<McpServer>, Vec<FileError>> {
    let document = Document::read(path)?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    from_document(&document, &base, |name| std::env::var(name).ok())
}

/// Checks a parsed server list; relative `cwd`s are taken from `base`,
/// `${VAR}` in URLs and header values from `env`.
pub fn from_document(
    document: &Document,
    base: &Path,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<McpServer>, Vec<FileError>> {
    match FORMAT_CHECK.read::<FileSpec>(document) {
        Ok(spec) => servers(document, spec.mcp_servers, base, &env),
        Err(mut errors) => {
            // Every entry that has its shape is still checked, so one run
            // reports every error of the file (as a policy's rules are).
            let entries: BTreeMap<String, EntrySpec> = document
                .value
                .get("mcpServers")
                .and_then(serde_json::Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(name, entry)| Some((name.clone(), serde_json::from_value(entry.clone()).ok()?)))
                .collect();
            errors.extend(servers(document, entries, base, &env).err().unwrap_or_default());
            errors.sort_by_key(|e| (e.line, e.column));
            errors.dedup();
            Err(errors)
        }
    }
}

/// The servers of well-shaped entries, or every error found in them.
fn servers(
    document: &Document,
    entries: BTreeMap<String, EntrySpec>,
    base: &Path,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<McpServer>, Vec<FileError>> {
    let mut errors = Vec::new();
    let mut servers = Vec::new();
    for (name, entry) in entries {
        let at = format!("/mcpServers/{}", escape_segment(&name));
        if !valid_name(&name) {
            errors.push(document.error_at(
                &at,
                format!("server name {name:?}: use letters, digits, '-' and '_', and no \"__\" (it separates server and tool)"),
            ));
            continue;
        }
        let transport = match (entry.command, entry.url) {
            (Some(_), Some(_)) => Err(document.error_at(
                &format!("{at}/url"),
                "a server has a \"command\" (stdio) or a \"url\" (Streamable HTTP), not both",
            )),
            (None, None) => Err(document.error_at(
                &at,
                "a server needs a \"command\" (stdio) or a \"url\" (Streamable HTTP)",
            )),
            (Some(command), None) => match entry.kind.as_deref() {
                None | Some("stdio") if entry.headers.is_empty() => Ok(Transport::Stdio {
                    command: std::iter::once(command).chain(entry.args).collect(),
                    env: entry.env,
                    cwd: entry.cwd.map(|cwd| base.join(cwd)),
                }),
                None | Some("stdio") => Err(document.error_at(
                    &format!("{at}/headers"),
                    "\"headers\" belong to a \"url\" server; a stdio server takes \"env\"",
                )),
                Some(_) => Err(document.error_at(&format!("{at}/type"), "a server with a \"command\" is \"stdio\"")),
            },
            (None, Some(url)) => {
                let stdio_only = [
                    ("args", !entry.args.is_empty()),
                    ("env", !entry.env.is_empty()),
                    ("cwd", entry.cwd.is_some()),
                ];
                match (entry.kind.as_deref(), stdio_only.iter().find(|(_, set)| *set)) {
                    (_, Some((field, _))) => Err(document.error_at(
                        &format!("{at}/{field}"),
                        format!("{field:?} belongs to a \"command\" server; a \"url\" server takes \"headers\""),
                    )),
                    (Some("sse"), _) => Err(document.error_at(
                        &format!("{at}/type"),
                        "the legacy HTTP+SSE transport is not supported; use the server's Streamable HTTP endpoint (\"type\": \"http\")",
                    )),
                    (Some("stdio"), _) => {
                        Err(document.error_at(&format!("{at}/type"), "a \"url\" server is \"http\" (Streamable HTTP)"))
                    }
                    _ => http(document, &at, &url, entry.headers, env),
                }
            }
        };
        match transport {
            Ok(transport) => servers.push(McpServer { name, transport }),
            Err(error) => errors.push(error),
        }
    }
    errors.sort_by_key(|e| (e.line, e.column));
    if errors.is_empty() { Ok(servers) } else { Err(errors) }
}

/// A Streamable HTTP server's URL and headers, expanded and checked.
fn http(
    document: &Document,
    at: &str,
    url: &str,
    headers: BTreeMap<String, String>,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Transport, FileError> {
    let url_at = format!("{at}/url");
    let expanded = expand(url, env).map_err(|e| document.error_at(&url_at, e))?;
    let parsed = url::Url::parse(&expanded).map_err(|e| document.error_at(&url_at, format!("not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none_or(str::is_empty) {
        return Err(document.error_at(
            &url_at,
            format!("expected an http:// or https:// URL with a host, not {url:?}"),
        ));
    }
    let mut checked = BTreeMap::new();
    for (name, value) in headers {
        let header_at = format!("{at}/headers/{}", escape_segment(&name));
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(document.error_at(&header_at, format!("{name:?} is not an HTTP header name")));
        }
        if RESERVED_HEADERS.iter().any(|r| name.eq_ignore_ascii_case(r)) {
            return Err(document.error_at(
                &header_at,
                format!("{name:?} is set by the Streamable HTTP transport itself"),
            ));
        }
        let value = expand(&value, env).map_err(|e| document.error_at(&header_at, e))?;
        if http::HeaderValue::from_str(&value).is_err() {
            return Err(document.error_at(
                &header_at,
                format!("the value of {name:?} is not a valid header value (control characters or non-ASCII)"),
            ));
        }
        checked.insert(name, value);
    }
    Ok(Transport::Http {
        url: expanded,
        headers: checked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn references_are_expanded_with_defaults_and_unset_ones_refused() {
        assert_eq!(expand("Bearer ${TOKEN}", env).unwrap(), "Bearer s3cret");
        assert_eq!(expand("${HOST:-127.0.0.1}:${TOKEN}", env).unwrap(), "127.0.0.1:s3cret");
        assert_eq!(expand("cost $5", env).unwrap(), "cost $5");
        assert!(expand("${MISSING}", env).unwrap_err().contains("MISSING is not set"));
        assert!(expand("${TOKEN", env).unwrap_err().contains("without a closing"));
        assert!(expand("${A B}", env).unwrap_err().contains("variable name"));
    }

    fn load_text(text: &str) -> Result<Vec<McpServer>, Vec<FileError>> {
        let document = Document::parse("servers.json".into(), text.into()).unwrap();
        from_document(&document, Path::new("/base"), env)
    }

    #[test]
    fn a_url_server_has_its_headers_expanded() {
        let servers =
            load_text(r#"{"mcpServers": {"web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}"#)
                .unwrap();
        let Transport::Http { url, headers } = &servers[0].transport else {
            panic!("{servers:?}")
        };
        assert_eq!(url, "https://example.com/mcp");
        assert_eq!(headers["Authorization"], "Bearer s3cret");
        assert!(!format!("{servers:?}").contains("s3cret"), "secrets stay out of Debug");
    }

    #[test]
    fn bad_urls_and_headers_are_reported_where_they_stand() {
        let text = "{\"mcpServers\": {\n  \"a\": {\"url\": \"ftp://x/\"},\n  \"b\": {\"url\": \"http://x/\", \"headers\": {\"Bad Name\": \"v\"}},\n  \"c\": {\"url\": \"http://x/\", \"headers\": {\"X-Key\": \"${NOPE}\"}},\n  \"d\": {\"url\": \"http://x/\", \"headers\": {\"Mcp-Session-Id\": \"1\"}},\n  \"e\": {\"url\": \"not a url\"},\n  \"f\": {\"url\": \"http://x/\", \"command\": \"y\"}\n}}";
        let errors = load_text(text).unwrap_err();
        let shown: Vec<String> = errors
            .iter()
            .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
            .collect();
        let expected = [
            "2:9: expected an http:// or https:// URL",
            "3:41: \"Bad Name\" is not an HTTP header name",
            "4:41: the environment variable NOPE is not set",
            "5:41: \"Mcp-Session-Id\" is set by the Streamable HTTP transport",
            "6:9: not a URL",
            "7:9: a server has a \"command\" (stdio) or a \"url\"",
        ];
        assert_eq!(shown.len(), expected.len(), "{shown:#?}");
        for (shown, expected) in shown.iter().zip(expected) {
            assert!(
                shown.starts_with(expected),
                "{shown:?} does not start with {expected:?}"
            );
        }
    }
}
