//! Where the client works: an MCP client that declares `roots` names the
//! directories it works in, and its first `file://` root is the working
//! directory path rules judge its calls from (the gateway's own directory
//! otherwise, given once in its console session). Asked on the first call
//! and again after `notifications/roots/list_changed`.

#![allow(deprecated)] // roots are deprecated upstream (SEP-2577), still the only word a client gives of where it works

use std::time::Duration;

use rmcp::model::Root;

use super::Gateway;
use super::lock;

/// How long a call waits for the client's `roots/list` answer before it is
/// judged from the gateway's own directory.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

/// The client's roots as last asked: `None` until asked (or after a change),
/// `Some(None)` for a client without roots (or whose answer named none).
pub(super) type KnownRoot = tokio::sync::Mutex<Option<Option<String>>>;

impl Gateway {
    /// The client's working directory, asking it once; `None` when it
    /// declares no roots, names no `file://` one, or does not answer.
    pub(super) async fn client_cwd(&self) -> Option<String> {
        let mut known = self.0.root.lock().await;
        if let Some(root) = known.as_ref() {
            return root.clone();
        }
        let peer = lock(&self.0.client).clone()?;
        if peer.peer_info().is_none_or(|info| info.capabilities.roots.is_none()) {
            *known = Some(None);
            return None;
        }
        // Boxed: asked once, it would otherwise make every call's future
        // (copied whole at each spawn) as large as this wait.
        let root = match Box::pin(tokio::time::timeout(ROOTS_WAIT, peer.list_roots())).await {
            Ok(Ok(listed)) => first_directory(&listed.roots),
            Ok(Err(error)) => {
                tracing::warn!(%error, "the client's roots/list failed; its calls are judged from the gateway's directory");
                None
            }
            Err(_) => {
                tracing::warn!(
                    "the client did not answer roots/list in {ROOTS_WAIT:?}; its calls are judged from the gateway's directory"
                );
                None
            }
        };
        *known = Some(root.clone());
        root
    }

    /// The client's roots changed: the next call asks again.
    pub(in crate::agents::mcp) async fn roots_changed(&self) {
        *self.0.root.lock().await = None;
    }
}

/// The path of the first root that is a local directory (`file://…`,
/// percent-decoded).
fn first_directory(roots: &[Root]) -> Option<String> {
    roots.iter().find_map(|root| {
        let url = url::Url::parse(&root.uri).ok().filter(|u| u.scheme() == "file")?;
        Some(url.to_file_path().ok()?.display().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(uri: &str) -> Root {
        serde_json::from_value(serde_json::json!({ "uri": uri })).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_first_file_root_is_the_directory_percent_decoded() {
        let roots = [
            root("https://example.com/x"),
            root("file:///home/dev/my%20project"),
            root("file:///srv"),
        ];
        assert_eq!(first_directory(&roots).as_deref(), Some("/home/dev/my project"));
    }

    #[test]
    fn no_file_root_names_no_directory() {
        assert_eq!(
            first_directory(&[root("https://example.com/x"), root("not a url")]),
            None
        );
        assert_eq!(first_directory(&[]), None);
    }
}
