//! A request as the page shows it, and the small things the page draws
//! with: the time now, a link's QR code.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::binding::{self, Binding};
use crate::session::events::ApprovalPrompt;

/// `url` as a QR code for a terminal, two rows of modules a line (light
/// modules drawn, for a dark background).
pub fn qr_code(url: &str) -> String {
    match qrcode::QrCode::new(url.as_bytes()) {
        Ok(code) => code
            .render::<qrcode::render::unicode::Dense1x2>()
            .dark_color(qrcode::render::unicode::Dense1x2::Light)
            .light_color(qrcode::render::unicode::Dense1x2::Dark)
            .quiet_zone(true)
            .build(),
        Err(error) => format!("(no QR code: {error})"),
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A request as the page shows it: what the terminal shows, plus the
/// digest and deadline its answers are bound to (fixed when it arrived).
#[derive(Clone, Debug)]
pub struct Shown {
    pub prompt: ApprovalPrompt,
    pub digest: String,
    pub deadline_ms: u64,
    /// It was reminded (`--remind-after`, or a quarter of its time left):
    /// the page marks it, as every screen rings for it.
    pub reminded: bool,
}

impl Shown {
    pub(super) fn of(prompt: ApprovalPrompt) -> Self {
        let left = prompt.deadline.saturating_duration_since(Instant::now());
        let deadline_ms = now_ms().saturating_add(u64::try_from(left.as_millis()).unwrap_or(u64::MAX));
        Self {
            digest: binding::digest(&prompt.arguments),
            deadline_ms,
            reminded: false,
            prompt,
        }
    }

    /// Its binding, as a form carries it for `device`.
    pub fn binding(&self) -> Binding {
        Binding {
            prompt: self.prompt.id,
            execution: self.prompt.key.0.get(),
            digest: self.digest.clone(),
            deadline_ms: self.deadline_ms,
        }
    }
}
