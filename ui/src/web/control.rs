//! `tether web pair|devices|revoke` reach the running console on a socket
//! beside its others (`SOCKET.web`, 0600, this user only). Pairing asks for
//! the console's one-time code (the attach code its header shows, stderr
//! when headless): agents run as the same user and can reach the socket,
//! but cannot read the human's screen, so no agent can pair a device and
//! answer its own calls.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use super::Web;
use crate::tui::remote::AttachDoor;

/// How long a connection has to say what it wants.
const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

/// Where `tether web` finds the console serving on `socket`.
pub fn control_path(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".web");
    PathBuf::from(name)
}

/// Answers `tether web` until `stop`.
pub async fn serve(listener: UnixListener, web: Arc<Web>, door: Arc<AttachDoor>, stop: CancellationToken) {
    let ours = crate::agents::link::socket::our_uid();
    loop {
        let stream = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "accepting a `tether web` connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        match stream.peer_cred() {
            Ok(cred) if crate::agents::link::socket::peer_allowed(cred.uid(), ours) => {}
            _ => continue,
        }
        let (web, door) = (Arc::clone(&web), Arc::clone(&door));
        tokio::spawn(async move {
            if let Err(error) = answer(stream, &web, &door).await {
                tracing::info!(%error, "a `tether web` request ended");
            }
        });
    }
}

async fn answer(stream: UnixStream, web: &Web, door: &AttachDoor) -> anyhow::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let line = tokio::time::timeout(REQUEST_DEADLINE, lines.next_line())
        .await
        .map_err(|_| anyhow::anyhow!("no request within 30 s"))??
        .unwrap_or_default();
    let request: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let params = &request["params"];
    let result: Result<Value, String> = match request["method"].as_str() {
        Some("web/pair") => {
            let code = params["code"].as_str().unwrap_or_default().trim();
            match door.check(code).await {
                Err(refusal) => Err(refusal.to_string().replace("attach code", "code")),
                Ok(()) => match web.pairing_link() {
                    Ok(url) => Ok(json!({"url": url, "expires_in_s": 120})),
                    Err(error) => Err(format!("no pairing link could be drawn: {error}")),
                },
            }
        }
        Some("web/devices") => Ok(json!({"devices": web.devices.list().iter().map(|d| json!({
            "name": &*d.name, "answerer": &*d.answerer(), "paired_at_ms": d.paired_at_ms,
        })).collect::<Vec<_>>()})),
        Some("web/revoke") => {
            let name = params["name"].as_str().unwrap_or_default();
            if web.revoke(name, "tether web revoke") {
                Ok(json!({"revoked": name}))
            } else {
                Err(format!(
                    "no device is paired as {:?} (`tether web devices` lists them)",
                    crate::sanitize::escape(name)
                ))
            }
        }
        _ => Err("expected web/pair {code}, web/devices or web/revoke {name}".to_owned()),
    };
    let reply = match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(message) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": message}}),
    };
    write.write_all(format!("{reply}\n").as_bytes()).await?;
    write.shutdown().await?;
    Ok(())
}

/// Asks the console serving on `socket`: its result, or its error's message.
pub async fn call(socket: &Path, method: &str, params: Value) -> anyhow::Result<Result<Value, String>> {
    let path = control_path(socket);
    let stream = UnixStream::connect(&path).await.with_context(|| {
        format!(
            "no console with a web page at {} (start one with `tether serve --web`, and the same --socket if you gave one)",
            socket.display()
        )
    })?;
    let (read, mut write) = stream.into_split();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    write.write_all(format!("{request}\n").as_bytes()).await?;
    let line = BufReader::new(read).lines().next_line().await?.unwrap_or_default();
    let reply: Value = serde_json::from_str(&line).context("the console's answer is not JSON")?;
    Ok(match reply["error"]["message"].as_str() {
        Some(message) => Err(message.to_owned()),
        None => Ok(reply["result"].clone()),
    })
}
