//! Held tools: a pinned tool whose server now defines it differently is
//! held until the human approves the new definition — in the console, which
//! sends `mcp/approve` over the link, or with `tether mcp pins --approve`,
//! which writes the pin file this gateway reads again at each held call.
//! Either way the tool is then released without restarting anything: listed
//! to the client as it is now, registered anew in the console (whose scope
//! tree drops the ⚠) and in the embedded engine.

use std::sync::{Arc, Weak};

use futures::FutureExt as _;
use serde_json::{Value, json};

use super::console::{Approval, Approve};
use super::gateway::Listed;
use super::gateway::{Gateway, Inner, lock};
use super::pins::{self, PinFile};

impl Gateway {
    /// Whether a tool is held now: the pin file is read again first, and a
    /// tool whose new definition was approved there since is released.
    pub(super) async fn held(&self, server: usize, name: &str) -> bool {
        let Some(listed) = self.with_listed(server, name, |l| l.held.then(|| l.clone())).flatten() else {
            return false;
        };
        let approved = PinFile::load(&self.0.options.servers[server].pins)
            .ok()
            .and_then(|pins| pins.tools.get(name).map(|p| p.definition.clone()));
        match approved {
            // Boxed: rare, and large enough to double every call's future.
            Some(approved) if pins::approves(&approved, &pins::definition(&listed.tool)) => {
                !Box::pin(self.release(server, name, &approved)).await
            }
            _ => true,
        }
    }

    /// What `read` takes from `server`'s listed tool `name`, when it lists one.
    pub(super) fn with_listed<R>(&self, server: usize, name: &str, read: impl FnOnce(&Listed) -> R) -> Option<R> {
        lock(&self.0.tools)
            .iter()
            .find(|l| l.server == server && *l.tool.name == *name)
            .map(read)
    }

    /// Shows and registers a held tool as its server defines it now, if
    /// that is still `approved` (a re-list may have changed it since it was
    /// compared); whether it was released.
    async fn release(&self, server: usize, name: &str, approved: &Value) -> bool {
        let shown_name = self.shown_name(server, name);
        let released = {
            let mut tools = lock(&self.0.tools);
            let found = tools.iter_mut().find(|l| l.server == server && *l.tool.name == *name);
            let Some(l) = found.filter(|l| pins::approves(approved, &pins::definition(&l.tool))) else {
                return false;
            };
            l.held = false;
            l.pinned = true;
            l.approved = None;
            l.shown = l.tool.clone();
            l.shown.name = shown_name.into();
            l.clone()
        };
        tracing::info!(tool = %name, "new definition approved; released");
        self.publish(server, &[], std::slice::from_ref(&released)).await;
        let gateway = self.clone();
        // The client may be waiting on this very gateway; it hears of the
        // change without the approval waiting for it.
        tokio::spawn(async move { gateway.notify_tools_changed().await });
        true
    }

    /// Answers the console's `mcp/approve`.
    pub(super) fn approver(&self) -> Approve {
        let weak: Weak<Inner> = Arc::downgrade(&self.0);
        Arc::new(move |approval: Approval| {
            let weak = weak.clone();
            async move {
                let inner = weak.upgrade().ok_or("the gateway is shutting down")?;
                Gateway(inner).approve(&approval).await
            }
            .boxed()
        })
    }

    /// The human approved, in the console, the new definition of a held
    /// tool that the approval carries. The console never writes the pin file
    /// itself: the path would come from this gateway, an agent it must not
    /// trust with where it writes, and this gateway may see another state
    /// directory than the console does (clients such as Codex pass MCP
    /// servers a reduced environment). So the approval comes here, and this
    /// gateway, which wrote the pin, pins exactly the definition the human
    /// was shown — only if its name is that definition's SHA-256 and its
    /// server still defines the tool with those very bytes.
    ///
    /// # Errors
    /// What the console shows the human when nothing was approved.
    pub(super) async fn approve(&self, approval: &Approval) -> Result<Value, String> {
        let Approval {
            server,
            tool,
            hash,
            definition,
        } = approval;
        let index = (self.0.options.servers.iter())
            .position(|s| s.server.name == *server)
            .ok_or_else(|| format!("this gateway has no server {server:?}"))?;
        let listed = self
            .with_listed(index, tool, Listed::clone)
            .ok_or_else(|| format!("{server:?} lists no tool {tool:?} any more"))?;
        if !listed.held {
            return Err(format!("{tool:?} is not held (approved already?)"));
        }
        if definition.is_null() {
            return Err(
                "the approval carries no definition (a console older than this gateway?); nothing was approved".into(),
            );
        }
        let shown = pins::canonical(definition);
        if pins::hash(&shown) != *hash {
            return Err(format!(
                "the approval names {hash} but carries another definition; nothing was approved"
            ));
        }
        if shown != pins::definition(&listed.tool) {
            return Err(format!(
                "{tool:?} changed again since the console showed it; nothing was approved: review it again"
            ));
        }
        let path = &self.0.options.servers[index].pins;
        let mut file = PinFile::load(path).map_err(|e| format!("{e:#}"))?;
        file.accept(tool, &shown);
        file.save(path).map_err(|e| format!("{e:#}"))?;
        if !self.release(index, tool, &shown).await {
            return Err(format!(
                "{tool:?} changed again while it was approved; its pin holds what was shown, and the new definition stays held"
            ));
        }
        Ok(json!({"approved": tool, "server": server, "hash": hash}))
    }
}
