//! The paired devices, and the one-time links that pair them. Only hashes
//! are kept: a link's and a device cookie's SHA-256, never the secret, so a
//! copy of this state (a core dump, a log) pairs nothing and answers nothing.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::tui::remote::Slowdown;

/// How long a pairing link can be used.
pub const LINK_LIFETIME: Duration = Duration::from_secs(120);

/// The most characters of a device's name.
pub const NAME_MAX: usize = 32;

/// A paired phone or browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Never reused in this console: a MAC made for one device is no
    /// good for another, even one paired later under the same name.
    pub id: u64,
    pub name: Arc<str>,
    /// When it was paired (milliseconds since the Unix epoch).
    pub paired_at_ms: u64,
    cookie: [u8; 32],
}

impl Device {
    /// Who answers from it, as every screen and the journal name it.
    pub fn answerer(&self) -> Arc<str> {
        Arc::from(format!("web:{}", self.name))
    }
}

/// Why a pairing was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum PairRefusal {
    /// Not a link of this console, used already, or expired; the answer
    /// waited `waited`.
    BadLink { waited: Duration },
    /// The name is empty, too long, holds characters other than letters,
    /// digits, ` `, `-`, `_`, `.`, or is taken.
    BadName(String),
}

impl std::fmt::Display for PairRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PairRefusal::BadLink { waited } => write!(
                f,
                "this pairing link is not valid: it was used already, it expired (a link lasts 2 minutes), or it \
                 was never made. Run `tether web pair` for a new one. (This answer waited {} s; each wrong link in \
                 a row waits longer.)",
                waited.as_secs()
            ),
            PairRefusal::BadName(why) => write!(f, "{why}"),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// Hashes of the links not used yet, with when each expires.
    links: Vec<([u8; 32], tokio::time::Instant)>,
    devices: Vec<Device>,
    next_id: u64,
}

/// The devices paired with this console, and the links that pair more.
#[derive(Debug, Default)]
pub struct Devices {
    state: Mutex<State>,
    /// Every secret the page is given — a pairing link, a device's cookie —
    /// is checked one at a time, and a wrong one is answered late, as a
    /// wrong attach code is; wrong ones of both kinds count in one row.
    slowdown: Slowdown,
}

/// 32 bytes from the system's random source, as 64 hex digits.
pub fn secret() -> std::io::Result<([u8; 32], String)> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok((bytes, hex(&bytes)))
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// The name a device is paired under, when it is one: 1 to 32 letters,
/// digits, spaces, `-`, `_` or `.`, trimmed.
pub fn device_name(given: &str) -> Result<String, PairRefusal> {
    let name = given.trim();
    let fits = |c: char| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.');
    if name.is_empty() || name.chars().count() > NAME_MAX || !name.chars().all(fits) {
        return Err(PairRefusal::BadName(format!(
            "a device name is 1 to {NAME_MAX} letters, digits, spaces, '-', '_' or '.'"
        )));
    }
    Ok(name.to_owned())
}

impl Devices {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new one-time link's secret (256 bits), valid [`LINK_LIFETIME`].
    pub fn new_link(&self) -> std::io::Result<String> {
        let (_, token) = secret()?;
        let now = tokio::time::Instant::now();
        let mut state = self.lock();
        state.links.retain(|(_, expires)| *expires > now);
        state.links.push((hash(&token), now + LINK_LIFETIME));
        Ok(token)
    }

    /// Whether `token` is a link that can still pair, without using it up
    /// (a chat app's preview opening the link pairs nothing). A wrong one
    /// is answered late, as a wrong attach code is.
    pub async fn check_link(&self, token: &str) -> Result<(), PairRefusal> {
        let turn = self.slowdown.turn().await;
        let now = tokio::time::Instant::now();
        let wanted = hash(token);
        if self
            .lock()
            .links
            .iter()
            .any(|(h, expires)| *h == wanted && *expires > now)
        {
            return Ok(());
        }
        let waited = turn.wrong().wait_out().await;
        Err(PairRefusal::BadLink { waited })
    }

    /// Pairs a device named `name` with the link `token`, using the link
    /// up: the device and its cookie's secret (sent once, kept hashed).
    pub async fn pair(&self, token: &str, name: &str) -> Result<(Device, String), PairRefusal> {
        let name = device_name(name)?;
        let turn = self.slowdown.turn().await;
        let (_, cookie) = secret().map_err(|e| PairRefusal::BadName(format!("no secret could be drawn: {e}")))?;
        let paired = {
            let mut state = self.lock();
            let now = tokio::time::Instant::now();
            let wanted = hash(token);
            match state
                .links
                .iter()
                .position(|(h, expires)| *h == wanted && *expires > now)
            {
                Some(_) if state.devices.iter().any(|d| *d.name == *name) => {
                    return Err(PairRefusal::BadName(format!(
                        "a device is already paired as {name:?}: choose another name (or revoke it with `tether web revoke`)"
                    )));
                }
                Some(at) => {
                    state.links.remove(at);
                    state.next_id += 1;
                    let device = Device {
                        id: state.next_id,
                        name: Arc::from(name),
                        paired_at_ms: super::now_ms(),
                        cookie: hash(&cookie),
                    };
                    state.devices.push(device.clone());
                    Some(device)
                }
                None => None,
            }
        };
        match paired {
            Some(device) => {
                turn.right();
                Ok((device, cookie))
            }
            None => Err(PairRefusal::BadLink {
                waited: turn.wrong().wait_out().await,
            }),
        }
    }

    /// The device whose cookie holds `secret`, while it is paired. A right
    /// one is answered at once and waits for nobody's turn, so an answer is
    /// never held up behind someone's guesses (its 256 bits are what
    /// guard it); a wrong one (forged, or of a revoked device) is counted
    /// with the wrong links and answered late, one at a time.
    pub async fn device(&self, secret: &str) -> Option<Device> {
        let wanted = hash(secret);
        let found = self.lock().devices.iter().find(|d| d.cookie == wanted).cloned();
        if found.is_none() {
            self.slowdown.turn().await.wrong().wait_out().await;
        }
        found
    }

    /// Whether the device `id` is still paired.
    pub fn is_paired(&self, id: u64) -> bool {
        self.lock().devices.iter().any(|d| d.id == id)
    }

    /// The paired devices, oldest first.
    pub fn list(&self) -> Vec<Device> {
        self.lock().devices.clone()
    }

    /// Unpairs the device named `name`: its cookie is refused from now on.
    pub fn revoke(&self, name: &str) -> Option<Device> {
        let mut state = self.lock();
        let at = state.devices.iter().position(|d| *d.name == *name.trim())?;
        Some(state.devices.remove(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_link_pairs_once_and_only_for_two_minutes() {
        let devices = Devices::default();
        let link = devices.new_link().unwrap_or_default();
        assert_eq!(link.len(), 64, "256 bits");
        assert_eq!(devices.check_link(&link).await, Ok(()), "looking does not use it up");
        let (phone, cookie) = devices.pair(&link, " phone ").await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&*phone.name, "phone");
        assert_eq!(devices.device(&cookie).await, Some(phone.clone()));
        assert_eq!(phone.answerer().as_ref(), "web:phone");
        let started = tokio::time::Instant::now();
        assert!(matches!(
            devices.pair(&link, "tablet").await,
            Err(PairRefusal::BadLink { .. })
        ));
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(1),
            "a used link is answered late"
        );
        let late = devices.new_link().unwrap_or_default();
        tokio::time::sleep(LINK_LIFETIME + Duration::from_secs(1)).await;
        let started = tokio::time::Instant::now();
        assert!(devices.check_link(&late).await.is_err(), "expired");
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(2),
            "each wrong one in a row waits longer"
        );
        assert_eq!(devices.list().len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_revoked_device_is_refused_from_its_next_request_and_a_taken_name_is_refused() {
        let devices = Devices::default();
        let link = devices.new_link().unwrap_or_default();
        let (phone, cookie) = devices.pair(&link, "phone").await.unwrap_or_else(|e| panic!("{e}"));
        let again = devices.new_link().unwrap_or_default();
        assert!(matches!(
            devices.pair(&again, "phone").await,
            Err(PairRefusal::BadName(_))
        ));
        assert!(matches!(
            devices.pair(&again, "<script>").await,
            Err(PairRefusal::BadName(_))
        ));
        assert_eq!(devices.revoke("phone").map(|d| d.id), Some(phone.id));
        let started = tokio::time::Instant::now();
        assert_eq!(devices.device(&cookie).await, None);
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(1),
            "a wrong cookie like any other"
        );
        assert!(!devices.is_paired(phone.id));
        let (tablet, _) = devices.pair(&again, "phone").await.unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(tablet.id, phone.id, "ids are never reused");
    }

    #[tokio::test(start_paused = true)]
    async fn wrong_cookies_count_with_wrong_links_and_a_right_cookie_waits_for_none_of_them() {
        let devices = std::sync::Arc::new(Devices::default());
        let link = devices.new_link().unwrap_or_default();
        let (phone, cookie) = devices.pair(&link, "phone").await.unwrap_or_else(|e| panic!("{e}"));
        let started = tokio::time::Instant::now();
        assert!(devices.check_link(&"0".repeat(64)).await.is_err());
        assert_eq!(devices.device(&"0".repeat(64)).await, None);
        assert_eq!(devices.device("").await, None, "an empty cookie is a wrong one too");
        assert_eq!(started.elapsed(), Duration::from_secs(1 + 2 + 4), "one row, each later");
        // A guess in its wait holds the turn; the paired phone still answers at once.
        let guessing = {
            let devices = std::sync::Arc::clone(&devices);
            tokio::spawn(async move { devices.device(&"1".repeat(64)).await })
        };
        tokio::task::yield_now().await;
        let started = tokio::time::Instant::now();
        assert_eq!(devices.device(&cookie).await, Some(phone));
        assert_eq!(started.elapsed(), Duration::ZERO);
        assert_eq!(guessing.await.ok().flatten(), None);
        assert_eq!(started.elapsed(), Duration::from_secs(8));
    }
}
