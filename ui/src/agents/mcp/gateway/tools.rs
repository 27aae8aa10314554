//! The gateway's tool list: each server's tools listed, checked against
//! their pins (a changed one held, shown to the client as approved), and
//! registered in the console and the embedded engine; re-listed when a
//! server says its tools changed.

use std::sync::Weak;

use rmcp::model::Tool;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::super::pins::{self, PinFile, Verdict};
use super::super::upstream::UpstreamEvent;
use super::{Gateway, Inner, lock};

/// A tool as its server defines it now, and as the client is shown it.
#[derive(Clone)]
pub(in crate::agents::mcp) struct Listed {
    pub server: usize,
    pub tool: Tool,
    pub shown: Tool,
    pub held: bool,
    /// Its definition was pinned before this session (or approved since):
    /// only then are its annotations worth anything.
    pub pinned: bool,
    /// When held: the definition that was approved (what `shown` shows).
    pub approved: Option<Value>,
}

impl Gateway {
    /// Annotations are claims: `readOnlyHint` makes a tool's calls parallel
    /// only when its definition is pinned and the gateway's policy trusts
    /// its server (`trust_annotations`).
    pub(in crate::agents::mcp) fn parallel(&self, listed: &Listed) -> bool {
        let server = self.server_name(listed.server);
        let trusted = (self.0.options.policy.as_ref()).is_some_and(|p| p.trust_annotations.iter().any(|s| s == server));
        let read_only = listed.shown.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
        trusted && read_only && listed.pinned && !listed.held
    }

    /// What policies can match on (`match.annotations`, and the implicit
    /// rules: a held tool is denied, an unpinned one asked); for a held
    /// tool, both definitions, so the console can show the human the diff
    /// and approve exactly the definition it showed (carried with its
    /// SHA-256 name).
    pub(in crate::agents::mcp) fn metadata(&self, listed: &Listed) -> Value {
        let mut mcp = json!({"server": self.server_name(listed.server), "pinned": listed.pinned, "held": listed.held});
        if let (true, Some(approved)) = (listed.held, &listed.approved) {
            let changed = pins::definition(&listed.tool);
            mcp["hash"] = json!(pins::hash(&changed));
            mcp["approved"] = approved.clone();
            mcp["changed"] = changed;
        }
        json!({"mcp": mcp, "annotations": listed.shown.annotations})
    }

    /// The console's registration of a listed tool: its server's own name,
    /// in its server's scope.
    pub(in crate::agents::mcp) fn registration(&self, listed: &Listed) -> Value {
        let tool = &listed.shown;
        json!({
            "name": listed.tool.name,
            "description": tool.description.as_deref().unwrap_or_default(),
            "parameters": tool.input_schema,
            "concurrency": if self.parallel(listed) { "always" } else { "never" },
            "metadata": self.metadata(listed),
            "scope": self.server_name(listed.server),
        })
    }

    /// Lists one server's tools (every page), checks each against its pin
    /// and brings the console and the embedded engine up to date.
    pub(in crate::agents::mcp) async fn sync_tools(&self, server: usize) -> anyhow::Result<()> {
        let upstream = self
            .upstreams()
            .map_err(|e| anyhow::anyhow!(e.message))?
            .get(server)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no server {server}"))?;
        let mut tools = upstream.peer().list_all_tools().await?;
        // A server's tool named like a request the policy decides would be
        // taken for it: it is not listed.
        tools.retain(|tool| {
            let reserved = super::Request::reserved(&tool.name).is_some();
            if reserved {
                tracing::warn!(tool = %tool.name, "a tool named like a request the gateway decides; not listed");
            }
            !reserved
        });
        let path = &self.0.options.servers[server].pins;
        let mut pins = PinFile::load(path)?;
        let listed: Vec<Listed> = tools
            .into_iter()
            .map(|tool| {
                let mut first_seen = lock(&self.0.first_seen);
                let mut shown = tool.clone();
                shown.name = self.shown_name(server, &tool.name).into();
                let verdict = pins.check(&tool.name, &pins::definition(&tool));
                // Pinned before this session: a pin this session wrote (an
                // earlier list of the same server) does not count.
                let key = (server, tool.name.to_string());
                if verdict == Verdict::New {
                    first_seen.insert(key.clone());
                }
                let pinned = verdict == Verdict::Same && !first_seen.contains(&key);
                let approved = match verdict {
                    Verdict::Changed { approved } => {
                        tracing::warn!(tool = %tool.name, "definition changed since approved; held");
                        shown = pins::approved_tool(&approved, &shown.name);
                        Some(approved)
                    }
                    Verdict::New | Verdict::Same => None,
                };
                Listed {
                    server,
                    tool,
                    shown,
                    held: approved.is_some(),
                    pinned,
                    approved,
                }
            })
            .collect();
        pins.save(path)?;
        let (removed, changed): (Vec<String>, Vec<Listed>) = {
            let mut current = lock(&self.0.tools);
            let before: Vec<&Listed> = current.iter().filter(|old| old.server == server).collect();
            let removed = before
                .iter()
                .filter(|old| !listed.iter().any(|l| l.tool.name == old.tool.name))
                .map(|old| old.tool.name.to_string())
                .collect();
            // A tool listed again as it was is left registered: re-registering
            // it would report it disposed and registered on every re-list.
            let changed = listed
                .iter()
                .filter(|l| {
                    !before
                        .iter()
                        .any(|old| old.tool.name == l.tool.name && self.registration(old) == self.registration(l))
                })
                .cloned()
                .collect();
            current.retain(|old| old.server != server);
            current.extend(listed.iter().cloned());
            // Servers in config order, whichever re-listed last.
            current.sort_by_key(|l| l.server);
            (removed, changed)
        };
        self.publish(server, &removed, &changed).await;
        Ok(())
    }

    /// Brings the console and the embedded engine up to date with one
    /// server's tools: `removed` unregistered, `listed` registered anew.
    pub(in crate::agents::mcp) async fn publish(&self, server: usize, removed: &[String], listed: &[Listed]) {
        let console = self.0.console.lock().await.clone().filter(|l| !l.closed.is_cancelled());
        let scope = self.server_name(server);
        if let Some(link) = console {
            for name in removed {
                let _ = link
                    .request("tools/unregister", json!({"name": name, "scope": scope}))
                    .await;
            }
            for l in listed {
                if let Err(error) = link.request("tools/register", self.registration(l)).await {
                    tracing::warn!(%error, tool = %l.tool.name, "the console refused a tool");
                }
            }
        }
        if let Some(embedded) = self.0.embedded.get().and_then(|e| e.get(server)) {
            for name in removed {
                embedded.unregister(name);
            }
            for l in listed {
                let description = l.shown.description.as_deref().unwrap_or_default();
                embedded.register(
                    &l.tool.name,
                    description,
                    Value::Object((*l.shown.input_schema).clone()),
                    self.metadata(l),
                    self.parallel(l),
                );
            }
        }
    }

    /// The tools as the client is shown them.
    pub(in crate::agents::mcp) fn shown_tools(&self) -> Vec<Tool> {
        lock(&self.0.tools).iter().map(|l| l.shown.clone()).collect()
    }

    /// Holds the gateway weakly: a gateway whose client session ended (over
    /// HTTP, while the process goes on) is dropped with its upstreams.
    pub(in crate::agents::mcp) async fn watch_upstream(
        gateway: Weak<Inner>,
        server: usize,
        mut events: mpsc::UnboundedReceiver<UpstreamEvent>,
    ) {
        while let Some(UpstreamEvent::ToolsChanged) = events.recv().await {
            let Some(inner) = gateway.upgrade() else { break };
            let this = Self(inner);
            if let Err(error) = this.sync_tools(server).await {
                tracing::warn!(%error, "re-listing the upstream's tools failed");
                continue;
            }
            this.notify_tools_changed().await;
        }
    }

    /// Tells the client its tool list changed, once it is initialized.
    pub(in crate::agents::mcp) async fn notify_tools_changed(&self) {
        let mut ready = self.0.ready.subscribe();
        let _ = ready.wait_for(|ready| *ready).await;
        let client = lock(&self.0.client).clone();
        if let Some(client) = client {
            let _ = client.notify_tool_list_changed().await;
        }
    }
}
