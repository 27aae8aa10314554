//! An upstream's messages in the order it sent them. rmcp hands each
//! notification to its own task and each response straight to the waiting
//! request, so a server's last `notifications/progress` could reach the
//! client after the result it was about (about one run in five). Here the
//! notifications the gateway forwards are taken off the upstream's transport
//! as they arrive and forwarded by one task, one after the other, each
//! written to the client before the next; and any other message (a response,
//! an error, a server request) is handed on only once every notification
//! before it has been.

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::RxJsonRpcMessage;
use rmcp::transport::Transport;
use tokio::sync::{mpsc, watch};

use super::Handler;

/// Whether the gateway forwards a notification itself (the others are
/// rmcp's: cancellation, subscriptions, tasks, custom ones).
fn forwarded(notification: &ServerNotification) -> bool {
    matches!(
        notification,
        ServerNotification::ProgressNotification(_)
            | ServerNotification::LoggingMessageNotification(_)
            | ServerNotification::ResourceUpdatedNotification(_)
            | ServerNotification::ResourceListChangedNotification(_)
            | ServerNotification::ToolListChangedNotification(_)
            | ServerNotification::PromptListChangedNotification(_)
    )
}

/// An upstream transport whose forwarded notifications go to one task, in
/// order, ahead of whatever the server sent after them.
pub struct Ordered<T> {
    inner: T,
    forward: mpsc::UnboundedSender<ServerNotification>,
    /// How many notifications went to the forwarding task.
    queued: u64,
    /// How many it has forwarded.
    forwarded: watch::Receiver<u64>,
    /// A message waiting for the notifications before it (kept here, not in
    /// the future, because rmcp drops a pending `receive` whenever it has
    /// something else to do).
    waiting: Option<RxJsonRpcMessage<RoleClient>>,
}

impl<T> Ordered<T> {
    /// Wraps `inner` and starts the task that forwards through `handler`.
    pub fn new(inner: T, handler: Handler) -> Self {
        let (forward, mut notifications) = mpsc::unbounded_channel();
        let (done, forwarded) = watch::channel(0_u64);
        tokio::spawn(async move {
            let mut count = 0_u64;
            while let Some(notification) = notifications.recv().await {
                if handler.client_is_ready() {
                    handler.forward(notification).await;
                } else {
                    // Before the client's `initialized` nothing reaches it, and
                    // the gateway's own `initialize` is waiting on this upstream.
                    let handler = handler.clone();
                    tokio::spawn(async move { handler.forward(notification).await });
                }
                count += 1;
                done.send_replace(count);
            }
        });
        Self {
            inner,
            forward,
            queued: 0,
            forwarded,
            waiting: None,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Ordered<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if self.waiting.is_some() {
                let queued = self.queued;
                // A forwarding task that is gone has nothing left to order.
                let _ = self.forwarded.wait_for(|done| *done >= queued).await;
                return self.waiting.take();
            }
            match self.inner.receive().await? {
                JsonRpcMessage::Notification(n) if forwarded(&n.notification) => {
                    if self.forward.send(n.notification).is_ok() {
                        self.queued += 1;
                    }
                }
                other => self.waiting = Some(other),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
