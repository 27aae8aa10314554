//! `tether web pair|devices|revoke`: the devices that answer a running
//! `tether serve --web`, through its socket.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use super::EXIT_BAD_INPUT;
use crate::agents::link::socket;
use crate::cli::WebAction;
use crate::web::control;

pub async fn run(action: &WebAction, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (socket, method, params) = match action {
        WebAction::Pair { socket, code } => {
            let code = match code {
                Some(code) => code.clone(),
                None => ask_code(out)?,
            };
            (socket, "web/pair", json!({"code": code}))
        }
        WebAction::Devices { socket } => (socket, "web/devices", json!({})),
        WebAction::Revoke { name, socket } => (socket, "web/revoke", json!({"name": name})),
    };
    let socket = socket.clone().unwrap_or_else(socket::default_path);
    let result = match control::call(&socket, method, params).await {
        Ok(Ok(result)) => result,
        Ok(Err(message)) => {
            writeln!(out, "tether web: {}", crate::sanitize::escape(&message))?;
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(error) => {
            writeln!(out, "tether web: {error:#}")?;
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    match action {
        WebAction::Pair { .. } => {
            let url = result["url"].as_str().unwrap_or_default();
            writeln!(out, "{}", crate::web::qr_code(url))?;
            writeln!(out, "{}", crate::sanitize::escape(url))?;
            writeln!(
                out,
                "Open it on the phone or browser to pair (once, within 2 minutes); it asks for the device's name."
            )?;
        }
        WebAction::Devices { .. } => {
            let devices = result["devices"].as_array().cloned().unwrap_or_default();
            if devices.is_empty() {
                writeln!(out, "no device is paired (`tether web pair` pairs one)")?;
            }
            for device in devices {
                let name = device["name"].as_str().unwrap_or_default();
                let age = crate::web::now_ms().saturating_sub(device["paired_at_ms"].as_u64().unwrap_or(0)) / 1000;
                writeln!(
                    out,
                    "{}\tpaired {} min ago\tanswers as human@{}",
                    crate::sanitize::escape(name),
                    age / 60,
                    crate::sanitize::escape(device["answerer"].as_str().unwrap_or_default())
                )?;
            }
        }
        WebAction::Revoke { name, .. } => {
            writeln!(
                out,
                "revoked {}: its next request is refused",
                crate::sanitize::escape(name)
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks for the console's code on the terminal.
fn ask_code(out: &mut dyn Write) -> anyhow::Result<String> {
    write!(
        out,
        "code (shown in the header of the serving console; headless: its stderr): "
    )?;
    out.flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).context("reading the code")?;
    Ok(line.trim().to_owned())
}
