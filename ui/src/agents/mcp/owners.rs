//! Which upstream server owns a resource URI, with several servers: the
//! first that lists it, else the first whose template's prefix it has, else
//! the first server. Looking that up lists every server's resources, so the
//! answer is remembered until any server says its resource list changed
//! (cleared before the client hears of the change, so a read that follows
//! the notification reaches the new owner).

use std::sync::Arc;

use rmcp::ErrorData as McpError;

use super::gateway::{Gateway, lock};
use super::upstream::{MOST_OWNERS, Upstream};

/// Where a URI went: its server, and whether that was remembered.
pub(super) struct Owner<'a> {
    pub upstream: &'a Arc<Upstream>,
    /// Its place among the gateway's servers.
    pub index: usize,
    pub remembered: bool,
}

impl Gateway {
    /// The server that owns `uri`.
    pub(super) async fn owner(&self, uri: &str) -> Result<Owner<'_>, McpError> {
        let upstreams = self.upstreams()?;
        let owners = &self.0.owners.0;
        let generation = {
            let owners = lock(owners);
            if let Some((index, upstream)) = owners.1.get(uri).and_then(|i| Some((*i, upstreams.get(*i)?))) {
                return Ok(Owner {
                    upstream,
                    index,
                    remembered: true,
                });
            }
            owners.0
        };
        let Some(index) = self.look_up_owner(upstreams, uri).await else {
            let upstream = upstreams
                .first()
                .ok_or_else(|| McpError::internal_error("no upstream MCP server", None))?;
            return Ok(Owner {
                upstream,
                index: 0,
                remembered: false,
            });
        };
        let mut remembered = lock(owners);
        if remembered.0 == generation {
            if remembered.1.len() >= MOST_OWNERS {
                remembered.1.clear();
            }
            remembered.1.insert(uri.to_owned(), index);
        }
        Ok(Owner {
            upstream: &upstreams[index],
            index,
            remembered: false,
        })
    }

    /// A remembered owner answered with an error: the URI is looked up
    /// again next time (a server that never says its list changed).
    pub(super) fn forget_owner(&self, uri: &str) {
        lock(&self.0.owners.0).1.remove(uri);
    }

    async fn look_up_owner(&self, upstreams: &[Arc<Upstream>], uri: &str) -> Option<usize> {
        for (index, upstream) in upstreams.iter().enumerate() {
            if let Ok(resources) = upstream.peer().list_all_resources().await {
                if resources.iter().any(|r| r.uri == uri) {
                    return Some(index);
                }
            }
        }
        for (index, upstream) in upstreams.iter().enumerate() {
            if let Ok(templates) = upstream.peer().list_all_resource_templates().await {
                let prefix = |t: &str| t.split('{').next().unwrap_or(t).to_owned();
                if templates.iter().any(|t| uri.starts_with(&prefix(&t.uri_template))) {
                    return Some(index);
                }
            }
        }
        None
    }
}
